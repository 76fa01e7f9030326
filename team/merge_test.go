package team_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/team"
)

func lines(ls ...string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func TestMerge3(t *testing.T) {
	base := lines("title", "a", "b", "c", "d", "e")
	tests := []struct {
		name, base, ours, theirs string
		want                     string
		conflicts                int
	}{
		{"only ours changed", base, lines("title", "a", "B", "c", "d", "e"), base, lines("title", "a", "B", "c", "d", "e"), 0},
		{"only theirs changed", base, base, lines("title", "a", "b", "c", "D", "e"), lines("title", "a", "b", "c", "D", "e"), 0},
		{"apart", base, lines("title", "A", "b", "c", "d", "e"), lines("title", "a", "b", "c", "d", "E"), lines("title", "A", "b", "c", "d", "E"), 0},
		{"insert and delete apart", base, lines("title", "a", "new", "b", "c", "d", "e"), lines("title", "a", "b", "c", "e"), lines("title", "a", "new", "b", "c", "e"), 0},
		{"both append differently", base, base + "x\n", base + "y\n", "", 1},
		{"same change both sides", base, lines("title", "a", "X", "c", "d", "e"), lines("title", "a", "X", "c", "d", "e"), lines("title", "a", "X", "c", "d", "e"), 0},
		{"same line differently", base, lines("title", "a", "ours", "c", "d", "e"), lines("title", "a", "theirs", "c", "d", "e"), "", 1},
		{"adjacent lines conflict", base, lines("title", "a", "B", "c", "d", "e"), lines("title", "a", "b", "C", "d", "e"), "", 1},
		{"no base, different", "", "x\n", "y\n", "", 1},
		{"no final newline", "a\nb", "A\nb", "a\nb\nc", "", 1},
		{"edit far from prepend", base, lines("new", "title", "a", "b", "c", "d", "e"), lines("title", "a", "b", "c", "d", "E"), lines("new", "title", "a", "b", "c", "d", "E"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := team.Merge3(tt.base, tt.ours, tt.theirs)
			if got.Conflicts != tt.conflicts {
				t.Fatalf("conflicts = %d, want %d; text:\n%s", got.Conflicts, tt.conflicts, got.Text)
			}
			if tt.conflicts == 0 {
				if diff := cmp.Diff(tt.want, got.Text); diff != "" {
					t.Errorf("merged (-want +got):\n%s", diff)
				}
				return
			}
			if !team.HasConflictMarkers(got.Text) {
				t.Errorf("conflict text has no markers:\n%s", got.Text)
			}
		})
	}
}

func TestMerge3ConflictText(t *testing.T) {
	got := team.Merge3(lines("a", "b", "c"), lines("a", "ours", "c"), lines("a", "theirs", "c"))
	want := lines("a", team.MarkerOurs, "ours", team.MarkerBase, "b", team.MarkerSplit, "theirs", team.MarkerTheirs, "c")
	if diff := cmp.Diff(want, got.Text); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMerge3Large checks that the merge of real-sized texts with edits far
// apart succeeds, and that unrelated texts conflict instead of merging.
func TestMerge3Large(t *testing.T) {
	var b []string
	for i := range 5000 {
		b = append(b, fmt.Sprintf("line %d", i))
	}
	base := lines(b...)
	o := append([]string(nil), b...)
	o[10] = "ours"
	th := append([]string(nil), b...)
	th[4000] = "theirs"
	th = append(th[:2000], th[2100:]...)
	got := team.Merge3(base, lines(o...), lines(th...))
	want := append([]string(nil), th...)
	want[10] = "ours"
	if got.Conflicts != 0 || got.Text != lines(want...) {
		t.Errorf("large merge: %d conflicts, equal=%v", got.Conflicts, got.Text == lines(want...))
	}
	var x, y []string
	for i := range 3000 {
		x = append(x, fmt.Sprintf("x%d", i))
		y = append(y, fmt.Sprintf("y%d", i))
	}
	if got := team.Merge3(base, lines(x...), lines(y...)); got.Conflicts == 0 {
		t.Errorf("unrelated texts merged without a conflict")
	}
}

func TestMergeIndex(t *testing.T) {
	has := func(files ...string) func(string) bool {
		return func(f string) bool {
			return slices.Contains(files, f)
		}
	}
	all := func(string) bool { return true }
	tests := []struct {
		name                string
		base, local, server string
		localHas, serverHas func(string) bool
		want                string
		conflicts           []string // link targets both changed
	}{
		{
			name:   "both added lines",
			base:   lines("# Team", "- [A](a.md) — a"),
			local:  lines("# Team", "- [A](a.md) — a", "- [L](l.md) — mine"),
			server: lines("# Team", "- [A](a.md) — a", "- [S](s.md) — theirs"),
			want:   lines("# Team", "- [A](a.md) — a", "- [S](s.md) — theirs", "- [L](l.md) — mine"),
		},
		{
			name:   "server dropped a line by accident (stale push)",
			base:   lines("- [A](a.md) — a", "- [B](b.md) — b"),
			local:  lines("- [A](a.md) — a", "- [B](b.md) — b"),
			server: lines("- [A](a.md) — a"),
			want:   lines("- [A](a.md) — a", "- [B](b.md) — b"),
		},
		{
			name:      "server deleted the file on purpose",
			base:      lines("- [A](a.md) — a", "- [B](b.md) — b"),
			local:     lines("- [A](a.md) — a", "- [B](b.md) — b"),
			server:    lines("- [A](a.md) — a"),
			serverHas: has("a.md"),
			want:      lines("- [A](a.md) — a"),
		},
		{
			name:     "deleted here on purpose",
			base:     lines("- [A](a.md) — a", "- [B](b.md) — b"),
			local:    lines("- [A](a.md) — a"),
			server:   lines("- [A](a.md) — a", "- [B](b.md) — b"),
			localHas: has("a.md"),
			want:     lines("- [A](a.md) — a"),
		},
		{
			name:   "line lost here while the file exists comes back",
			base:   lines("- [A](a.md) — a", "- [B](b.md) — b"),
			local:  lines("- [A](a.md) — a"),
			server: lines("- [A](a.md) — a", "- [B](b.md) — b"),
			want:   lines("- [A](a.md) — a", "- [B](b.md) — b"),
		},
		{
			name:   "hook changed on the server only",
			base:   lines("- [A](a.md) — old"),
			local:  lines("- [A](a.md) — old", "- [L](l.md) — l"),
			server: lines("- [A](./a.md) — new"),
			want:   lines("- [A](./a.md) — new", "- [L](l.md) — l"),
		},
		{
			name:   "hook changed here only",
			base:   lines("- [A](a.md) — old"),
			local:  lines("- [A](a.md) — mine"),
			server: lines("- [A](a.md) — old", "- [S](s.md) — s"),
			want:   lines("- [A](a.md) — mine", "- [S](s.md) — s"),
		},
		{
			name:      "hook changed on both sides",
			base:      lines("- [A](a.md) — old", "- [B](b.md) — b"),
			local:     lines("- [A](a.md) — mine", "- [B](b.md) — b", "- [L](l.md) — l"),
			server:    lines("- [A](a.md) — theirs", "- [B](b.md) — b"),
			want:      lines("- [A](a.md) — theirs", "- [B](b.md) — b", "- [L](l.md) — l"),
			conflicts: []string{"a.md"},
		},
		{
			name:   "the same change on both sides",
			base:   lines("- [A](a.md) — old"),
			local:  lines("- [A](a.md) — new"),
			server: lines("- [A](a.md) — new"),
			want:   lines("- [A](a.md) — new"),
		},
		{
			name:      "both added a line for one file",
			base:      lines("- [A](a.md) — a"),
			local:     lines("- [A](a.md) — a", "- [N](n.md) — mine"),
			server:    lines("- [A](a.md) — a", "- [N](n.md) — theirs"),
			want:      lines("- [A](a.md) — a", "- [N](n.md) — theirs"),
			conflicts: []string{"n.md"},
		},
		{
			name:      "no base, one file, two texts",
			local:     lines("- [A](a.md) — mine"),
			server:    lines("- [A](a.md) — theirs"),
			want:      lines("- [A](a.md) — theirs"),
			conflicts: []string{"a.md"},
		},
		{
			name:   "no base: union, local order first",
			local:  lines("- [L](l.md) — l", "- [A](a.md) — a"),
			server: lines("- [A](a.md) — a", "- [S](s.md) — s"),
			want:   lines("- [L](l.md) — l", "- [A](a.md) — a", "- [S](s.md) — s"),
		},
		{
			name:   "empty local gets the server's under no heading",
			server: lines("# Team", "", "- [S](s.md) — s"),
			want:   lines("# Team", "- [S](s.md) — s"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lh, sh := tt.localHas, tt.serverHas
			if lh == nil {
				lh = all
			}
			if sh == nil {
				sh = all
			}
			got := team.MergeIndex(tt.base, tt.local, tt.server, lh, sh)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			text, conflicts := team.MergeIndexConflicts(tt.base, tt.local, tt.server, lh, sh)
			if text != got || !slices.Equal(tt.conflicts, conflicts) {
				t.Errorf("MergeIndexConflicts = %q, %q; want the same text and conflicts %q", text, conflicts, tt.conflicts)
			}
		})
	}
}

func FuzzMerge3(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")
	f.Add("", "x", "y")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		got := team.Merge3(base, ours, theirs)
		if got.Conflicts == 0 {
			// A clean merge of one-sided changes is that side.
			if ours == base && got.Text != theirs || theirs == base && got.Text != ours {
				t.Fatalf("one-sided merge gave %q", got.Text)
			}
		}
		// Merging a text with itself never conflicts.
		if r := team.Merge3(base, ours, ours); r.Conflicts != 0 || r.Text != ours {
			t.Fatalf("self merge: %+v", r)
		}
	})
}

