// Package anchors records the project files a memory names ("code
// anchors") and tells when they changed: a path, or in a git repository an
// identifier defined in exactly one tracked file, is recorded with the
// file's content hash, size and modification time, in the memory's
// frontmatter under the key anchors (see docs/format.md). It knows nothing
// of the store: the store records anchors on save, recall and doctor check
// them.
package anchors

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Key is the frontmatter key holding a memory's code anchors. Claude
// Code reads only name, description and type, so the key is kept by it, by
// team sync (which carries files byte for byte) and by memdir's rewrites.
const Key = "anchors"

// Max bounds the anchors recorded for one memory; the value stays on
// one frontmatter line, so Claude Code's 30-line frontmatter window is never
// at risk.
const Max = 8

// maxAnchorCandidates bounds the words of a memory looked at as paths or
// identifiers, so a long memory costs no more than a short one.
const maxAnchorCandidates = 64

// Anchor is one project file a memory names, as it was when the memory was
// written.
type Anchor struct {
	// Path is the file, slash-separated, relative to the project root.
	Path string `json:"path"`
	// Line is the line the memory named (path:line) or where Symbol is
	// defined; 0 when none.
	Line int `json:"line,omitempty"`
	// Symbol is the identifier that resolved to the file, "" when the path
	// was named directly.
	Symbol string `json:"symbol,omitempty"`
	// Hash is "git:<blob id>" (the id git gives the file's content) in a git
	// repository, else "sha256:<hex>".
	Hash string `json:"hash"`
	// Size and MTime (Unix nanoseconds) let a check skip hashing a file
	// that was not touched.
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime"`
}

// String renders the anchor in its frontmatter form:
// PATH[:LINE][#SYMBOL] HASH SIZE MTIME.
func (a Anchor) String() string {
	ref := a.Path
	if a.Line > 0 {
		ref += ":" + strconv.Itoa(a.Line)
	}
	if a.Symbol != "" {
		ref += "#" + a.Symbol
	}
	return fmt.Sprintf("%s %s %d %d", ref, a.Hash, a.Size, a.MTime)
}

// Format renders anchors as the value of the anchors key.
func Format(as []Anchor) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// Parse reads the value of the anchors key. An entry that does not
// follow the format is an error naming it.
func Parse(s string) ([]Anchor, error) {
	var out []Anchor
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Fields(part)
		if len(f) != 4 {
			return nil, fmt.Errorf("anchor %q: want PATH HASH SIZE MTIME", part)
		}
		a := Anchor{Hash: f[1]}
		ref := f[0]
		if i := strings.LastIndexByte(ref, '#'); i > 0 && isIdent(ref[i+1:]) {
			a.Symbol, ref = ref[i+1:], ref[:i]
		}
		if i := strings.LastIndexByte(ref, ':'); i > 0 {
			if n, err := strconv.Atoi(ref[i+1:]); err == nil && n > 0 {
				a.Line, ref = n, ref[:i]
			}
		}
		a.Path = ref
		if !strings.HasPrefix(a.Hash, "git:") && !strings.HasPrefix(a.Hash, "sha256:") {
			return nil, fmt.Errorf("anchor %q: hash must start with \"git:\" or \"sha256:\"", part)
		}
		var err1, err2 error
		a.Size, err1 = strconv.ParseInt(f[2], 10, 64)
		a.MTime, err2 = strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || !filepath.IsLocal(filepath.FromSlash(a.Path)) {
			return nil, fmt.Errorf("anchor %q: bad path, size or mtime", part)
		}
		out = append(out, a)
	}
	return out, nil
}

// pathTokenRe is what a repository path looks like: no spaces, commas or
// '#', at least one slash or a file extension, optionally :LINE.
var (
	pathTokenRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9_.\-/]*[A-Za-z0-9_\-/]\.[A-Za-z0-9]+|[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)+)(:([0-9]+))?$`)
	})
	identTokenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// camelRe is an unquoted word that is surely an identifier: two or
	// more capitalised humps (RefreshToken, parseHTTPHeader).
	camelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*$`) })
)

func isIdent(s string) bool { return identTokenRe().MatchString(s) }

