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

// indexStatusJSON is a MEMORY.md measurement in --json output, with the
// field names 'memdir index --json' uses.
func indexStatusJSON(st memdir.IndexStatus) map[string]any {
	return map[string]any{
		"lines": st.Lines, "chars": st.Chars, "truncated": st.Truncated(),
		"line_truncated": st.LineTruncated, "char_truncated": st.CharTruncated,
	}
}
