package main

import (
	"io"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"

	"github.com/memdir/memdir/internal/cli"
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

// tableOptions says how writeTable lays a table out. A nil
// *tableOptions is the full text, left-aligned: piped output and files.
type tableOptions struct {
	// Width fits each line into Width terminal cells: the last column is
	// cut, at a word boundary where one is near, and ends in "…"; if
	// the other columns leave it too little room, the widest of them are
	// cut too. 0 never cuts. tableWidth gives the width for a command's
	// standard output.
	Width int
	// Right aligns the columns whose index is true to the right
	// (numbers); the others are aligned left.
	Right []bool
	// Whole marks the columns never cut to fit, such as ids to copy.
	Whole []bool
}

// minLastColumn is the room the last column keeps before other columns
// are cut to make it: a description cut shorter says too little.
const minLastColumn = 16

// minColumn is the narrowest a column other than the last is cut to.
const minColumn = 6

// tableWidth is the width tables on env's standard output fit: 0 (never
// cut) unless it is a terminal, then the terminal's width, or COLUMNS,
// or 80 when neither says.
func tableWidth(env *cli.Env) int {
	if !env.StdoutIsTerminal {
		return 0
	}
	if env.StdoutColumns > 0 {
		return env.StdoutColumns
	}
	if n, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// writeTable writes rows as columns separated by two spaces, each padded to
// its widest cell in terminal cells; the last column is not padded unless
// it is aligned right. A cell may hold several lines ("recall\n@5"), for
// headers narrower than their words: the row then takes as many lines.
// opts may be nil (see tableOptions).
func writeTable(w io.Writer, rows [][]string, opts *tableOptions) error {
	if opts == nil {
		opts = &tableOptions{}
	}
	cells := make([][][]string, len(rows)) // row, column, line
	var widths []int
	for r, row := range rows {
		cells[r] = make([][]string, len(row))
		for i, cell := range row {
			cells[r][i] = strings.Split(cell, "\n")
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			for _, l := range cells[r][i] {
				widths[i] = max(widths[i], displayWidth(l))
			}
		}
	}
	fitWidths(widths, opts.Width, opts.Whole)
	var b strings.Builder
	for _, row := range cells {
		height := 1
		for _, c := range row {
			height = max(height, len(c))
		}
		for l := range height {
			var line strings.Builder
			for i, c := range row {
				text := ""
				if l < len(c) {
					text = c[l]
				}
				text = cutToWidth(text, widths[i], i == len(row)-1)
				pad := strings.Repeat(" ", widths[i]-displayWidth(text))
				right := i < len(opts.Right) && opts.Right[i]
				switch {
				case right:
					line.WriteString(pad + text)
				case i < len(row)-1:
					line.WriteString(text + pad)
				default:
					line.WriteString(text)
				}
				if i < len(row)-1 {
					line.WriteString("  ")
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitWidths narrows the column widths so that a line with two spaces
// between columns takes at most width cells (0: no limit): the last
// column first, down to minLastColumn, then the widest of the others,
// down to minColumn, then the last again. Columns marked in whole keep
// their width.
func fitWidths(widths []int, width int, whole []bool) {
	n := len(widths)
	if width <= 0 || n == 0 {
		return
	}
	total := func() int {
		t := 2 * (n - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	last := &widths[n-1]
	if over := total() - width; over > 0 {
		*last = max(*last-over, min(*last, minLastColumn))
	}
	for total() > width {
		widest := -1
		for i := range widths[:n-1] {
			if i < len(whole) && whole[i] {
				continue
			}
			if widths[i] > minColumn && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	if over := total() - width; over > 0 {
		*last = max(*last-over, 1)
	}
}

// cutToWidth returns s cut to at most n terminal cells, ending in "…" when
// cut. In the last column (words) the cut falls after the last whole word
// when that keeps at least two thirds of the room.
func cutToWidth(s string, n int, words bool) string {
	if displayWidth(s) <= n {
		return s
	}
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "…"
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := displayWidth(string(r))
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	cut := b.String()
	if words {
		if i := strings.LastIndexByte(cut, ' '); i > 0 && displayWidth(cut[:i]) >= 2*n/3 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " ") + "…"
}
