package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
)

// TestCompactLineLimit: 205 short index lines are over the 200-line load
// limit though far under 25,000 characters. doctor --fix --compact must bring
// MEMORY.md under the limit by moving the lines of the least recently
// changed memories into MEMORY-more.md, linked by one line, so that every
// memory stays reachable; doctor then finds nothing, one undo restores the
// directory byte for byte, and later saves and removals keep both files
// right.
func TestCompactLineLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	base := t.TempDir()
	j := memdir.NewJournal(filepath.Join(base, "journal"), nil)
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Now: func() time.Time { return now }, Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	d.Ensure()
	var index strings.Builder
	for i := 1; i <= 205; i++ {
		rel := fmt.Sprintf("m%03d.md", i)
		content := fmt.Sprintf("---\nname: m%03d\ndescription: fact %d\ntype: project\n---\nbody %d\n", i, i, i)
		if err := os.WriteFile(d.Abs(rel), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// m001 is the oldest, m205 the newest.
		mt := now.Add(-time.Duration(300-i) * time.Hour)
		os.Chtimes(d.Abs(rel), mt, mt)
		fmt.Fprintf(&index, "- [m%03d](%s) — fact %d\n", i, rel, i)
	}
	if err := os.WriteFile(d.Abs(memdir.EntrypointName), []byte(index.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	orig := []byte(index.String())
	// Group-readable files: the same run fixes their modes, and the undo
	// must put them back after restoring the content.
	os.Chmod(d.Abs(memdir.EntrypointName), 0o644)
	os.Chmod(d.Abs("m001.md"), 0o644)

	rep, err := Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[FindingKind]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind]++
	}
	if len(rep.Findings) != 3 || kinds[FindIndexOverLimit] != 1 || kinds[FindPermissions] != 2 {
		t.Fatalf("before: findings %+v, want index-over-limit and two permissions", rep.Findings)
	}

	runsBefore, _ := j.Runs()
	res, err := Fix(ctx, d, &FixOptions{Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Remaining.Findings) != 0 {
		t.Errorf("after compact, doctor still finds %+v (actions %q)", res.Remaining.Findings, res.Actions)
	}
	runsAfter, _ := j.Runs()
	if len(runsAfter) != len(runsBefore)+1 || res.RunID == "" {
		t.Fatalf("compact made %d runs (run id %q), want 1", len(runsAfter)-len(runsBefore), res.RunID)
	}
	main, _ := os.ReadFile(d.Abs(memdir.EntrypointName))
	st := memdir.MeasureIndex(string(main))
	if st.Truncated() {
		t.Fatalf("MEMORY.md still over its limits: %+v", st)
	}
	more, err := os.ReadFile(d.Abs(memdir.OverflowIndexName))
	if err != nil {
		t.Fatalf("no overflow file: %v", err)
	}
	mix, oix := memdir.ParseIndex(main), memdir.ParseIndex(more)
	if n := len(mix.Find(memdir.OverflowIndexName)); n != 1 {
		t.Errorf("MEMORY.md links %s %d times, want once", memdir.OverflowIndexName, n)
	}
	if m, probs := memdir.ParseMemory(more); m.Type != memdir.TypeReference || m.Description == "" {
		t.Errorf("%s frontmatter: %+v %v", memdir.OverflowIndexName, m, probs)
	}
	for i := 1; i <= 205; i++ {
		rel := fmt.Sprintf("m%03d.md", i)
		inMain, inMore := len(mix.Find(rel)), len(oix.Find(rel))
		if inMain+inMore != 1 {
			t.Errorf("%s: %d lines in MEMORY.md, %d in %s; want exactly one in all", rel, inMain, inMore, memdir.OverflowIndexName)
		}
		if i == 1 && inMore != 1 {
			t.Errorf("the oldest memory m001 was not moved")
		}
		if i == 205 && inMain != 1 {
			t.Errorf("the newest memory m205 was moved")
		}
	}
	// Every line moved is a line that was there, unchanged.
	for _, e := range oix.Entries() {
		if !bytes.Contains(orig, []byte(oix.Lines()[e.Line-1]+"\n")) {
			t.Errorf("moved line %q was changed", oix.Lines()[e.Line-1])
		}
	}

	// Undo: one run brings back MEMORY.md byte for byte and removes the
	// overflow file.
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d.Abs(memdir.EntrypointName)); !bytes.Equal(got, orig) {
		t.Errorf("undo did not restore MEMORY.md")
	}
	for _, rel := range []string{memdir.EntrypointName, "m001.md"} {
		if fi, _ := os.Stat(d.Abs(rel)); fi.Mode().Perm() != 0o644 {
			t.Errorf("undo left %s at mode %04o, want 0644", rel, fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(d.Abs(memdir.OverflowIndexName)); !os.IsNotExist(err) {
		t.Errorf("undo left %s: %v", memdir.OverflowIndexName, err)
	}

	// Compact again, then save and remove memories whose lines moved.
	if _, err := Fix(ctx, d, &FixOptions{Compact: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Save(ctx, &memdir.Memory{Path: "m001.md", Name: "m001", Description: "fact one, updated", Type: memdir.TypeProject, Body: "new\n"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Save(ctx, &memdir.Memory{Path: "fresh.md", Name: "fresh", Description: "a new fact", Type: memdir.TypeProject, Body: "x\n"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Remove(ctx, "m002.md", nil); err != nil {
		t.Fatal(err)
	}
	// An agent's write of a moved memory does not give it a second line.
	var added []string
	_, err = d.Change(ctx, "agent", nil, func(rec *memdir.Recorder) error {
		added, err = d.IndexMissing(rec, []string{"m004.md"})
		return err
	})
	if err != nil || len(added) != 0 {
		t.Errorf("IndexMissing of a moved memory = %v, %v; want nothing added", added, err)
	}
	if _, err := d.Rename(ctx, "m003.md", "m003b.md", nil); err != nil {
		t.Fatal(err)
	}
	main, _ = os.ReadFile(d.Abs(memdir.EntrypointName))
	more, _ = os.ReadFile(d.Abs(memdir.OverflowIndexName))
	mix, oix = memdir.ParseIndex(main), memdir.ParseIndex(more)
	if len(mix.Find("m003b.md")) != 0 || len(oix.Find("m003b.md")) != 1 || len(oix.Find("m003.md")) != 0 {
		t.Errorf("renaming a moved memory did not rename its line in %s", memdir.OverflowIndexName)
	}
	if len(mix.Find("m001.md")) != 0 || len(oix.Find("m001.md")) != 1 || !strings.Contains(string(more), "fact one, updated") {
		t.Errorf("saving a moved memory did not update its line in place:\nMEMORY.md has %d, %s:\n%s", len(mix.Find("m001.md")), memdir.OverflowIndexName, more)
	}
	if len(mix.Find("fresh.md")) != 1 {
		t.Errorf("a new memory was not indexed in MEMORY.md")
	}
	if len(oix.Find("m002.md")) != 0 {
		t.Errorf("removing a moved memory left its line in %s", memdir.OverflowIndexName)
	}
	rep, err = Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("after save and remove, doctor finds %+v", rep.Findings)
	}
	// Undo the removal: the line comes back in the overflow file.
	runs, _ := j.Runs()
	if runs[1].Kind != "remove" {
		t.Fatalf("second newest run is %s, want the remove", runs[1].Kind)
	}
	if _, err := d.Undo(ctx, runs[1].ID, nil); err != nil {
		t.Fatal(err)
	}
	more, _ = os.ReadFile(d.Abs(memdir.OverflowIndexName))
	if len(memdir.ParseIndex(more).Find("m002.md")) != 1 {
		t.Errorf("undoing the removal did not restore its line in %s", memdir.OverflowIndexName)
	}
	if rep, _ = Check(ctx, d); len(rep.Findings) != 0 {
		t.Errorf("after undo, doctor finds %+v", rep.Findings)
	}
}
