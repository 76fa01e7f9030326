package main

import (
	"encoding/json"
	"io"

	"github.com/memdir/memdir"
)

// writeJSON writes v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// emit prints a command's result on standard output: v as JSON (writeJSON)
// when asJSON is set, for --json, and otherwise whatever text writes to w.
func emit(env *Env, asJSON bool, v any, text func(w io.Writer) error) error {
	if asJSON {
		return writeJSON(env.Stdout, v)
	}
	return text(env.Stdout)
}

// indexStatusJSON is a MEMORY.md measurement in --json output, with the
// field names 'memdir index --json' uses.
func indexStatusJSON(st memdir.IndexStatus) map[string]any {
	return map[string]any{
		"lines": st.Lines, "chars": st.Chars, "truncated": st.Truncated(),
		"line_truncated": st.LineTruncated, "char_truncated": st.CharTruncated,
	}
}
