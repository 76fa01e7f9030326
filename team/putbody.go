package team

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/memdir/memdir"
)

// DecodePutBody parses a PUT body strictly, so that what the server stores
// is exactly what the client sent, or nothing:
//
//   - the body is one JSON object whose fields are "entries" (an object of
//     strings) and "deletes" (an array of strings), each optional, each at
//     most once, spelled exactly so (encoding/json alone would accept
//     "Entries" and ignore unknown fields);
//   - every value in entries is a string (encoding/json alone stores null
//     as "");
//   - the body is valid UTF-8 and no string holds a lone surrogate escape
//     such as \ud800 (encoding/json alone replaces both with U+FFFD);
//   - no key appears twice in entries (encoding/json alone keeps the last).
//
// Errors wrap memdir.ErrInvalid and name keys only by [KeyRef].
func DecodePutBody(body []byte) (*PutBody, error) {
	if i := invalidUTF8(body); i >= 0 {
		return nil, bodyErrorf("byte %d is not valid UTF-8", i)
	}
	if i := loneSurrogate(body); i >= 0 {
		return nil, bodyErrorf("the string escape at byte %d is a lone UTF-16 surrogate, which is not text", i)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	in := &PutBody{Entries: map[string]string{}}
	if err := expectDelim(dec, '{', "the body"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		name, _ := tok.(string)
		if seen[name] {
			return nil, bodyErrorf("field %q appears twice", name)
		}
		seen[name] = true
		switch name {
		case "entries":
			if err := decodeEntries(dec, in.Entries); err != nil {
				return nil, err
			}
		case "deletes":
			if in.Deletes, err = decodeDeletes(dec); err != nil {
				return nil, err
			}
		default:
			return nil, bodyErrorf("unknown field %s; the fields are \"entries\" and \"deletes\", in lower case", fieldName(name))
		}
	}
	if err := expectDelim(dec, '}', "the body"); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bodyErrorf("data after the JSON object")
	}
	return in, nil
}

func decodeEntries(dec *json.Decoder, out map[string]string) error {
	if err := expectDelim(dec, '{', `"entries"`); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		key, _ := tok.(string)
		if _, dup := out[key]; dup {
			return bodyErrorf("entry %s appears twice in \"entries\"", KeyRef(key))
		}
		tok, err = dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		v, ok := tok.(string)
		if !ok {
			return bodyErrorf("the value of entry %s is %s, want a string", KeyRef(key), kindOfToken(tok))
		}
		out[key] = v
	}
	return expectDelim(dec, '}', `"entries"`)
}

func decodeDeletes(dec *json.Decoder) ([]string, error) {
	if err := expectDelim(dec, '[', `"deletes"`); err != nil {
		return nil, err
	}
	out := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, bodyErrorf("\"deletes\" holds %s, want only strings", kindOfToken(tok))
		}
		out = append(out, k)
	}
	return out, expectDelim(dec, ']', `"deletes"`)
}

func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		kind := map[json.Delim]string{'{': "an object", '[': "an array"}[want]
		if want == '}' || want == ']' {
			return bodyErrorf("%s does not end where it should", what)
		}
		return bodyErrorf("%s is %s, want %s", what, kindOfToken(tok), kind)
	}
	return nil
}

func kindOfToken(tok json.Token) string {
	switch t := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	}
	return "not a JSON value"
}

// fieldName quotes an unknown field name when it is short, printable
// ASCII (a misspelling worth showing), and names it by KeyRef otherwise.
func fieldName(name string) string {
	if len(name) <= 16 {
		ok := true
		for i := 0; i < len(name); i++ {
			if name[i] < 0x20 || name[i] >= 0x7f {
				ok = false
			}
		}
		if ok {
			return fmt.Sprintf("%q", name)
		}
	}
	return KeyRef(name)
}

// syntaxError describes a decoding failure without the body's text (the
// decoder's messages quote at most a character, but a position is more
// useful).
func syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return bodyErrorf("malformed JSON at byte %d", se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return bodyErrorf("malformed JSON: the body ends early")
	}
	return bodyErrorf("malformed JSON")
}

func bodyErrorf(format string, args ...any) error {
	return fmt.Errorf("request body is not the JSON object {\"entries\": {key: string, ...}}: %s: %w", fmt.Sprintf(format, args...), memdir.ErrInvalid)
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate returns the offset of the first \uXXXX escape inside a
// JSON string of b that is a UTF-16 surrogate not part of a high-low pair,
// or -1. It reads b as JSON only as far as strings and escapes go; the
// decoder checks the rest of the syntax.
func loneSurrogate(b []byte) int {
	if !bytes.Contains(b, []byte(`\u`)) {
		return -1
	}
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case '0' <= c && c <= '9':
				r = r<<4 | rune(c-'0')
			case 'a' <= c && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			r, ok := hex4(i)
			if !ok {
				i++ // a one-character escape; skip what it escapes
				continue
			}
			switch {
			case 0xd800 <= r && r <= 0xdbff:
				lo, ok := hex4(i + 6)
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return i
				}
				i += 11
			case 0xdc00 <= r && r <= 0xdfff:
				return i
			default:
				i += 5
			}
		}
	}
	return -1
}
