package recall

import (
	"fmt"
	"strings"

	"github.com/memdir/memdir/internal/mdtext"
)

// MaxContextChars is the most text a hook may give the model as additional
// context: Claude Code's cap, in JavaScript string length (UTF-16 code
// units). Longer text is moved to a file and the model sees a preview, so
// the injection keeps under it.
const MaxContextChars = 10000

// InjectOptions say how recalled memories are given to a model. The zero
// value, or nil, builds hook context within MaxContextChars.
type InjectOptions struct {
	// MaxChars caps the text in UTF-16 code units: 0 means MaxContextChars,
	// a negative value no cap.
	MaxChars int
	// Reminders gives each memory as a system reminder of its own (see
	// Recalled.Render), as a tool result carries them; otherwise the text
	// is hook context: a line saying what follows, then each memory's
	// header and content, separated by blank lines.
	Reminders bool
}

// Injection is what is given to a model of one recall's memories.
type Injection struct {
	// Text is what the model reads; "" when no memory fits.
	Text string
	// Included says, for each of the result's memories, whether it is in
	// Text: a memory too long for the room left is skipped, not cut, and a
	// later, shorter one may still go in.
	Included []bool
	// Paths and AbsPaths are the included memories, and Bytes the size of
	// their content: what a session records as surfaced.
	Paths, AbsPaths []string
	Bytes           int
}

// Inject builds what is given to a model of the memories res recalled from
// the memory directory dir. It is the one place this text is made: the
// hooks of every agent, the MCP server's recall tool and the web UI's
// preview all call it, so what the preview shows is what a hook injects.
func Inject(dir string, res *Result, opts *InjectOptions) *Injection {
	var o InjectOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxChars == 0 {
		o.MaxChars = MaxContextChars
	}
	parts := make([]string, len(res.Memories))
	header := ""
	for i, m := range res.Memories {
		if o.Reminders {
			parts[i] = m.Render()
		} else {
			parts[i] = m.Header + "\n\n" + m.Content
		}
	}
	if !o.Reminders {
		header = fmt.Sprintf("Memories saved in earlier conversations that may be relevant to this prompt, recalled by memdir from %s. Each starts with its file's path and age.", dir)
	}
	sep := "\n\n"
	if o.Reminders {
		sep = ""
	}
	in := &Injection{}
	in.Text, in.Included = fit(o.MaxChars, header, sep, parts)
	for i, m := range res.Memories {
		if in.Included[i] {
			in.Paths = append(in.Paths, m.Path)
			in.AbsPaths = append(in.AbsPaths, m.AbsPath)
			in.Bytes += len(m.Content)
		}
	}
	return in
}

// fit joins header and, in order, every part that still fits within max
// characters (no cap when max < 0), sep between them. A part too long for
// the room left is skipped, not cut. included says which parts went in;
// when none did, text is "".
func fit(max int, header, sep string, parts []string) (text string, included []bool) {
	included = make([]bool, len(parts))
	var b strings.Builder
	b.WriteString(header)
	used := mdtext.UTF16Len(header)
	any := false
	for i, p := range parts {
		s := ""
		if used > 0 {
			s = sep
		}
		n := mdtext.UTF16Len(s) + mdtext.UTF16Len(p)
		if max >= 0 && used+n > max {
			continue
		}
		b.WriteString(s)
		b.WriteString(p)
		used += n
		included[i] = true
		any = true
	}
	if !any {
		return "", included
	}
	return b.String(), included
}