// anchorCandidates splits text into the words that may name a path or an
// identifier. Backticked spans are taken whole; other words are trimmed of
// surrounding punctuation.
func anchorCandidates(text string) (paths []pathRef, idents []string) {
	seenP, seenI := map[string]bool{}, map[string]bool{}
	addWord := func(w string, ticked bool) {
		if len(paths)+len(idents) >= maxAnchorCandidates {
			return
		}
		w = strings.Trim(w, "()[]{}<>\"',;!?*")
		w = strings.TrimRight(w, ".:")
		w = strings.TrimPrefix(w, "./")
		if w == "" {
			return
		}
		if m := pathTokenRe().FindStringSubmatch(w); m != nil && strings.ContainsAny(m[1], "/.") {
			if !seenP[w] {
				seenP[w] = true
				line, _ := strconv.Atoi(m[4])
				paths = append(paths, pathRef{m[1], line})
			}
			return
		}
		// Foo.Bar or pkg.Func: the last part is the identifier.
		if i := strings.LastIndexByte(w, '.'); i >= 0 && ticked {
			w = w[i+1:]
		}
		w = strings.TrimSuffix(w, "()")
		if isIdent(w) && len(w) >= 3 && (ticked || camelRe().MatchString(w)) && !seenI[w] {
			seenI[w] = true
			idents = append(idents, w)
		}
	}
	rest := text
	for {
		i := strings.IndexByte(rest, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i+1:], '`')
		if j < 0 {
			break
		}
		for w := range strings.FieldsSeq(rest[:i]) {
			addWord(w, false)
		}
		span := strings.TrimSpace(rest[i+1 : i+1+j])
		if !strings.ContainsAny(span, " \t") {
			addWord(span, true)
		} else {
			for w := range strings.FieldsSeq(span) {
				addWord(w, false)
			}
		}
		rest = rest[i+1+j+1:]
	}
	for w := range strings.FieldsSeq(rest) {
		addWord(w, false)
	}
	return paths, idents
}

type pathRef struct {
	path string
	line int
}

// Find finds the project files text names and records each as it is
// now. root is the project root (a git work tree or a plain directory).
//
// The rules, in order:
//   - a word (backticked or not) shaped like a path, with a slash or a file
//     extension and an optional :LINE, that names a regular file under root;
//   - in a git repository, an identifier (backticked, or an unquoted
//     CamelCase word such as RefreshToken) defined in exactly one tracked
//     file by a declaration at the start of a line, found with one
//     `git grep -n -w -E` call:
//     Go `func Name`, `func (recv) Name`, `type Name`;
//     Python `def name`, `class Name`;
//     TypeScript/JavaScript `function name`, `class Name`, `interface Name`,
//     `type Name`, each optionally after `export`, `export default` or
//     `async`.
//
// Identifiers defined in several files are ambiguous and skipped. At most
// Max files are recorded, one anchor per file.
func Find(ctx context.Context, root, text string) []Anchor {
	if root == "" {
		return nil
	}
	paths, idents := anchorCandidates(text)
	git := isGitWorkTree(root)
	var out []Anchor
	have := map[string]int{}
	add := func(rel string, line int, sym string) {
		if i, ok := have[path.Clean(rel)]; ok {
			// A file named and also found by a symbol: note the symbol.
			if out[i].Symbol == "" && sym != "" {
				out[i].Symbol = sym
				if out[i].Line == 0 {
					out[i].Line = line
				}
			}
			return
		}
		if len(out) >= Max {
			return
		}
		a, ok := recordAnchor(root, rel, git)
		if !ok {
			return
		}
		have[a.Path] = len(out)
		a.Line, a.Symbol = line, sym
		out = append(out, a)
	}
	for _, p := range paths {
		add(p.path, p.line, "")
	}
	if git && len(idents) > 0 && len(out) < Max {
		for _, d := range resolveIdents(ctx, root, idents) {
			add(d.path, d.line, d.ident)
		}
	}
	return out
}

// recordAnchor stats and hashes root/rel; ok is false when rel is not a
// regular file inside root.
func recordAnchor(root, rel string, git bool) (Anchor, bool) {
	rel = path.Clean(rel)
	native := filepath.FromSlash(rel)
	if !filepath.IsLocal(native) {
		return Anchor{}, false
	}
	abs := filepath.Join(root, native)
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return Anchor{}, false
	}
	h, err := hashAnchorFile(abs, git)
	if err != nil {
		return Anchor{}, false
	}
	return Anchor{Path: rel, Hash: h, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}, true
}

