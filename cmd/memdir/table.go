package main

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// displayWidth is the number of terminal cells s takes: two for East Asian
// wide and fullwidth characters (CJK, most emoji), none for combining marks
// and zero-width characters, one otherwise. text/tabwriter counts runes,
// which misaligns columns holding CJK text.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' || (r >= '\ufe00' && r <= '\ufe0f'):
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc):
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				n += 2
			default:
				n++
			}
		}
	}
	return n
}

// writeTable writes rows as columns separated by two spaces, each padded to
// its widest cell in terminal cells; the last column is not padded.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, row := range rows {
		for i, cell := range row[:max(len(row)-1, 0)] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
