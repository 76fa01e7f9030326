package recall

import (
	"strings"
	"time"

	"github.com/memdir/memdir"
)

// Manifest formats scanned headers as Claude Code's formatMemoryManifest does,
// one line each:
//
//   - [type] path (2026-03-05T10:00:00.000Z): description
//
// The type tag and the description are left out when absent. Every line
// ends with a newline; no headers give "".
func Manifest(headers []memdir.Header) string {
	var b strings.Builder
	for _, h := range headers {
		b.WriteString(ManifestLine(h))
		b.WriteByte('\n')
	}
	return b.String()
}

// ManifestLine formats one header as a manifest line.
func ManifestLine(h memdir.Header) string {
	var b strings.Builder
	b.WriteString("- ")
	if h.Type != "" {
		b.WriteString("[" + string(h.Type) + "] ")
	}
	b.WriteString(h.Path)
	b.WriteString(" (" + ISOTime(h.ModTime) + ")")
	if h.Description != "" {
		b.WriteString(": " + h.Description)
	}
	return b.String()
}

// ISOTime formats t as JavaScript's Date.toISOString does: UTC with
// milliseconds, e.g. 2026-03-05T10:00:00.000Z.
func ISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
