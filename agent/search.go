package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// skippedDirs are never searched: version-control metadata is large, binary
// and never what a memory is about.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

var errWalkLimit = errors.New("walk limit reached")
var errStopWalk = errors.New("stop walk")

// walk visits everything under base (a project-relative directory) in
// lexical order, base itself excluded, without following symbolic links and
// skipping version-control directories. enter, when set, is asked before
// descending into each directory. visit may return errStopWalk to end the
// walk early. The result says whether the walk was cut short by the entry
// limit. Entries that cannot be read are skipped.
func (p *project) walk(ctx context.Context, base string, enter func(rel string) bool, visit func(rel string, d fs.DirEntry) error) (limited bool, err error) {
	seen := 0
	err = fs.WalkDir(p.fsys, base, func(name string, d fs.DirEntry, err error) error {
		if name == base {
			return err // an unreadable base is reported; it was stat'ed already
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if seen++; seen > p.lim.walkEntries {
			return errWalkLimit
		}
		if seen%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if d.IsDir() {
			if skippedDirs[d.Name()] || (enter != nil && !enter(name)) {
				return fs.SkipDir
			}
		}
		return visit(name, d)
	})
	switch {
	case errors.Is(err, errWalkLimit):
		return true, nil
	case errors.Is(err, errStopWalk):
		return false, nil
	case err != nil:
		if cerr := ctx.Err(); cerr != nil {
			return false, cerr
		}
		return false, p.openError("walk", base, err)
	}
	return false, ctx.Err()
}

// under returns name relative to base (both project-relative).
func under(base, name string) string {
	if base == "." {
		return name
	}
	return strings.TrimPrefix(name, base+"/")
}

// glob is the glob tool.
func (p *project) glob(ctx context.Context, input []byte) (string, error) {
	a := parseArgs(ToolGlob, input, "pattern", "path")
	pattern := a.str("pattern", true)
	name := a.str("path", false)
	if a.err != nil {
		return "", a.err
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return "", fmt.Errorf("glob: the pattern %q is invalid: %v", shorten(pattern, 200), err)
	}
	base, err := p.dirArg(ToolGlob, name)
	if err != nil {
		return "", err
	}
	var found []string
	total := 0
	limited, err := p.walk(ctx, base,
		func(dir string) bool { return g.mayMatchBelow(under(base, dir)) },
		func(rel string, d fs.DirEntry) error {
			if !g.match(under(base, rel)) {
				return nil
			}
			if total++; total <= p.lim.globResults {
				if d.IsDir() {
					rel += "/"
				}
				found = append(found, rel)
			}
			return nil
		})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	where := ""
	if base != "." {
		where = " under " + base
	}
	if total == 0 {
		fmt.Fprintf(&b, "No paths match %q%s.", pattern, where)
	} else {
		fmt.Fprintf(&b, "%s %q%s (directories end in /):\n%s", plural(total, "path matches", "paths match"), pattern, where, strings.Join(found, "\n"))
	}
	if total > len(found) {
		fmt.Fprintf(&b, "\n[Only the first %d are shown; narrow the pattern or the path.]", len(found))
	}
	if limited {
		fmt.Fprintf(&b, "\n[The search stopped after %d entries; give a narrower path to see everything.]", p.lim.walkEntries)
	}
	return p.capOutput(ToolGlob, b.String()), nil
}

// dirArg resolves an optional path argument that must name a directory.
func (p *project) dirArg(tool, name string) (string, error) {
	rel, err := p.resolve(tool, "path", name)
	if err != nil {
		return "", err
	}
	fi, err := p.stat(tool, rel)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: the path %s is a file; give a directory", tool, rel)
	}
	return rel, nil
}