// hashAnchorFile returns the git blob id of the file's content (what
// `git hash-object` prints when no clean filter applies), or its sha256
// outside git.
func hashAnchorFile(abs string, git bool) (string, error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if git {
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", fi.Size())
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
		return "git:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func isGitWorkTree(root string) bool {
	_, err := os.Stat(filepath.Join(root, ".git"))
	return err == nil
}

// git runs git in root with a bounded time and returns its output.
func runGit(ctx context.Context, root string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	return cmd.Output()
}

type identDef struct {
	ident, path string
	line        int
}

var identLangs = []struct {
	exts []string
	decl func(name string) string
}{
	{[]string{".go"}, func(n string) string { return `^(func (\([^)]*\) )?|type )` + n + `\b` }},
	{[]string{".py"}, func(n string) string { return `^[[:space:]]*(async )?(def|class) ` + n + `\b` }},
	{[]string{".ts", ".tsx", ".js", ".jsx", ".mjs"}, func(n string) string {
		return `^[[:space:]]*(export )?(default )?(async )?(function\*?|class|interface|type) ` + n + `\b`
	}},
}

// resolveIdents finds, with one git grep, the tracked file defining each
// identifier, in the order the identifiers were given.
func resolveIdents(ctx context.Context, root string, idents []string) []identDef {
	args := []string{"grep", "-n", "-w", "-E", "-I", "--no-color"}
	for _, id := range idents {
		args = append(args, "-e", `(func|type|def|class|function|interface) .*`+id)
	}
	args = append(args, "--")
	for _, l := range identLangs {
		for _, e := range l.exts {
			args = append(args, "*"+e)
		}
	}
	out, err := runGit(ctx, root, args...)
	if err != nil || len(out) > 4<<20 {
		return nil
	}
	found := map[string][]identDef{}
	res := make([]*regexp.Regexp, len(identLangs)*len(idents))
	for li, l := range identLangs {
		for ii, id := range idents {
			res[li*len(idents)+ii] = regexp.MustCompile(l.decl(regexp.QuoteMeta(id)))
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		num, text, ok := strings.Cut(rest, ":")
		line, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		ext := path.Ext(file)
		for li, l := range identLangs {
			if !contains(l.exts, ext) {
				continue
			}
			for ii, id := range idents {
				if res[li*len(idents)+ii].MatchString(text) {
					found[id] = append(found[id], identDef{id, file, line})
				}
			}
		}
	}
	var defs []identDef
	for _, id := range idents {
		ds := found[id]
		files := map[string]bool{}
		for _, d := range ds {
			files[d.path] = true
		}
		if len(files) == 1 {
			defs = append(defs, ds[0])
		}
	}
	return defs
}

func contains(ss []string, s string) bool {
	return slices.Contains(ss, s)
}

// State is how an anchored file stands now.
type State string

// Anchor states.
const (
	Changed State = "changed" // content differs from the recorded hash
	Gone    State = "gone"    // the file no longer exists
)

// Stale is an anchor whose file changed or went away.
type Stale struct {
	Anchor
	State State `json:"state"`
	// Commits is how many commits changed the file since the recorded
	// version, -1 when unknown (no git, or the recorded version was never
	// committed).
	Commits int `json:"commits"`
	// Summary, filled by Changes only, is the line diff stat since
	// the recorded version, e.g. "+12 -3 lines".
	Summary string `json:"summary,omitempty"`
}

// Check compares anchors with the files under root: a stat first, a hash
// only when size or mtime differ, and in git a commit count only for a file
// whose hash differs.
func Check(ctx context.Context, root string, as []Anchor) []Stale {
	return (&Checker{Root: root}).check(ctx, as, false)
}

// Checker checks the anchors of many memories against one project root,
// remembering its verdict on each recorded anchor, so that memories
// anchored to the same file cost one check. The zero value with Root set
// is ready; a Checker is for one goroutine.
type Checker struct {
	Root string
	memo map[Anchor]*Stale
}

// Check is Check for the Checker's root, reusing earlier verdicts.
func (c *Checker) Check(ctx context.Context, as []Anchor) []Stale {
	return c.check(ctx, as, true)
}

func (c *Checker) check(ctx context.Context, as []Anchor, remember bool) []Stale {
	if c.Root == "" {
		return nil
	}
	if remember && c.memo == nil {
		c.memo = map[Anchor]*Stale{}
	}
	var out []Stale
	var git, gitKnown bool
	for _, a := range as {
		if remember {
			if s, ok := c.memo[a]; ok {
				if s != nil {
					out = append(out, *s)
				}
				continue
			}
			c.memo[a] = nil
		}
		n := len(out)
		out = checkOne(ctx, c.Root, a, out, &git, &gitKnown)
		if remember && len(out) > n {
			s := out[n]
			c.memo[a] = &s
		}
	}
	return out
}

func checkOne(ctx context.Context, root string, a Anchor, out []Stale, git, gitKnown *bool) []Stale {
	{
		abs := filepath.Join(root, filepath.FromSlash(a.Path))
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			return append(out, Stale{Anchor: a, State: Gone, Commits: -1})
		}
		if fi.Size() == a.Size && fi.ModTime().UnixNano() == a.MTime {
			return out
		}
		h, err := hashAnchorFile(abs, strings.HasPrefix(a.Hash, "git:"))
		if err == nil && h == a.Hash {
			return out
		}
		if !*gitKnown {
			*git, *gitKnown = isGitWorkTree(root), true
		}
		s := Stale{Anchor: a, State: Changed, Commits: -1}
		if *git && strings.HasPrefix(a.Hash, "git:") {
			s.Commits, _ = commitsSince(ctx, root, a)
		}
		return append(out, s)
	}
}

// commitsSince counts the commits (newest first, at most 500) that changed
// a.Path after the commit that recorded a.Hash, and returns that commit ("" with
// -1 when the recorded version is in none of them).
func commitsSince(ctx context.Context, root string, a Anchor) (int, string) {
	blob := strings.TrimPrefix(a.Hash, "git:")
	out, err := runGit(ctx, root, "log", "-n", "500", "--format=commit %H", "--raw", "--no-abbrev", "--no-renames", "--", a.Path)
	if err != nil {
		return -1, ""
	}
	n, commit := 0, ""
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "commit "):
			commit = strings.TrimPrefix(line, "commit ")
		case strings.HasPrefix(line, ":"):
			f := strings.Fields(line)
			if len(f) >= 4 && f[3] == blob {
				return n, commit
			}
			n++
		}
	}
	return -1, ""
}

