package hooks

import (
	"encoding/json"
	"io"
	"strings"
	"unicode/utf16"

	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/recall"
)

// MaxContextChars is Claude Code's cap on additionalContext, systemMessage
// and plain hook output, in JavaScript string length (UTF-16 code units).
// Longer text is written to a file and the model gets only a preview, so
// memdir keeps under it. Recall's injection builds hook context within it.
const MaxContextChars = recall.MaxContextChars

// Output is a hook's JSON answer, written to standard output with exit 0.
// Only the fields memdir uses are declared.
type Output struct {
	// SystemMessage is shown to the user, not to the model.
	SystemMessage string `json:"systemMessage,omitempty"`
	// HookSpecificOutput carries additionalContext for the model.
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput is the event-specific part of an Output.
type SpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// WithContext returns an Output giving the model text as additional context
// for event.
func WithContext(event, text string) *Output {
	return &Output{HookSpecificOutput: &SpecificOutput{HookEventName: event, AdditionalContext: text}}
}

// Empty reports whether there is nothing to say, in which case a hook
// prints nothing at all.
func (o *Output) Empty() bool {
	return o == nil || o.SystemMessage == "" && (o.HookSpecificOutput == nil || o.HookSpecificOutput.AdditionalContext == "")
}

// Write writes the Output as one line of JSON, or nothing when it is empty.
func (o *Output) Write(w io.Writer) error {
	if o.Empty() {
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(o)
}

// Len returns the length of s as Claude Code measures it: UTF-16 code units.
func Len(s string) int { return mdtext.UTF16Len(s) }

// Truncate cuts s to at most max characters (see Len) at the end of a line,
// and appends note on a line of its own when it had to cut; the note counts
// towards max. cut reports whether it did. A first line longer than max is
// cut inside the line, at a rune boundary.
func Truncate(s string, max int, note string) (out string, cut bool) {
	if Len(s) <= max {
		return s, false
	}
	room := max - Len(note) - 1
	if room <= 0 {
		return "", true
	}
	end, used := len(s), 0
	for i, r := range s {
		used += utf16.RuneLen(r)
		if used > room {
			end = i
			break
		}
	}
	head := s[:end]
	if nl := strings.LastIndexByte(head, '\n'); nl > 0 {
		head = head[:nl]
	}
	return head + "\n" + note, true
}
