package recall

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
)

func TestFreshness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		age       time.Duration
		wantAge   string
		wantFresh bool
	}{
		{-time.Hour, "today", true},
		{0, "today", true},
		{23 * time.Hour, "today", true},
		{24 * time.Hour, "yesterday", true},
		{47 * time.Hour, "yesterday", true},
		{48 * time.Hour, "2 days ago", false},
		{400 * 24 * time.Hour, "400 days ago", false},
	} {
		mtime := now.Add(-tc.age)
		if got := memdir.MemoryAge(mtime, now); got != tc.wantAge {
			t.Errorf("MemoryAge(-%v) = %q, want %q", tc.age, got, tc.wantAge)
		}
		text := FreshnessText(mtime, now)
		if (text == "") != tc.wantFresh {
			t.Errorf("FreshnessText(-%v) = %q", tc.age, text)
		}
		if !tc.wantFresh && !strings.Contains(text, fmt.Sprint(memdir.AgeDays(mtime, now))+" days old") {
			t.Errorf("FreshnessText(-%v) = %q does not give the age", tc.age, text)
		}
		note := FreshnessNote(mtime, now)
		if tc.wantFresh != (note == "") || (!tc.wantFresh && note != "<system-reminder>"+text+"</system-reminder>\n") {
			t.Errorf("FreshnessNote(-%v) = %q", tc.age, note)
		}
	}
}

// TestScanSameAsThroughRoot checks that a scan, which reads most files
// through descriptors of the directories it opened, finds the same files in
// the same order, with the same headers and problems, as reading every one
// through the os.Root.

func TestManifest(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 3, 5, h, 0, 0, 0, time.UTC) }
	hs := []memdir.Header{
		{Path: "team/oncall.md", ModTime: at(11), Description: "pager rota", Type: memdir.TypeReference},
		{Path: "user_role.md", ModTime: at(10), Description: "backend lead", Type: memdir.TypeUser},
		{Path: "notes.md", ModTime: at(9)},
	}
	want := "- [reference] team/oncall.md (2026-03-05T11:00:00.000Z): pager rota\n" +
		"- [user] user_role.md (2026-03-05T10:00:00.000Z): backend lead\n" +
		"- notes.md (2026-03-05T09:00:00.000Z)\n"
	if got := Manifest(hs); got != want {
		t.Errorf("Manifest =\n%s\nwant\n%s", got, want)
	}
	if Manifest(nil) != "" {
		t.Error("Manifest of no headers is not empty")
	}
}
