package dailylog_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the tests name zones; do not depend on the machine's database

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/dailylog"
)

func mustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func TestAppendAroundMidnight(t *testing.T) {
	t.Parallel()
	shanghai := mustZone(t, "Asia/Shanghai")
	newYork := mustZone(t, "America/New_York")
	// 2026-12-31 23:59:30 in Shanghai is still 15:59:30 UTC the same day;
	// 00:00:10 on 2027-01-01 in Shanghai is 16:00:10 UTC on 2026-12-31.
	for _, tc := range []struct {
		name     string
		now      time.Time
		wantRel  string
		wantLine string
	}{
		{"before midnight", time.Date(2026, 12, 31, 23, 59, 30, 0, shanghai), "logs/2026/12/2026-12-31.md", "- 23:59 "},
		{"after midnight: a new year, month and file", time.Date(2027, 1, 1, 0, 0, 10, 0, shanghai), "logs/2027/01/2027-01-01.md", "- 00:00 "},
		{"the same instant in UTC is still the old day", time.Date(2027, 1, 1, 0, 0, 10, 0, shanghai).UTC(), "logs/2026/12/2026-12-31.md", "- 16:00 "},
		{"a fixed zone west of UTC", time.Date(2026, 3, 1, 0, 30, 0, 0, time.FixedZone("X", -10*3600)), "logs/2026/03/2026-03-01.md", "- 00:30 "},
		{"leap day", time.Date(2028, 2, 29, 23, 59, 59, 0, newYork), "logs/2028/02/2028-02-29.md", "- 23:59 "},
		// Clocks go back at 02:00 on 2026-11-01: 01:30 happens twice, in
		// the same file.
		{"DST fall-back, first 01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC).In(newYork), "logs/2026/11/2026-11-01.md", "- 01:30 "},
		{"DST fall-back, second 01:30", time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC).In(newYork), "logs/2026/11/2026-11-01.md", "- 01:30 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := dailylog.Append(dir, "asked for "+tc.name, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tc.wantRel)); got != want {
				t.Errorf("path = %s, want %s", got, want)
			}
			if got != dailylog.Path(dir, tc.now) {
				t.Errorf("Append wrote %s but DailyLogPath says %s", got, dailylog.Path(dir, tc.now))
			}
			data, err := os.ReadFile(got)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.wantLine + "asked for " + tc.name + "\n"; string(data) != want {
				t.Errorf("log = %q, want %q", data, want)
			}
		})
	}
}

func TestAppendAppendsAndCreates(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memory") // does not exist yet
	zone := time.FixedZone("UTC+8", 8*3600)
	day := time.Date(2026, 5, 4, 9, 5, 0, 0, zone)
	steps := []struct {
		at   time.Time
		text string
	}{
		{day, "user prefers tabs"},
		{day.Add(3 * time.Hour), "  deploys go\nthrough   Argo,\r\n\tnever kubectl  "},
		{day.Add(4 * time.Hour), "用户说：别 mock 数据库"},
	}
	var path string
	for _, s := range steps {
		p, err := dailylog.Append(dir, s.text, s.at)
		if err != nil {
			t.Fatal(err)
		}
		path = p
	}
	data, _ := os.ReadFile(path)
	want := "- 09:05 user prefers tabs\n- 12:05 deploys go through Argo, never kubectl\n- 13:05 用户说：别 mock 数据库\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	for _, p := range []string{dir, filepath.Join(dir, "logs"), filepath.Join(dir, "logs", "2026"), filepath.Join(dir, "logs", "2026", "05")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, mode %v; want a 0700 directory", p, err, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}

	// A file someone edited by hand without a final newline still gets
	// whole lines.
	os.WriteFile(path, []byte("- 08:00 by hand"), 0o600)
	if _, err := dailylog.Append(dir, "next", day); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "- 08:00 by hand\n- 09:05 next\n" {
		t.Errorf("after a hand edit: %q", data)
	}
}

func TestAppendRejects(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 9, 5, 0, 0, time.UTC)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, dir, text, want string
	}{
		{"empty", dir, " \n\t ", "nothing to append"},
		{"NUL", dir, "a\x00b", "NUL"},
		{"no directory", "", "x", "no memory directory"},
	} {
		_, err := dailylog.Append(tc.dir, tc.text, now)
		if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}

	// A binary file in the log's place is not extended, nor replaced.
	bin := dailylog.Path(dir, now)
	os.MkdirAll(filepath.Dir(bin), 0o700)
	os.WriteFile(bin, []byte("\x00\x01"), 0o600)
	if _, err := dailylog.Append(dir, "x", now); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), bin) {
		t.Errorf("binary log: %v", err)
	}
	if data, _ := os.ReadFile(bin); string(data) != "\x00\x01" {
		t.Errorf("the binary file changed: %q", data)
	}

	// A logs/ symlink pointing outside the directory is refused.
	escape := t.TempDir()
	dir2 := t.TempDir()
	if err := os.Symlink(escape, filepath.Join(dir2, "logs")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if _, err := dailylog.Append(dir2, "x", now); err == nil {
		t.Error("appending through a symlink out of the directory succeeded")
	}
	if entries, _ := os.ReadDir(escape); len(entries) != 0 {
		t.Errorf("wrote outside the memory directory: %v", entries)
	}
}

// TestAppendConcurrent appends from many goroutines at once; the
// lock and the atomic replace must keep every line.
func TestAppendConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 5, 4, 9, 5, 0, 0, time.UTC)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := dailylog.Append(dir, fmt.Sprintf("entry %02d", i), now); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(dailylog.Path(dir, now))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	sort.Strings(lines)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("- 09:05 entry %02d", i))
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	now := time.Date(2026, 5, 4, 9, 5, 0, 0, time.UTC)
	// A busy day holds a few hundred bullets: start a new day every 200
	// appends so the figure is for a realistic file, not an ever-growing one.
	i := 0
	for b.Loop() {
		if _, err := dailylog.Append(dir, "user prefers tabs; deploys go through Argo", now.AddDate(0, 0, i/200)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func TestPathLocalDate(t *testing.T) {
	t.Parallel()
	// Local date, zero padded, even when UTC is already the next day.
	tz := time.FixedZone("UTC-5", -5*3600)
	at := time.Date(2026, 3, 5, 23, 30, 0, 0, tz)
	if got, want := dailylog.Path("/m", at), filepath.Join("/m", "logs", "2026", "03", "2026-03-05.md"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}