// BenchmarkMerge3 merges two edits of a file at the 250,000-byte entry
// limit (about 5,000 lines), far apart and near each other.
func BenchmarkMerge3(b *testing.B) {
	var base []string
	for i := 0; len(strings.Join(base, "\n")) < team.MaxEntryBytes-60; i++ {
		base = append(base, fmt.Sprintf("line %05d: some memory text of a usual length here", i))
	}
	ours := append([]string(nil), base...)
	theirs := append([]string(nil), base...)
	for i := 0; i < len(base); i += 500 {
		ours[i] = "ours " + base[i]
		if i+250 < len(base) {
			theirs[i+250] = "theirs " + base[i+250]
		}
	}
	o, a, t := lines(base...), lines(ours...), lines(theirs...)
	b.SetBytes(int64(len(o)))
	for b.Loop() {
		if r := team.Merge3(o, a, t); r.Conflicts != 0 {
			b.Fatal("conflict")
		}
	}
}

// BenchmarkMerge3Unrelated is the worst case: two unrelated 5,000-line
// rewrites of a file, where the diff gives up at maxDiffEdits and reports
// a conflict.
func BenchmarkMerge3Unrelated(b *testing.B) {
	var base, x, y []string
	for i := range 5000 {
		base = append(base, fmt.Sprintf("base %d", i))
		x = append(x, fmt.Sprintf("x %d", i))
		y = append(y, fmt.Sprintf("y %d", i))
	}
	o, a, t := lines(base...), lines(x...), lines(y...)
	for b.Loop() {
		if r := team.Merge3(o, a, t); r.Conflicts == 0 {
			b.Fatal("merged unrelated texts")
		}
	}
}
