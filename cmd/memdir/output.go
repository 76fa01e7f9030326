package main

import (
	"github.com/memdir/memdir"
)

// indexStatusJSON is a MEMORY.md measurement in --json output, with the
// field names 'memdir index --json' uses.
type indexStatusJSON struct {
	Lines         int  `json:"lines"`
	Chars         int  `json:"chars"`
	Truncated     bool `json:"truncated"`
	LineTruncated bool `json:"line_truncated"`
	CharTruncated bool `json:"char_truncated"`
}

func newIndexStatusJSON(st memdir.IndexStatus) indexStatusJSON {
	return indexStatusJSON{Lines: st.Lines, Chars: st.Chars, Truncated: st.Truncated(), LineTruncated: st.LineTruncated, CharTruncated: st.CharTruncated}
}