// Changes is Check with a change summary per changed file: the
// number of lines added and removed since the commit whose version of the
// file had the recorded hash (`git diff --numstat COMMIT -- PATH`, which
// compares with the working tree). Outside git, or when the recorded version
// was never committed, the summary gives the line counts then and now.
func Changes(ctx context.Context, root string, as []Anchor) []Stale {
	st := Check(ctx, root, as)
	for i := range st {
		s := &st[i]
		if s.State == Gone {
			s.Summary = "deleted"
			continue
		}
		if strings.HasPrefix(s.Hash, "git:") {
			if n, commit := commitsSince(ctx, root, s.Anchor); n >= 0 && commit != "" {
				out, err := runGit(ctx, root, "diff", "--numstat", commit, "--", s.Path)
				if f := strings.Fields(string(out)); err == nil && len(f) >= 2 {
					s.Summary = fmt.Sprintf("+%s -%s lines in %d commit(s)", f[0], f[1], n)
					continue
				}
				s.Summary = fmt.Sprintf("%d commit(s)", n)
				continue
			}
		}
		s.Summary = fmt.Sprintf("changed since recorded; size %d → now %s bytes", s.Size, fileSize(filepath.Join(root, filepath.FromSlash(s.Path))))
	}
	return st
}

func fileSize(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "?"
	}
	return strconv.FormatInt(fi.Size(), 10)
}

// Text says, in one line for an agent, which anchored files changed or
// went away; "" when none.
func Text(st []Stale) string {
	if len(st) == 0 {
		return ""
	}
	var changed, gone []string
	for _, s := range st {
		if s.State == Gone {
			gone = append(gone, s.Path)
			continue
		}
		d := s.Path
		switch {
		case s.Commits == 1:
			d += " (1 commit)"
		case s.Commits > 1:
			d += fmt.Sprintf(" (%d commits)", s.Commits)
		}
		changed = append(changed, d)
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, "changed since this memory was written: "+strings.Join(changed, ", "))
	}
	if len(gone) > 0 {
		parts = append(parts, "no longer exist: "+strings.Join(gone, ", "))
	}
	return "Code this memory describes has moved on; " + strings.Join(parts, "; ") + ". Verify the memory against the current code before relying on it."
}

// SortStale orders stale anchors by path for stable output.
func SortStale(st []Stale) {
	sort.Slice(st, func(i, j int) bool { return st[i].Path < st[j].Path })
}
