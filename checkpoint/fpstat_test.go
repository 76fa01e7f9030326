package checkpoint

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestStillFingerprintedAgreesWithTheFullPath holds the one-lstat check to
// what it stands for, os.Lstat then checkRegular then fingerprint.matches,
// over every way a file can change or be replaced after its fingerprint.
func TestStillFingerprintedAgreesWithTheFullPath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stillFingerprinted is false everywhere but Linux, where the full path decides")
	}
	e := newEnv(t)
	const backup = "0123456789abcdef@v1"
	later := time.Now().Add(time.Hour)
	cases := map[string]struct {
		change func(p string)
		want   bool
		before func(p string) // what is done before the fingerprint, if not nil
	}{
		"unchanged": {func(string) {}, true, nil},
		"rewritten": {func(p string) { os.WriteFile(p, []byte("other\n"), 0o644) }, false, nil},
		"same size": {func(p string) { os.WriteFile(p, []byte("CONTENT\n"), 0o644) }, false, nil},
		"mtime put back": {func(p string) {
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte("CONTENT\n"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, false, nil},
		"chmod":                {func(p string) { os.Chmod(p, 0o600) }, false, nil},
		"setuid":               {func(p string) { os.Chmod(p, 0o644|os.ModeSetuid) }, false, nil},
		"hard link":            {func(p string) { os.Link(p, p+".link") }, false, nil},
		"removed":              {func(p string) { os.Remove(p) }, false, nil},
		"symbolic link":        {func(p string) { os.Remove(p); os.Symlink("elsewhere", p) }, false, nil},
		"directory":            {func(p string) { os.Remove(p); os.Mkdir(p, 0o755) }, false, nil},
		"another file":         {func(p string) { os.WriteFile(p+".new", []byte("content\n"), 0o644); os.Rename(p+".new", p) }, false, nil},
		"touched, no edit":     {func(p string) { now := time.Now(); os.Chtimes(p, now, now) }, false, nil},
		"setuid, unchanged":    {func(string) {}, true, func(p string) { os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid) }},
		"sticky, unchanged":    {func(string) {}, true, func(p string) { os.Chmod(p, 0o600|os.ModeSticky) }},
		"two links, unchanged": {func(string) {}, false, func(p string) { os.Link(p, p+".link") }},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := e.path(name + ".txt")
			e.write(t, name+".txt", "content\n")
			if c.before != nil {
				c.before(p)
			}
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			fp, ok := fingerprintOf(fi, backup, later)
			if !ok {
				t.Fatal("no fingerprint")
			}
			time.Sleep(10 * time.Millisecond) // so that a change moves the times
			c.change(p)
			full := false
			if fi, err := lstatMaybe(p); err == nil && fi != nil && checkRegular(fi, p) == nil {
				full = fp.matches(fi, backup)
			}
			if full != c.want {
				t.Fatalf("the full path says %v, the case wants %v", full, c.want)
			}
			if got := stillFingerprinted(p, fp); got != full {
				t.Errorf("stillFingerprinted = %v, the full path says %v", got, full)
			}
			if !full {
				return
			}
			// Each part of the fingerprint on its own.
			for part, off := range map[string]func(*fingerprint){
				"device": func(f *fingerprint) { f.id.dev++ }, "inode": func(f *fingerprint) { f.id.ino++ },
				"size": func(f *fingerprint) { f.size++ }, "mode": func(f *fingerprint) { f.mode ^= 0o001 },
				"mtime": func(f *fingerprint) { f.mtime = f.mtime.Add(1) }, "ctime": func(f *fingerprint) { f.ctime = f.ctime.Add(1) },
			} {
				bad := fp
				off(&bad)
				if stillFingerprinted(p, bad) {
					t.Errorf("a fingerprint with another %s matches", part)
				}
			}
		})
	}
}

// TestUnchangedSnapshotSharesNothingATrackChanges takes a snapshot that
// finds every file as its fingerprint had it, whose files are then the
// latest's own map, and tracks a new file: the track must reach the new
// snapshot only, in this process and in a new one.
func TestUnchangedSnapshotSharesNothingATrackChanges(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "s")
	oldFiles(h)
	e.write(t, "a.txt", "a\n")
	e.write(t, "b.txt", "b\n")
	track(t, h, e.path("a.txt"), "m0")
	track(t, h, e.path("b.txt"), "m0")
	snapshot(t, h, "m1") // fingerprints taken
	r := snapshot(t, h, "m2")
	if r.Unchanged != 2 {
		t.Fatalf("snapshot m2: %d unchanged, want 2", r.Unchanged)
	}
	e.write(t, "c.txt", "c\n")
	track(t, h, e.path("c.txt"), "m2")
	for _, h := range []*History{h, e.history(t, "s")} {
		snaps, err := h.Snapshots(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for _, s := range snaps {
			keys := make([]string, 0, len(s.Files))
			for k := range s.Files {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			got = append(got, keys)
		}
		want := [][]string{{"a.txt", "b.txt"}, {"a.txt", "b.txt"}, {"a.txt", "b.txt", "c.txt"}}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("tracked files by snapshot: %v, want %v", got, want)
		}
	}
}
