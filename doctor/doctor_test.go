package doctor

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
)

// TestDoctorLeftovers puts a 50 MB memory, temporary files of killed writes
// (one old, one fresh) and ordinary problems in a directory: doctor reports
// the leftovers, --fix still repairs everything else, removes only the old
// temporary file, and undo brings it back.
func TestDoctorLeftovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	base := t.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Now: func() time.Time { return now }, Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		t.Fatal(err)
	}
	d.Ensure()
	write := func(rel, content string, mode os.FileMode, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(d.Abs(rel), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d.Abs(rel), mode)
		if err := os.Chtimes(d.Abs(rel), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	write("loose.md", "---\nname: loose\ndescription: not indexed yet\ntype: user\n---\nbody\n", 0o644, now)
	write("big.md", "---\nname: big\ndescription: a dump\ntype: reference\n---\n"+strings.Repeat("a log line that goes on\n", 50<<20/24), 0o600, now)
	write(".loose.md.tmp-1234", "---\nname: loose\n", 0o600, now.Add(-time.Hour))
	write(".MEMORY.md.tmp-5678", "- [x](x.md)", 0o600, now.Add(-time.Minute))

	rep, err := Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[string(f.Kind)+" "+f.Path] = f.Fix
	}
	want := map[string]string{
		"unindexed loose.md":            "add a line to MEMORY.md",
		"permissions loose.md":          "chmod 0600",
		"unindexed big.md":              "",
		"too-large big.md":              "",
		"temp-file .loose.md.tmp-1234":  "remove it",
		"temp-file .MEMORY.md.tmp-5678": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (kind path → fix) (-want +got):\n%s", diff)
	}

	res, err := Fix(ctx, d, nil)
	if err != nil {
		t.Fatalf("doctor --fix aborted: %v", err)
	}
	sort.Strings(res.Actions)
	wantActions := []string{
		"added loose.md to MEMORY.md",
		"removed .loose.md.tmp-1234, a temporary file a killed write left",
		"set the mode of loose.md to 0600",
	}
	if diff := cmp.Diff(wantActions, res.Actions); diff != "" {
		t.Errorf("repairs (-want +got):\n%s", diff)
	}
	var remaining []string
	for _, f := range res.Remaining.Findings {
		remaining = append(remaining, string(f.Kind)+" "+f.Path)
	}
	sort.Strings(remaining)
	if diff := cmp.Diff([]string{"temp-file .MEMORY.md.tmp-5678", "too-large big.md", "unindexed big.md"}, remaining); diff != "" {
		t.Errorf("remaining (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(d.Abs(".MEMORY.md.tmp-5678")); err != nil {
		t.Errorf("the fresh temporary file was removed: %v", err)
	}
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs(".loose.md.tmp-1234")); got != "---\nname: loose\n" {
		t.Errorf("undo restored the temporary file as %q", got)
	}
	if data, _ := os.ReadFile(d.Abs("MEMORY.md")); strings.Contains(string(data), "loose.md") {
		t.Errorf("undo left the index line: %q", data)
	}
}
