package main

import (
	"github.com/memdir/memdir"
)

// indexStatusJSON is a MEMORY.md measurement in --json output, with the
// field names 'memdir index --json' uses.
func indexStatusJSON(st memdir.IndexStatus) map[string]any {
	return map[string]any{
		"lines": st.Lines, "chars": st.Chars, "truncated": st.Truncated(),
		"line_truncated": st.LineTruncated, "char_truncated": st.CharTruncated,
	}
}
