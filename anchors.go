package memdir

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

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir/internal/mdtext"
)

// AnchorsKey is the frontmatter key holding a memory's code anchors. Claude
// Code reads only name, description and type, so the key is kept by it, by
// team sync (which carries files byte for byte) and by memdir's rewrites.
const AnchorsKey = "anchors"

// MaxAnchors bounds the anchors recorded for one memory; the value stays on
// one frontmatter line, so Claude Code's 30-line frontmatter window is never
// at risk.
const MaxAnchors = 8

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

// FormatAnchors renders anchors as the value of the anchors key.
func FormatAnchors(as []Anchor) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// ParseAnchors reads the value of the anchors key. An entry that does not
// follow the format is an error naming it.
func ParseAnchors(s string) ([]Anchor, error) {
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

// Anchors returns the memory's recorded anchors (nil when it has none).
func (m *Memory) Anchors() ([]Anchor, error) {
	v := scalarString(mapGet(m.front, AnchorsKey))
	if v == "" {
		return nil, nil
	}
	return ParseAnchors(v)
}

// SetAnchors records anchors in the memory's frontmatter, replacing any
// there; none removes the key. Other keys keep their order.
func (m *Memory) SetAnchors(as []Anchor) {
	front := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	found := false
	if m.front != nil {
		for i := 0; i+1 < len(m.front.Content); i += 2 {
			k, v := m.front.Content[i], m.front.Content[i+1]
			if k.Value == AnchorsKey {
				found = true
				if len(as) == 0 {
					continue
				}
				v = strNode(FormatAnchors(as))
			}
			front.Content = append(front.Content, k, v)
		}
	}
	if !found && len(as) > 0 {
		front.Content = append(front.Content, strNode(AnchorsKey), strNode(FormatAnchors(as)))
	}
	m.front = front
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

// FindAnchors finds the project files text names and records each as it is
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
// MaxAnchors files are recorded, one anchor per file.
func FindAnchors(ctx context.Context, root, text string) []Anchor {
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
		if len(out) >= MaxAnchors {
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
	if git && len(idents) > 0 && len(out) < MaxAnchors {
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

// AnchorState is how an anchored file stands now.
type AnchorState string

// Anchor states.
const (
	AnchorChanged AnchorState = "changed" // content differs from the recorded hash
	AnchorGone    AnchorState = "gone"    // the file no longer exists
)

// StaleAnchor is an anchor whose file changed or went away.
type StaleAnchor struct {
	Anchor
	State AnchorState `json:"state"`
	// Commits is how many commits changed the file since the recorded
	// version, -1 when unknown (no git, or the recorded version was never
	// committed).
	Commits int `json:"commits"`
	// Summary, filled by AnchorChanges only, is the line diff stat since
	// the recorded version, e.g. "+12 -3 lines".
	Summary string `json:"summary,omitempty"`
}

// CheckAnchors compares anchors with the files under root: a stat first,
// a hash only when size or mtime differ, and in git a commit count only for
// a file whose hash differs.
func CheckAnchors(ctx context.Context, root string, as []Anchor) []StaleAnchor {
	return checkAnchors(ctx, root, as, nil)
}

// anchorMemo remembers, within one recall, the verdict on each recorded
// anchor, so memories anchored to the same file cost one check.
type anchorMemo map[Anchor]*StaleAnchor

func checkAnchors(ctx context.Context, root string, as []Anchor, memo anchorMemo) []StaleAnchor {
	if root == "" {
		return nil
	}
	var out []StaleAnchor
	var git, gitKnown bool
	for _, a := range as {
		if memo != nil {
			if s, ok := memo[a]; ok {
				if s != nil {
					out = append(out, *s)
				}
				continue
			}
			memo[a] = nil
		}
		n := len(out)
		out = checkOne(ctx, root, a, out, &git, &gitKnown)
		if memo != nil && len(out) > n {
			s := out[n]
			memo[a] = &s
		}
	}
	return out
}

func checkOne(ctx context.Context, root string, a Anchor, out []StaleAnchor, git, gitKnown *bool) []StaleAnchor {
	{
		abs := filepath.Join(root, filepath.FromSlash(a.Path))
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			return append(out, StaleAnchor{Anchor: a, State: AnchorGone, Commits: -1})
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
		s := StaleAnchor{Anchor: a, State: AnchorChanged, Commits: -1}
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

// AnchorChanges is CheckAnchors with a change summary per changed file: the
// number of lines added and removed since the commit whose version of the
// file had the recorded hash (`git diff --numstat COMMIT -- PATH`, which
// compares with the working tree). Outside git, or when the recorded version
// was never committed, the summary gives the line counts then and now.
func AnchorChanges(ctx context.Context, root string, as []Anchor) []StaleAnchor {
	st := CheckAnchors(ctx, root, as)
	for i := range st {
		s := &st[i]
		if s.State == AnchorGone {
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

// StaleText says, in one line for an agent, which anchored files changed or
// went away; "" when none.
func StaleText(st []StaleAnchor) string {
	if len(st) == 0 {
		return ""
	}
	var changed, gone []string
	for _, s := range st {
		if s.State == AnchorGone {
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

// ProjectRoot returns the project root the directory records anchors
// against, "" when it has none.
func (d *Dir) ProjectRoot() string { return d.project }

// findAnchors finds the anchors m names in the directory's project; ok is
// false when the directory has no project root (anchors off).
func (d *Dir) findAnchors(ctx context.Context, m *Memory) (as []Anchor, ok bool) {
	if d.project == "" {
		return nil, false
	}
	return FindAnchors(ctx, d.project, m.Description+"\n"+m.Body), true
}

// staleOf checks the anchors recorded in a memory file's content.
func (d *Dir) staleOf(ctx context.Context, content string, memo anchorMemo) []StaleAnchor {
	if d.project == "" || !strings.Contains(content, AnchorsKey+":") {
		return nil
	}
	m, _ := ParseMemory([]byte(content))
	as, err := m.Anchors()
	if err != nil || len(as) == 0 {
		return nil
	}
	return checkAnchors(ctx, d.project, as, memo)
}

// AnchorContent records anchors in a memory file's content written by other
// means than Save (the memory tool, so extraction, dream, MCP and the
// Anthropic memory tool): the frontmatter's anchors line is set, replaced
// or removed, and every other byte is left as written. Content without
// frontmatter, or whose frontmatter does not parse, is returned unchanged.
func AnchorContent(ctx context.Context, root string, content []byte) []byte {
	if root == "" {
		return content
	}
	m, prob := ParseMemory(content)
	if prob != nil || !m.HasFrontmatter() {
		return content
	}
	as := FindAnchors(ctx, root, m.Description+"\n"+m.Body)
	old, _ := m.Anchors()
	if len(as) == 0 && len(old) == 0 {
		return content
	}
	text := string(content)
	front, _, ok := mdtext.SplitFrontmatter(text)
	if !ok || strings.Contains(text, "\r") {
		return content
	}
	fstart := strings.Index(text, front)
	lines := strings.SplitAfter(front, "\n")
	value := FormatAnchors(as)
	if !isPlainSafe(value) {
		value = yamlDoubleQuote(value)
	}
	newLine := AnchorsKey + ": " + value + "\n"
	replaced := false
	for i, l := range lines {
		if strings.HasPrefix(l, AnchorsKey+":") {
			if len(as) == 0 {
				newLine = ""
			}
			lines[i], replaced = newLine, true
			break
		}
	}
	if !replaced {
		if len(as) == 0 {
			return content
		}
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines[n-1] = newLine
		} else {
			lines = append(lines, newLine)
		}
	}
	out := text[:fstart] + strings.Join(lines, "") + text[fstart+len(front):]
	// Keep the result only if it still reads as the same memory.
	if m2, prob := ParseMemory([]byte(out)); prob != nil || m2.Name != m.Name || m2.Description != m.Description || m2.Body != m.Body {
		return content
	}
	return []byte(out)
}

// sortStale orders stale anchors by path for stable output.
func sortStale(st []StaleAnchor) {
	sort.Slice(st, func(i, j int) bool { return st[i].Path < st[j].Path })
}

// Doctor findings for anchors.
const (
	FindStaleAnchor FindingKind = "stale-anchor" // an anchored file changed since the memory was written
	FindAnchorGone  FindingKind = "anchor-gone"  // an anchored file no longer exists
)

// checkAnchors adds a finding per memory whose anchors changed or went away.
// Fix never touches these: only a person can tell whether the memory still
// holds, and 'memdir anchors refresh' records that they checked.
func (d *Dir) checkAnchors(ctx context.Context, mems []Header, add func(Finding)) {
	if d.project == "" {
		return
	}
	memo := anchorMemo{}
	for _, h := range mems {
		data, err := os.ReadFile(d.Abs(h.Path))
		if err != nil {
			continue
		}
		st := d.staleOf(ctx, string(data), memo)
		var changed, gone []string
		for _, s := range st {
			if s.State == AnchorGone {
				gone = append(gone, s.Path)
				continue
			}
			d := s.Path
			if s.Commits > 0 {
				d += fmt.Sprintf(" (%d commit(s))", s.Commits)
			}
			changed = append(changed, d)
		}
		how := "check the memory against the code, edit it if needed, then 'memdir anchors refresh " + h.Path + "'"
		if len(changed) > 0 {
			add(Finding{Kind: FindStaleAnchor, Path: h.Path, Message: "changed since the memory was written: " + strings.Join(changed, ", ") + "; " + how})
		}
		if len(gone) > 0 {
			add(Finding{Kind: FindAnchorGone, Path: h.Path, Message: "no longer exist: " + strings.Join(gone, ", ") + "; " + how})
		}
	}
}

// RefreshResult reports RefreshAnchors.
type RefreshResult struct {
	Path    string   `json:"path"`
	Anchors []Anchor `json:"anchors"`
	// RunID is the journal run that can undo the refresh ("" when nothing
	// changed).
	RunID string `json:"run_id,omitempty"`
}

// RefreshAnchors re-records a memory's anchors against the project as it is
// now, after a person checked that the memory still holds. Only the anchors
// key changes; the change is journaled.
func (d *Dir) RefreshAnchors(ctx context.Context, ref string) (*RefreshResult, error) {
	if d.project == "" {
		return nil, fmt.Errorf("refresh anchors: the memory directory %s has no project root to record anchors against: %w", d.path, ErrInvalid)
	}
	m, err := d.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	rec, err := d.journal.Begin("anchors-refresh", d.path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	rec.SetSummary("anchors refresh " + m.Path)
	res, err := d.Save(ctx, m, &SaveOptions{Recorder: rec})
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	out := &RefreshResult{Path: res.Path, Anchors: []Anchor{}}
	if run != nil && len(run.ChangedFiles()) > 0 {
		out.RunID = run.ID
	}
	if saved, gerr := d.Get(ctx, res.Path); gerr == nil {
		if as, _ := saved.Anchors(); as != nil {
			out.Anchors = as
		}
	}
	return out, nil
}

// StaleMemory is a memory whose anchors changed, with the change summary.
type StaleMemory struct {
	Path    string        `json:"path"`
	Anchors []StaleAnchor `json:"anchors"`
}

// StaleMemories lists the memories whose anchored files changed or went
// away, with a change summary per file (see AnchorChanges); nil without a
// project root.
func (d *Dir) StaleMemories(ctx context.Context) ([]StaleMemory, error) {
	if d.project == "" || !d.Exists() {
		return nil, nil
	}
	scan, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	var out []StaleMemory
	for _, h := range scan.Memories {
		m, err := d.Get(ctx, h.Path)
		if err != nil {
			continue
		}
		as, err := m.Anchors()
		if err != nil || len(as) == 0 {
			continue
		}
		if st := AnchorChanges(ctx, d.project, as); len(st) > 0 {
			sortStale(st)
			out = append(out, StaleMemory{Path: h.Path, Anchors: st})
		}
	}
	return out, nil
}
