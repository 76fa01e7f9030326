package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/evalset"
)

// TestListJSONMatchesEncodingJSON checks that list --json's own encoder
// writes exactly what cli.WriteJSON wrote for the map list --json once
// printed, on tricky strings and times (cli.WriteOwnJSON compares it with
// encoding/json in every other test too).
func TestListJSONMatchesEncodingJSON(t *testing.T) {
	tricky := []string{
		"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bback\fform", "\x00\x01\x1f\x7f",
		"<html> & 'amp'", "line\u2028sep\u2029para", "bad \xff\xfe utf8 \xc3", "ünïcödé 日本語 🚀", "\xe2\x80", "ends with \\",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var sb strings.Builder
		for range rng.IntN(12) {
			switch rng.IntN(4) {
			case 0:
				sb.WriteByte(byte(rng.IntN(256)))
			case 1:
				sb.WriteRune(rune(rng.IntN(0x30000)))
			default:
				sb.WriteString(tricky[rng.IntN(len(tricky))])
			}
		}
		tricky = append(tricky, sb.String())
	}
	zone := time.FixedZone("x", 5*3600+30*60)
	base := time.Date(2026, 3, 5, 10, 0, 0, 123456789, time.UTC)
	var items []listItem
	for i, s := range tricky {
		h := memdir.Header{
			Path: s, AbsPath: "/m/" + s, ModTime: base.Add(time.Duration(i) * time.Minute), Size: int64(i),
			Name: tricky[(i+1)%len(tricky)], Description: tricky[(i+2)%len(tricky)], HasFrontmatter: i%3 != 0,
		}
		switch i % 4 {
		case 0:
			h.Type = memdir.TypeFeedback
		case 1:
			h.RawType = tricky[(i+3)%len(tricky)]
		case 2:
			h.ModTime = h.ModTime.In(zone)
		}
		it := listItem{Header: h, Age: "2 days ago", Uses: i % 5}
		if i%2 == 0 {
			it.LastUsed = base.Add(-time.Duration(i) * time.Second).Truncate(time.Second)
		}
		items = append(items, it)
	}
	probs := []memdir.Problem{{Path: "a\x01.md", Kind: memdir.ProblemYAML, Message: "broken \"yaml\"", Skipped: true}, {Path: "b.md", Kind: memdir.ProblemUntyped, Message: "no type"}}
	for _, c := range []struct {
		name string
		out  listJSON
	}{
		{"empty", listJSON{Dir: "/m", Memories: []listItem{}}},
		{"one", listJSON{Dir: "/m", Memories: items[:1], Matched: 1, Total: 1}},
		{"all", listJSON{Dir: tricky[5], Memories: items, Matched: len(items), Total: len(items) + 3, Problems: probs, UsesSince: base}},
		{"far year", listJSON{Dir: "/m", Memories: []listItem{{Header: memdir.Header{Path: "x.md", ModTime: time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)}}}}},
	} {
		// What list printed before: a map of its fields through cli.WriteJSON.
		m := map[string]any{"dir": c.out.Dir, "memories": c.out.Memories, "matched": c.out.Matched, "total": c.out.Total, "problems": c.out.Problems}
		if !c.out.UsesSince.IsZero() {
			m["uses_since"] = c.out.UsesSince
		}
		var want, got bytes.Buffer
		werr := cli.WriteJSON(&want, m)
		var gerr error
		if listJSONFast(&c.out) {
			gerr = writeListJSON(&got, &c.out)
		} else {
			gerr = cli.WriteJSON(&got, &c.out)
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: errors differ: WriteJSON %v, writeListJSON %v", c.name, werr, gerr)
		}
		if werr == nil && !bytes.Equal(want.Bytes(), got.Bytes()) {
			w, g := want.String(), got.String()
			i := 0
			for i < len(w) && i < len(g) && w[i] == g[i] {
				i++
			}
			t.Errorf("%s: output differs at byte %d:\nwant …%q\ngot  …%q", c.name, i, w[max(0, i-80):min(len(w), i+80)], g[max(0, i-80):min(len(g), i+80)])
		}
	}
}

// BenchmarkListJSON runs list --json in-process over generated corpora of
// real memory files (the page cache warm), reporting CPU per memory:
// bench/run compares the whole process with a plain read of each file's
// first 30 lines.
func BenchmarkListJSON(b *testing.B) {
	withoutJSONHook(b)
	set, err := evalset.Load("../../testdata/eval/recall-dev.json")
	if err != nil {
		b.Fatal(err)
	}
	corpus := benchcorpus.New(set)
	for _, n := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := newMemWorld(b)
			dir := filepath.Join(b.TempDir(), "memory")
			if err := corpus.Write(dir, n); err != nil {
				b.Fatal(err)
			}
			w.ok(b, "list", "--dir", dir, "--json") // warms the page cache
			cpu0 := cpuTime()
			for b.Loop() {
				if out := w.ok(b, "list", "--dir", dir, "--json"); !strings.Contains(out, fmt.Sprintf(`"total": %d`, n)) {
					b.Fatalf("list did not list %d memories", n)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N)/float64(n), "cpu-µs/file")
		})
	}
}