// grep is the grep tool.
func (p *project) grep(ctx context.Context, input []byte) (string, error) {
	a := parseArgs(ToolGrep, input, "pattern", "path", "glob", "ignore_case")
	pattern := a.str("pattern", true)
	name := a.str("path", false)
	filter := a.str("glob", false)
	fold := a.bool("ignore_case")
	if a.err != nil {
		return "", a.err
	}
	expr := pattern
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("grep: the pattern %q is not a valid regular expression (Go RE2 syntax, no lookaround or backreferences): %v", shorten(pattern, 200), err)
	}
	var g *globPattern
	if filter != "" {
		if g, err = compileGlob(filter); err != nil {
			return "", fmt.Errorf("grep: the glob filter %q is invalid: %v", shorten(filter, 200), err)
		}
	}
	rel, err := p.resolve(ToolGrep, "path", name)
	if err != nil {
		return "", err
	}
	fi, err := p.stat(ToolGrep, rel)
	if err != nil {
		return "", err
	}
	s := &grepRun{p: p, re: re}
	var limited bool
	if fi.IsDir() {
		// A filter with a slash is a path pattern below the searched
		// directory; without one it matches file names at any depth.
		keep := func(name string) bool {
			if g == nil {
				return true
			}
			if strings.Contains(filter, "/") {
				return g.match(under(rel, name))
			}
			return g.match(path.Base(name))
		}
		limited, err = p.walk(ctx, rel, nil, func(name string, d fs.DirEntry) error {
			if !d.Type().IsRegular() || !keep(name) {
				return nil
			}
			return s.file(name)
		})
		if err != nil {
			return "", err
		}
	} else {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("grep: %s is not a regular file", rel)
		}
		data, err := p.readSmall(ToolGrep, rel)
		switch {
		case err == errTooBig:
			return "", fmt.Errorf("grep: %s is over the %d-byte limit for searching", rel, p.lim.fileBytes)
		case err != nil:
			return "", err
		case isBinary(data):
			return "", fmt.Errorf("grep: %s is a binary file; only text files are searched", rel)
		}
		s.search(rel, data)
	}
	return p.capOutput(ToolGrep, s.report(pattern, rel, limited)), nil
}

// grepRun collects the matches of one grep call.
type grepRun struct {
	p      *project
	re     *regexp.Regexp
	lines  []string
	more   bool     // a match beyond the cap was seen
	tooBig []string // files not searched for their size
	unread int      // files that could not be opened
}

// file searches one file found by the walk; binary files are skipped.
func (s *grepRun) file(rel string) error {
	data, err := s.p.readSmall(ToolGrep, rel)
	switch {
	case err == errTooBig:
		s.tooBig = append(s.tooBig, rel)
		return nil
	case err != nil:
		s.unread++
		return nil
	case isBinary(data):
		return nil
	}
	return s.search(rel, data)
}

// search collects the matching lines of one file, returning errStopWalk
// once the match cap is passed.
func (s *grepRun) search(rel string, data []byte) error {
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if !s.re.Match(line) {
			continue
		}
		if len(s.lines) == s.p.lim.matches {
			s.more = true
			return errStopWalk
		}
		text := strings.ToValidUTF8(string(bytes.TrimSuffix(line, []byte("\r"))), "\uFFFD")
		if cut := cutRunes(text, s.p.lim.matchChars); cut != text {
			text = cut + " [cut]"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s:%d:%s", rel, n, text))
	}
	return nil
}

func (s *grepRun) report(pattern, rel string, limited bool) string {
	var b strings.Builder
	if len(s.lines) == 0 {
		fmt.Fprintf(&b, "No matches for %q in %s.", pattern, shown(rel))
	} else {
		b.WriteString(strings.Join(s.lines, "\n"))
	}
	if s.more {
		fmt.Fprintf(&b, "\n[Stopped at %d matches; narrow the pattern, the path or the glob filter to see the rest.]", s.p.lim.matches)
	}
	if limited {
		fmt.Fprintf(&b, "\n[The search stopped after %d entries; give a narrower path to search everything.]", s.p.lim.walkEntries)
	}
	if len(s.tooBig) > 0 {
		fmt.Fprintf(&b, "\n[Not searched, over %d bytes: %s.]", s.p.lim.fileBytes, strings.Join(s.tooBig[:min(len(s.tooBig), 10)], ", "))
	}
	if s.unread > 0 {
		fmt.Fprintf(&b, "\n[%s.]", plural(s.unread, "file could not be read and was skipped", "files could not be read and were skipped"))
	}
	return b.String()
}

// capOutput cuts a tool result at the output limit, on a line boundary,
// saying so.
func (p *project) capOutput(tool, s string) string {
	if len(s) <= p.lim.outputChars {
		return s
	}
	cut := s[:p.lim.outputChars]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + fmt.Sprintf("\n[The %s result was cut at %d characters; narrow the request.]", tool, p.lim.outputChars)
}
