package memdir

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// indexLinePattern is the regular expression ParseIndexLine implements by
// hand: the specification the tests hold it to.
var indexLinePattern = regexp.MustCompile(`^\s*[-*+]\s+\[((?:\\.|[^\\\]])*)\]\(\s*(<[^>]*>|[^)\s]+(?:\([^)\s]*\)[^)\s]*)*)\s*\)\s*(?:(?:—|–|-{1,2}|:)\s*(.*))?$`)

// parseIndexLineByPattern is ParseIndexLine as it was written with the
// regular expression.
func parseIndexLineByPattern(line string) (IndexEntry, bool) {
	line = strings.TrimRight(line, "\r")
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	m := indexLinePattern.FindStringSubmatch(line)
	if m == nil {
		return IndexEntry{}, false
	}
	title := strings.NewReplacer(`\\`, `\`, `\[`, "[", `\]`, "]").Replace(m[1])
	return IndexEntry{Title: title, File: m[2], Hook: strings.TrimSpace(m[3])}, true
}

// trickyIndexLines are lines at the edges of the pointer-line pattern.
var trickyIndexLines = []string{
	"- [A](a.md) — h", "* [x\\]](<a b.md>) - y", "- [](.md)", "- [a](b(c).md)",
	"- [a](x(y)-z) — h", "- [a](x(y)z) — h", "- [a](f(1).md) — h", "- [a](f(1)(2).md)",
	"- [a](f(1)g(2)h) : x", "- [a]((b)c)", "- [a](b)c)", "- [a](b))", "- [a](<b)", "- [a](<b>)",
	"- [a](<b>c)", "- [a](<b>) x", "- [a](<b c>) — d", "- [a](<b>)—d", "- [a](<>)", "- [a](< b >)",
	"- [a]( b ) -- two dashes", "- [a](b) ---three", "- [a](b) -", "- [a](b) :", "- [a](b)   ", "- [a](b) x",
	"- [a\\](b)", "- [a\\\\](b)", "- [a\\", "- [a\\\n](b)", "- [a\n](b)", "- [a](b) — h\nmore", "- [a](b)\n",
	"- [a](b) —\n h", "\t+\t[a](b)", "-[a](b)", "- a](b)", "- [a] (b)", "- [a](b", "- [a]()", "- [a]( )",
	"- [a](b\tc)", "- [a](b\fc)", "  * [T [nested]](t.md) – en", "- [a](b) – ", "- [a](b)\r", "- [a](b) — h\r\r",
	"- [a](b\xff) — \xfe", "- [\xff](b)", "- [a](b%20c.md) — pct", "- [a](./b.md#x) — frag", "- [a](b(c)d(e)f) — g",
	"- [a](b(c)(d)) — e", "- [a](b(c) — d)", "- [a](b(c)) — d", "- [a](()) — x", "- [a]((()) — x", "- [a](a(b(c)d)e)",
	"- [a](b) —— x", "- [a](b) — — x", "- [a](b)—", "- [a](b):x", "- [a](b)-x", "- [a](b)--x", "- [a](b)x",
	"- [a](b)\v— x", "- [a](b)\u00a0— x", "- [a](<b\n>) x",
}

func TestParseIndexLineMatchesPattern(t *testing.T) {
	t.Parallel()
	check := func(line string) {
		t.Helper()
		wantE, wantOK := parseIndexLineByPattern(line)
		gotE, gotOK := ParseIndexLine(line)
		if gotOK != wantOK || gotE != wantE {
			t.Errorf("ParseIndexLine(%q) = %+v, %v; the pattern gives %+v, %v", line, gotE, gotOK, wantE, wantOK)
		}
	}
	for _, l := range trickyIndexLines {
		check(l)
	}
	// Random lines over the characters the pattern cares about.
	alphabet := []string{"-", "*", "+", " ", "\t", "\n", "\r", "[", "]", "(", ")", "<", ">", "\\", ":", "—", "–", "a", "b", ".md", "%20", "é", "\u00a0"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteString("- [")
		}
		for k := rng.IntN(14); k >= 0; k-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		check(b.String())
	}
}

func FuzzParseIndexLineMatchesPattern(f *testing.F) {
	for _, l := range trickyIndexLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		wantE, wantOK := parseIndexLineByPattern(line)
		gotE, gotOK := ParseIndexLine(line)
		if gotOK != wantOK || gotE != wantE {
			t.Fatalf("ParseIndexLine(%q) = %+v, %v; the pattern gives %+v, %v", line, gotE, gotOK, wantE, wantOK)
		}
	})
}

// sampleIndex is an index with prose, comments, blank runs, duplicates,
// spellings of one target and lines that are not entries.
const sampleIndex = "# Memory index\r\n\r\nSome prose.\n- [A](a.md) — first\n<!-- keep me -->\n- [B](./b.md) — second\n\n\n" +
	"  * [A again](sub/../a.md): duplicate\n- [C \\[x\\]](c%20d.md) – third\n- not a link\n- [Ext](https://example.com/x.md)\n" +
	"- [B](<b.md>) — angle\n\n"

func TestIndexRewriteIsByteIdentical(t *testing.T) {
	t.Parallel()
	for _, in := range []string{sampleIndex, "\n", "- [A](a.md)", "x\n\n\n", "\ufeff- [A](a.md)\n  \n"} {
		ix := ParseIndex([]byte(in))
		want := string(ix.Bytes())
		// Lookups, an edit that changes nothing and measuring leave the
		// text as it was.
		ix.Find("a.md")
		ix.Find("b.md")
		ix.FindTitle("A")
		ix.Entries()
		ix.Status()
		for _, e := range ix.Find("c d.md") {
			if ix.Upsert("c d.md", ix.Line(e.Line)) {
				t.Errorf("Upsert of the line as it is reported a change")
			}
		}
		if got := string(ix.Bytes()); got != want {
			t.Errorf("rewrite of %q = %q, want %q", in, got, want)
		}
		// A line added then removed leaves the rest as it was (an index
		// without a final newline gains one with the new line).
		ix.Upsert("zz.md", "- [Z](zz.md)")
		ix.Remove("zz.md")
		if !strings.HasSuffix(want, "\n") && want != "" {
			want += "\n"
		}
		if got := string(ix.Bytes()); got != want {
			t.Errorf("add and remove in %q = %q, want %q", in, got, want)
		}
	}
	// Normalising keeps every byte but the BOM and CRs.
	if got, want := string(ParseIndex([]byte(sampleIndex)).Bytes()), strings.ReplaceAll(sampleIndex, "\r\n", "\n"); got != want {
		t.Errorf("Bytes() = %q, want %q", got, want)
	}
}

func TestIndexFindByLinkAndTitle(t *testing.T) {
	t.Parallel()
	lines := func(es []IndexEntry) []int {
		var out []int
		for _, e := range es {
			out = append(out, e.Line)
		}
		return out
	}
	for _, order := range []string{"first", "mapped"} {
		ix := ParseIndex([]byte(sampleIndex))
		if order == "mapped" {
			ix.Find("nothing.md") // the next lookups go through the map
			ix.Find("nothing-either.md")
		}
		for _, tc := range []struct {
			file string
			want []int
		}{
			{"a.md", []int{4, 9}},
			{"./a.md", []int{4, 9}},
			{"b.md", []int{6, 13}},
			{"c d.md", []int{10}},
			{"https:/example.com/x.md", []int{12}},
			{"missing.md", nil},
		} {
			if diff := cmp.Diff(tc.want, lines(ix.Find(tc.file))); diff != "" {
				t.Errorf("%s: Find(%q) lines (-want +got):\n%s", order, tc.file, diff)
			}
		}
		if diff := cmp.Diff([]IndexEntry{{Title: "C [x]", File: "c%20d.md", Hook: "third", Line: 10}}, ix.FindTitle("C [x]")); diff != "" {
			t.Errorf("FindTitle (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{6, 13}, lines(ix.FindTitle("B"))); diff != "" {
			t.Errorf("FindTitle(B) (-want +got):\n%s", diff)
		}
	}
}

// TestIndexEditsMatchAFreshParse checks that after any sequence of edits
// the index answers as one parsed afresh from its text does.
func TestIndexEditsMatchAFreshParse(t *testing.T) {
	t.Parallel()
	files := []string{"a.md", "b.md", "c d.md", "e.md", "sub/f.md"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		ix := ParseIndex([]byte(sampleIndex))
		var log []string
		for step := range 12 {
			f := files[rng.IntN(len(files))]
			switch rng.IntN(5) {
			case 0:
				line := IndexEntry{Title: fmt.Sprint("t", step), File: f, Hook: "h"}.String()
				ix.Upsert(f, line)
				log = append(log, "upsert "+f)
			case 1:
				ix.Remove(f)
				log = append(log, "remove "+f)
			case 2:
				ix.Drop(func(e IndexEntry) bool { return e.Path() == f })
				log = append(log, "drop "+f)
			case 3:
				ix.Find(f)
				log = append(log, "find "+f)
			case 4:
				ix.Compact()
				log = append(log, "compact")
			}
			fresh := ParseIndex(ix.Bytes())
			for _, g := range append(files, "https:/example.com/x.md") {
				if diff := cmp.Diff(fresh.Find(g), ix.Find(g)); diff != "" {
					t.Fatalf("round %d after %v: Find(%q) (-fresh +edited):\n%s", round, log, g, diff)
				}
			}
			if diff := cmp.Diff(fresh.Entries(), ix.Entries()); diff != "" {
				t.Fatalf("round %d after %v: Entries (-fresh +edited):\n%s", round, log, diff)
			}
			if diff := cmp.Diff(fresh.FindTitle("t1"), ix.FindTitle("t1")); diff != "" {
				t.Fatalf("round %d after %v: FindTitle (-fresh +edited):\n%s", round, log, diff)
			}
		}
	}
}

func TestIndexUpsertRemovesDuplicates(t *testing.T) {
	t.Parallel()
	ix := ParseIndex([]byte(sampleIndex))
	ix.Find("x.md")
	ix.Find("y.md") // mapped
	if !ix.Upsert("a.md", "- [A](a.md) — one") {
		t.Fatal("Upsert reported no change")
	}
	want := strings.Replace(strings.ReplaceAll(sampleIndex, "\r\n", "\n"), "- [A](a.md) — first", "- [A](a.md) — one", 1)
	want = strings.Replace(want, "  * [A again](sub/../a.md): duplicate\n", "", 1)
	if diff := cmp.Diff(want, string(ix.Bytes())); diff != "" {
		t.Errorf("after Upsert (-want +got):\n%s", diff)
	}
	if got := ix.Find("a.md"); len(got) != 1 || got[0].Line != 4 {
		t.Errorf("Find(a.md) = %+v", got)
	}
	if got := ix.Find("c d.md"); len(got) != 1 || got[0].Line != 9 {
		t.Errorf("Find after the removal = %+v, want line 9", got)
	}
}

// TestIndexMeasureMatchesMeasureIndex takes lines out of indexes one at a
// time and compares the running measure with MeasureIndex of the rest.
func TestIndexMeasureMatchesMeasureIndex(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"", " ", "\t", "\u00a0", "x", "é", "😀", "- [A](a.md) — h ", "  - [B](b.md)", "# h"}
	for range 500 {
		var lines []string
		for k := rng.IntN(12); k >= 0; k-- {
			lines = append(lines, pieces[rng.IntN(len(pieces))]+pieces[rng.IntN(len(pieces))])
		}
		m := newIndexMeasure(lines)
		gone := make([]bool, len(lines))
		for _, i := range rng.Perm(len(lines)) {
			var rest []string
			for j, l := range lines {
				if !gone[j] {
					rest = append(rest, l)
				}
			}
			if diff := cmp.Diff(MeasureIndex(strings.Join(rest, "\n")), m.status()); diff != "" {
				t.Fatalf("lines %q, kept %q: (-MeasureIndex +measure):\n%s", lines, rest, diff)
			}
			if strings.TrimSpace(lines[i]) != "" {
				gone[i] = true
				m.remove(i)
			}
		}
	}
}

// TestMoveOverflowKeepsLinesAndOrder compacts a long index and checks that
// every line lands, byte for byte and in order, in one of the two files.
func TestMoveOverflowKeepsLinesAndOrder(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	if err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	in.WriteString("# Index\n\n")
	var entries []string
	for i := range 450 {
		f := fmt.Sprintf("m%03d.md", i)
		if err := os.WriteFile(d.Abs(f), []byte("---\nname: m\ndescription: d\ntype: user\n---\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		l := fmt.Sprintf("- [M %d](%s) — hook %d", i, f, i)
		entries = append(entries, l)
		in.WriteString(l + "\n")
	}
	root, err := d.openRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ix := ParseIndex([]byte(in.String()))
	oix := newOverflowIndex()
	moved := d.moveOverflow(root, EntrypointName, ix, oix)
	st := ix.Status()
	if moved == 0 || st.Lines > MaxIndexLines-compactHeadroom || st.Truncated() {
		t.Fatalf("moved %d, index now %+v", moved, st)
	}
	var got []string
	for _, x := range []*Index{ix, oix} {
		for _, e := range x.Entries() {
			if e.Path() != OverflowIndexName {
				got = append(got, x.Line(e.Line))
			}
		}
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries after the move, want %d", len(got), len(entries))
	}
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	for _, l := range entries {
		if !seen[l] {
			t.Errorf("line %q was lost", l)
		}
	}
	if len(ix.Find(OverflowIndexName)) != 1 {
		t.Error("the index does not link its overflow file")
	}
}

// TestSaveFindsItsLineInTheOverflowFile saves memories whose lines
// compaction moved to MEMORY-more.md, one written with percent-encoding,
// and a new one: each line is edited where it is, and the save reports
// MEMORY.md's state, not the overflow file's.
func TestSaveFindsItsLineInTheOverflowFile(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	if err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	main := "- [More index entries](MEMORY-more.md) — more\n"
	more := newOverflowIndex()
	for i := range 300 {
		f := fmt.Sprintf("user_m%03d.md", i)
		more.Upsert(f, fmt.Sprintf("- [m%03d](%s) — old", i, f))
		if err := os.WriteFile(d.Abs(f), fmt.Appendf(nil, "---\nname: m%03d\ndescription: old\ntype: user\n---\n", i), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	more.Upsert("user_a b.md", "- [a b](user_a%20b.md) — old")
	if err := os.WriteFile(d.Abs(EntrypointName), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.Abs(OverflowIndexName), more.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Memory{
		{Path: "user_m007.md", Name: "m007", Description: "new", Type: TypeUser},
		{Path: "user_a b.md", Name: "a b", Description: "new", Type: TypeUser},
	} {
		res := mustSave(t, d, m, nil)
		if res.Index.Truncated() || res.Index.Lines != 1 {
			t.Errorf("save %s: Index = %+v, want MEMORY.md's one line", m.Path, res.Index)
		}
		if got := readString(t, d.Abs(EntrypointName)); got != main {
			t.Errorf("save %s: MEMORY.md = %q, want it unchanged", m.Path, got)
		}
		ix := ParseIndex([]byte(readString(t, d.Abs(OverflowIndexName))))
		if es := ix.Find(m.Path); len(es) != 1 || es[0].Hook != "new" {
			t.Errorf("save %s: overflow entries %+v", m.Path, es)
		}
	}
	mustSave(t, d, &Memory{Path: "user_new.md", Name: "new", Description: "d", Type: TypeUser}, nil)
	if got, want := readString(t, d.Abs(EntrypointName)), main+"- [new](user_new.md) — d\n"; got != want {
		t.Errorf("MEMORY.md = %q, want %q", got, want)
	}
}

func TestMayLinkDataMatchesAParse(t *testing.T) {
	t.Parallel()
	data := "\ufeff- [P](p%20q.md) — 50% off\r\n- [A](a.md) — 10% more\n- [Pct](r%2Es.md)\n* [x](<t u.md>)\n"
	ix := ParseIndex([]byte(data))
	for _, f := range []string{"p q.md", "a.md", "r.s.md", "t u.md", "b.md", "q.md", "50.md", "r%2Es.md"} {
		if want := len(ix.Find(f)) > 0; want && !mayLinkData([]byte(data), f) {
			t.Errorf("mayLinkData(%q) = false, but a line links it", f)
		}
	}
	for _, f := range []string{"b.md", "z.md", "50.md"} {
		if mayLinkData([]byte(data), f) {
			t.Errorf("mayLinkData(%q) = true, want false", f)
		}
	}
}

// TestOverflowMayHoldAcrossReads puts the lines looked for past the first
// read of overflowMayHold's buffer, and a line longer than the buffer.
func TestOverflowMayHoldAcrossReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 200<<10; i++ {
		fmt.Fprintf(&b, "- [m%d](user_m%06d.md) — hook with 5%% of words, %d\n", i, i, i)
	}
	b.WriteString("- [late](late%20one.md) — x\n- [plain](plain.md)\n")
	if err := os.WriteFile(filepath.Join(dir, "more.md"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	long := "- [long](long.md) — " + strings.Repeat("y", 70<<10) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "long.md"), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		rel, file string
		want      bool
	}{
		{"more.md", "late one.md", true},
		{"more.md", "plain.md", true},
		{"more.md", "user_m000003.md", true},
		{"more.md", "absent.md", false},
		{"long.md", "absent.md", true}, // cannot tell: the full read decides
		{"missing.md", "absent.md", true},
	} {
		if got := overflowMayHold(root, tc.rel, tc.file); got != tc.want {
			t.Errorf("overflowMayHold(%s, %s) = %v, want %v", tc.rel, tc.file, got, tc.want)
		}
	}
}
