// Package jsonx finds the JSON value in a language model's reply.
//
// Models asked for JSON often wrap it: a code fence, a sentence before it,
// a remark after it. Servers without structured output (older OpenAI-compatible
// servers, local models) make this the normal case, so the model adapters run
// every schema-constrained reply through [Extract].
package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNoJSON reports that a reply holds no complete JSON object or array.
var ErrNoJSON = errors.New("no JSON object or array")

// maxCandidates bounds the positions Extract tries, so that a hostile or
// degenerate reply ("{{{{…") costs linear time rather than quadratic.
const maxCandidates = 64

// prefixRunes is how much of the reply an error quotes.
const prefixRunes = 60

// Extract returns the first complete JSON object or array in text.
//
// A fenced code block (```json … ``` or ``` … ```) whose whole content is a
// JSON object or array wins over anything before it, because prose often
// mentions small JSON fragments ("an empty {}") before the real answer.
// Otherwise the first '{' or '[' that opens a valid JSON value is taken, and
// prose around it is ignored. The value is returned as it appears in the text,
// without re-encoding.
//
// When there is none, the error wraps [ErrNoJSON] and quotes the start of the
// text; when a value starts but never closes, it says the reply looks cut off.
func Extract(text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: the reply is empty", ErrNoJSON)
	}
	if v, ok := fenced(text); ok {
		return v, nil
	}
	tried := 0
	for i := 0; i < len(text) && tried < maxCandidates; i++ {
		c := text[i]
		if c != '{' && c != '[' {
			continue
		}
		tried++
		end, closed := matchClose(text, i)
		if !closed {
			if looksLikeJSON(text[i+1:]) {
				// A value that starts like JSON and never ends was cut off.
				// Returning a complete value nested inside it would hand the
				// caller a fragment as if it were the answer.
				return nil, fmt.Errorf("%w: a JSON value starts but never ends, so the reply looks cut off (raise max tokens?); it begins %s", ErrNoJSON, quotePrefix(text))
			}
			continue // a stray bracket in prose
		}
		if v := []byte(text[i:end]); json.Valid(v) {
			return json.RawMessage(v), nil
		}
	}
	return nil, fmt.Errorf("%w in the reply; it begins %s", ErrNoJSON, quotePrefix(text))
}

// looksLikeJSON reports whether the text after an opening bracket starts the
// way a JSON object or array does.
func looksLikeJSON(after string) bool {
	after = strings.TrimLeft(after, " \t\r\n")
	if after == "" {
		return true // the reply ends right after the bracket
	}
	switch c := after[0]; {
	case c == '"' || c == '{' || c == '[' || c == '}' || c == ']' || c == '-':
		return true
	case c >= '0' && c <= '9':
		return true
	default:
		return strings.HasPrefix(after, "true") || strings.HasPrefix(after, "false") || strings.HasPrefix(after, "null")
	}
}

// fenced returns the content of the first Markdown code fence that is a JSON
// object or array.
func fenced(text string) (json.RawMessage, bool) {
	rest := text
	for {
		start := strings.Index(rest, "```")
		if start < 0 {
			return nil, false
		}
		body := rest[start+3:]
		// The info string ("json", "JSON", "jsonc") runs to the end of the line.
		nl := strings.IndexByte(body, '\n')
		if nl < 0 {
			return nil, false
		}
		body = body[nl+1:]
		before, after, ok := strings.Cut(body, "```")
		if !ok {
			return nil, false
		}
		content := bytes.TrimSpace([]byte(before))
		if len(content) > 0 && (content[0] == '{' || content[0] == '[') && json.Valid(content) {
			return json.RawMessage(content), true
		}
		rest = after
	}
}

// matchClose returns the index just past the bracket that closes the one at
// text[start], skipping brackets inside JSON strings. closed is false when the
// text ends first.
func matchClose(text string, start int) (end int, closed bool) {
	depth := 0
	inString := false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch c {
			case '\\':
				i++ // skip the escaped character
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(text), false
}

// quotePrefix quotes the first prefixRunes runes of text, on one line.
func quotePrefix(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= prefixRunes {
		return fmt.Sprintf("%q", s)
	}
	n := 0
	for i := range s {
		if n == prefixRunes {
			return fmt.Sprintf("%q…", s[:i])
		}
		n++
	}
	return fmt.Sprintf("%q", s)
}
