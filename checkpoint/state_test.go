package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir/internal/framed"
)

// oldFiles makes a session's files look long settled, as the fingerprints
// are only taken of a file whose last change is well in the past.
func oldFiles(h *History) { h.wall = func() time.Time { return time.Now().Add(time.Hour) } }

// fullState parses the whole log, as a process without a state file does.
func fullState(tb testing.TB, h *History) *logFile {
	tb.Helper()
	lf, err := h.readLog(nil, false)
	if err != nil {
		tb.Fatal(err)
	}
	return lf
}

// savedState decodes the state file, failing the test when it is unusable.
func savedState(tb testing.TB, h *History) *logFile {
	tb.Helper()
	data, err := os.ReadFile(h.statePath())
	if err != nil {
		tb.Fatal(err)
	}
	lf, err := decodeState(data)
	if err != nil {
		tb.Fatalf("state file: %v", err)
	}
	return lf
}

// checkStateMatchesLog fails unless the state file describes the whole log:
// the same latest snapshot, counts and position.
func checkStateMatchesLog(tb testing.TB, h *History) {
	tb.Helper()
	full, saved := fullState(tb, h), savedState(tb, h)
	type summary struct {
		Cwd, LogID                                    string
		Sequence, Retained, Entries, LiveTracks, Dead int
		Offset                                        int64
		ID                                            fileID
		Latest                                        *Snapshot
		Starts                                        []entryStart
	}
	sum := func(lf *logFile) summary {
		st := lf.st
		return summary{st.cwd, st.logID, st.sequence, st.retained(), st.entries, st.liveTracks, st.dead(), lf.offset, lf.id, st.latest(), st.starts}
	}
	if diff := cmp.Diff(sum(full), sum(saved), cmp.AllowUnexported(fileID{}, entryStart{})); diff != "" {
		tb.Errorf("state file does not describe the log (-log +state):\n%s", diff)
	}
}

// multiSession tracks a few files (one deleted, one never created) and takes
// n snapshots with edits in between.
func multiSession(tb testing.TB, e env, h *History, n int) {
	tb.Helper()
	e.write(tb, "a.txt", "a0\n")
	e.write(tb, "dir/b.txt", "b0\n")
	e.write(tb, "gone.txt", "g\n")
	snapshot(tb, h, "m0")
	for _, f := range []string{"a.txt", "dir/b.txt", "gone.txt", "never.txt"} {
		track(tb, h, f, "m0")
	}
	for i := 1; i <= n; i++ {
		if i%3 == 0 {
			e.write(tb, "a.txt", fmt.Sprintf("a%d\n", i))
		}
		if i == 2 {
			e.remove(tb, "gone.txt")
		}
		snapshot(tb, h, fmt.Sprintf("m%d", i))
	}
}

func TestStateFileRoundTrip(t *testing.T) {
	for _, n := range []int{0, 5, 130} {
		t.Run(fmt.Sprintf("snapshots=%d", n), func(t *testing.T) {
			e := newEnv(t)
			h := e.history(t, "round")
			oldFiles(h)
			multiSession(t, e, h, n)
			checkStateMatchesLog(t, h)
			saved := savedState(t, h)
			if n > 0 && len(saved.fps) == 0 {
				t.Errorf("no fingerprints saved for settled files")
			}
			if diff := cmp.Diff(h.cache.fps, saved.fps, cmp.AllowUnexported(fingerprint{}, fileID{})); diff != "" {
				t.Errorf("fingerprints after a round trip (-memory +file):\n%s", diff)
			}
			// Encoding what was decoded gives the same bytes.
			data, err := os.ReadFile(h.statePath())
			if err != nil {
				t.Fatal(err)
			}
			again, err := encodeState(saved)
			if err != nil || !bytes.Equal(data, again) {
				t.Errorf("re-encoded state differs (%v):\n%s\nvs\n%s", err, data, again)
			}
			// A new process takes the next snapshot from the state file
			// and sees what the old one saw.
			want := snapshots(t, h)
			fresh := e.history(t, "round")
			r := snapshot(t, fresh, "next")
			if r.Unchanged != 4 {
				t.Errorf("fresh snapshot: %+v, want 4 unchanged", r)
			}
			if len(want) == maxSnapshots {
				want = want[1:]
			}
			want = append(want, r.Snapshot)
			if diff := cmp.Diff(want, snapshots(t, fresh), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("snapshots after a fresh one (-want +got):\n%s", diff)
			}
			checkStateMatchesLog(t, fresh)
		})
	}
}

func TestNewProcessReadsStateNotLog(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "cheap")
	oldFiles(h)
	multiSession(t, e, h, 120)
	logInfo, err := os.Stat(h.logPath())
	if err != nil {
		t.Fatal(err)
	}
	stateInfo, err := os.Stat(h.statePath())
	if err != nil {
		t.Fatal(err)
	}
	fresh := e.history(t, "cheap")
	oldFiles(fresh)
	snapshot(t, fresh, "next")
	s := fresh.Stats()
	// The header line of the log, the state file, nothing else.
	if s.LogBytesRead > stateInfo.Size()+4096 || s.LogBytesRead >= logInfo.Size() {
		t.Errorf("a new process's snapshot read %d bytes of state; the state file is %d, the log %d", s.LogBytesRead, stateInfo.Size(), logInfo.Size())
	}
	if s.BytesRead != 0 {
		t.Errorf("a new process's snapshot of unchanged files read %d bytes of content", s.BytesRead)
	}
}

// stateParts returns a state file's two sections, its header and its
// file lines.
func stateParts(tb testing.TB, data []byte) (hdr, lines []byte) {
	tb.Helper()
	f, err := stateFormat.Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	if hdr, err = f.Section(stateHeaderSection); err == nil {
		lines, err = f.Section(stateFilesSection)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return hdr, lines
}

// reframe builds a state file of format ft from a header and file lines,
// with good checksums, so that damage to them reaches decodeState's own
// checks.
func reframe(ft framed.Format, hdr, lines []byte) []byte {
	w := ft.NewWriter(nil)
	w.Add(stateHeaderSection, hdr)
	w.Add(stateFilesSection, lines)
	b, err := w.Finish()
	if err != nil {
		panic(err)
	}
	return b
}

// textState renders a header and file lines as version 2 wrote a state
// file: text, the header line naming its type and version, and a CRC-32
// line at the end.
func textState(hdr, lines []byte) []byte {
	body := slices.Concat([]byte(`{"type":"memdir-checkpoint-state","version":2,`), hdr[1:], []byte("\n"), lines)
	return fmt.Appendf(body, "crc32 %08x\n", crc32.ChecksumIEEE(body))
}

// corruptions returns ways to damage a state file.
func corruptions(tb testing.TB, data []byte) map[string][]byte {
	hdr, lines := stateParts(tb, data)
	frame := func(hdr, lines []byte) []byte { return reframe(stateFormat, hdr, lines) }
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x20
	out := map[string][]byte{
		"empty":            {},
		"garbage":          []byte("not a state file\n"),
		"truncated":        data[:len(data)/2],
		"last byte cut":    data[:len(data)-1],
		"flipped byte":     flipped,
		"foreign version":  reframe(framed.Format{Magic: stateFormat.Magic, Version: stateFormat.Version + 1}, hdr, lines),
		"previous version": textState(hdr, lines),
		"another log":      frame(bytes.Replace(hdr, []byte(`"logId":"`), []byte(`"logId":"x`), 1), lines),
		"offset past end":  frame(bytes.Replace(hdr, []byte(`"offset":`), []byte(`"offset":9`), 1), lines),
		"escaping path":    frame(hdr, bytes.Replace(slices.Concat([]byte("\n"), lines), []byte("\na.txt\t"), []byte("\n../a.txt\t"), 1)[1:]),
		"escaping backup":  frame(hdr, escapeBackup(lines)),
		"file line lost":   frame(hdr, lines[:bytes.LastIndex(lines[:len(lines)-1], []byte("\n"))+1]),
		"no last newline":  frame(hdr, lines[:len(lines)-1]),
	}
	return out
}

// escapeBackup points the first backup name in a state file outside the
// session directory.
func escapeBackup(body []byte) []byte {
	before, _, _ := bytes.Cut(body, []byte("@v"))
	name := bytes.LastIndex(before, []byte("\t")) + 1
	return slices.Concat(body[:name], []byte("../"), body[name:])
}

func TestDamagedStateFileIsRebuilt(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "damage")
	oldFiles(h)
	multiSession(t, e, h, 6)
	good, err := os.ReadFile(h.statePath())
	if err != nil {
		t.Fatal(err)
	}
	wantAll := snapshots(t, h)
	for name, bad := range corruptions(t, good) {
		t.Run(name, func(t *testing.T) {
			if name != "garbage" && name != "empty" && bytes.Equal(bad, good) {
				t.Fatal("the damage changed nothing")
			}
			if _, err := decodeState(bad); err == nil && name != "another log" && name != "offset past end" {
				t.Errorf("damaged state file decoded without error")
			}
			if err := os.WriteFile(h.statePath(), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			fresh := e.history(t, "damage")
			if diff := cmp.Diff(wantAll, snapshots(t, fresh)); diff != "" {
				t.Errorf("snapshots with a damaged state file (-want +got):\n%s", diff)
			}
			checkStateMatchesLog(t, fresh)
			// A snapshot works too, and leaves a good state file behind.
			if err := os.WriteFile(h.statePath(), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			again := e.history(t, "damage")
			r := snapshot(t, again, "after-"+strings.ReplaceAll(name, " ", "-"))
			if r.Unchanged != 4 || r.Snapshot.Sequence != wantAll[len(wantAll)-1].Sequence+1 {
				t.Errorf("snapshot after damage: %+v", r)
			}
			checkStateMatchesLog(t, again)
			// Put the session back as it was for the next case.
			restoreSession(t, e, h, wantAll)
		})
	}
}

// restoreSession rewinds the log to hold want again, through the same
// compaction a session does, and rewrites the state file.
func restoreSession(tb testing.TB, e env, h *History, want []Snapshot) {
	tb.Helper()
	st := &state{cwd: e.cwd}
	for i := range want {
		s := want[i].clone()
		st.snapshots = append(st.snapshots, &s)
		st.sequence = s.Sequence
	}
	err := h.locked(context.Background(), false, func(t *txn) error { return t.replace(st) })
	if err != nil {
		tb.Fatal(err)
	}
}

func TestOldSessionWithoutStateFile(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "old")
	multiSession(t, e, h, 4)
	want := snapshots(t, h)
	// A session written by a memdir that kept no state file.
	if err := os.Remove(h.statePath()); err != nil {
		t.Fatal(err)
	}
	fresh := e.history(t, "old")
	if diff := cmp.Diff(want, snapshots(t, fresh)); diff != "" {
		t.Errorf("old session (-want +got):\n%s", diff)
	}
	checkStateMatchesLog(t, fresh)
	rewind(t, e.history(t, "old"), "m2", false)
	if diff := cmp.Diff(map[string]string{"a.txt": "a0\n", "dir/b.txt": "b0\n"}, e.files(t, "a.txt", "dir/b.txt", "gone.txt", "never.txt")); diff != "" {
		t.Errorf("rewind of an old session (-want +got):\n%s", diff)
	}
}

// An older memdir appends to the log without updating the state file; the
// next process folds what it appended onto the state file's view.
func TestStateFileBehindTheLog(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "behind")
	multiSession(t, e, h, 3)
	stale, err := os.ReadFile(h.statePath())
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "late.txt", "late\n")
	track(t, h, "late.txt", "m3")
	snapshot(t, h, "m4")
	want := snapshots(t, h)
	if err := os.WriteFile(h.statePath(), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := e.history(t, "behind")
	r := track(t, fresh, "late.txt", "m4")
	if !r.AlreadyTracked || r.Sequence != want[len(want)-1].Sequence {
		t.Errorf("track after an append the state file missed: %+v", r)
	}
	checkStateMatchesLog(t, fresh)
	if diff := cmp.Diff(want, snapshots(t, fresh)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An edit that keeps the size and puts the old mtime back is still seen by a
// new process holding a fingerprint: the change time moved.
func TestFingerprintSeesSameSizeEditWithOldMtime(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "fp")
	oldFiles(h)
	begin(t, e, h, "f", "aaaa\n", "m1")
	snapshot(t, h, "m2") // fingerprints f
	if _, ok := savedState(t, h).fps["f"]; !ok {
		t.Fatal("no fingerprint saved for f")
	}
	fi, err := os.Lstat(e.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	waitForChangeTimeAfter(t, e, changeTime(fi))
	e.write(t, "f", "bbbb\n")
	if err := os.Chtimes(e.path("f"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	fresh := e.history(t, "fp")
	oldFiles(fresh)
	r := snapshot(t, fresh, "m3")
	if len(r.Changed) != 1 {
		t.Fatalf("edit with the old mtime put back: %+v, want f changed", r)
	}
	data, err := os.ReadFile(filepath.Join(fresh.Dir(), r.Snapshot.Files["f"].Name))
	if err != nil || string(data) != "bbbb\n" {
		t.Errorf("new backup = %q, %v", data, err)
	}
}

// waitForChangeTimeAfter waits until a file written now gets a change time
// after t, so that an edit cannot share the fingerprinted one's; the
// filesystem clock is coarser than the nanoseconds it reports.
func waitForChangeTimeAfter(tb testing.TB, e env, t time.Time) {
	tb.Helper()
	for {
		e.write(tb, ".probe", "x")
		fi, err := os.Lstat(e.path(".probe"))
		if err != nil {
			tb.Fatal(err)
		}
		if changeTime(fi).After(t) {
			e.remove(tb, ".probe")
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Several Histories, as several hook processes would be, snapshot one
// session at once, each starting from the state file: none loses another's
// snapshot or tracked file, and the state file ends up describing the log.
func TestConcurrentFreshHistories(t *testing.T) {
	e := newEnv(t)
	const n = 12
	prefixes := []string{"f1", "f2", "f3"}
	e.write(t, "shared", "start\n")
	snapshot(t, e.history(t, "fresh"), "start")
	var wg sync.WaitGroup
	errs := make([]error, len(prefixes))
	for i, p := range prefixes {
		wg.Go(func() {
			for j := range n {
				h, err := New(e.config, "fresh", &Options{Cwd: e.cwd})
				if err != nil {
					errs[i] = err
					return
				}
				if err := playTurn(h, e.cwd, fmt.Sprintf("%s-%d", p, j)); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkConcurrentResult(t, e, "fresh", prefixes, n)
}

// Paths and names with tabs, newlines, quotes and backslashes survive the
// state file's line format.
func TestStateFileOddNames(t *testing.T) {
	tm := time.Date(2026, 3, 1, 12, 0, 0, 7, time.UTC)
	files := map[string]Backup{
		"plain.txt":           {Name: "0123456789abcdef@v1", Version: 1, Time: tm},
		"tab\there":           {Name: "0123456789abcdef@v2", Version: 2, Time: tm},
		"new\nline":           {Version: 3, Time: tm},
		`"quoted" \back`:      {Name: "name\twith\"tab@v1", Version: 1, Time: tm},
		"-":                   {Name: "-", Version: 4, Time: tm},
		"/abs/ünïcode path":   {Name: "fedcba9876543210@v9", Version: 9, Time: tm},
		"crc32 00000000":      {Version: 1, Time: tm},
		"x\ncrc32 00000000\n": {Version: 1, Time: tm},
	}
	mt := time.Unix(1700000000, 123)
	lf := &logFile{
		st: &state{cwd: "/p", logID: "id", sequence: 7, older: 3, entries: 9, liveTracks: 1, snapshots: []*Snapshot{{MessageID: "m7", Sequence: 7, Time: tm, Files: files}},
			starts: []entryStart{{100, 0, 2, false}, {200, 3, 4, true}, {300, 5, 6, true}, {400, 7, 7, true}}},
		id:     fileID{dev: 1, ino: 2},
		offset: 1234,
		fps: map[string]fingerprint{
			"tab\there": {backup: "0123456789abcdef@v2", id: fileID{3, 4}, size: 5, mode: 0o644, mtime: mt, ctime: mt.Add(time.Second)},
		},
	}
	data, err := encodeState(lf)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeState(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(lf.st.latest(), back.st.latest()); diff != "" {
		t.Errorf("latest snapshot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lf.fps, back.fps, cmp.AllowUnexported(fingerprint{}, fileID{})); diff != "" {
		t.Errorf("fingerprints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lf.st.starts, back.st.starts, cmp.AllowUnexported(entryStart{})); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
	if back.st.retained() != 4 || back.st.sequence != 7 || back.st.entries != 9 || back.st.liveTracks != 1 || back.offset != 1234 || back.id != lf.id {
		t.Errorf("counts: %+v %+v", back, back.st)
	}
}

// A long session of new processes: the log is cut at the oldest retained
// snapshot, keeping the lines after it as they were, and reads the same as
// the snapshots that were taken.
func TestLongSessionOfNewProcessesCutsTheLog(t *testing.T) {
	e := newEnv(t)
	e.write(t, "a.txt", "0\n")
	e.write(t, "b.txt", "b\n")
	first := e.history(t, "long")
	snapshot(t, first, "m0")
	track(t, first, "a.txt", "m0")
	track(t, first, "b.txt", "m0")
	var taken []Snapshot
	logIDs := map[string]bool{}
	for i := 1; i <= 400; i++ {
		if i%7 == 0 {
			e.write(t, "a.txt", fmt.Sprintf("%d\n", i))
		}
		h := e.history(t, "long")
		if i == 300 {
			// A track line, which a rewrite would fold into the snapshots
			// and a cut keeps.
			track(t, h, "c.txt", fmt.Sprintf("m%d", i-1))
		}
		r := snapshot(t, h, fmt.Sprintf("m%d", i))
		taken = append(taken, r.Snapshot)
		logIDs[h.cache.st.logID] = true
		checkLogLines(t, h)
	}
	want := taken[len(taken)-maxSnapshots:]
	got := snapshots(t, e.history(t, "long"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after 400 snapshots (-taken +read):\n%s", diff)
	}
	// Compactions after snapshots 233 and 366.
	if len(logIDs) != 3 {
		t.Errorf("the log was compacted %d times in 400 snapshots, want 2", len(logIDs)-1)
	}
	data, err := os.ReadFile(first.logPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"type":"file-history-track","messageId":"m299","trackingPath":"c.txt"`)) {
		t.Errorf("the track line is gone: the log was rewritten, not cut")
	}
	if lines := bytes.Count(data, []byte("\n")); lines > 1+2*maxSnapshots+40 {
		t.Errorf("log has %d lines for %d snapshots: not compacted", lines, maxSnapshots)
	}
	checkStateMatchesLog(t, e.history(t, "long"))
}

// A log written without sequence numbers (Claude Code's entries) cannot be
// cut, as its numbering depends on what came before; it is rewritten.
func TestLogWithoutSequencesIsRewrittenNotCut(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "noseq")
	if err := os.MkdirAll(h.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	fmt.Fprintf(&log, `{"type":"memdir-file-history","version":1,"sessionId":"noseq","cwd":%q,"logId":"x"}`+"\n", e.cwd)
	for i := range 240 {
		fmt.Fprintf(&log, `{"type":"file-history-snapshot","messageId":"c%d","snapshot":{"messageId":"c%d","trackedFileBackups":{},"timestamp":"2026-01-01T00:00:00Z"},"isSnapshotUpdate":false}`+"\n", i, i)
	}
	if err := os.WriteFile(h.logPath(), []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := snapshot(t, h, "mine")
	if r.Snapshot.Sequence != 241 {
		t.Errorf("new snapshot has sequence %d, want 241", r.Snapshot.Sequence)
	}
	all := snapshots(t, e.history(t, "noseq"))
	if len(all) != maxSnapshots || all[0].MessageID != "c141" || all[0].Sequence != 142 || all[99].MessageID != "mine" {
		t.Errorf("after compaction: %d snapshots, first %s (seq %d), last %s", len(all), all[0].MessageID, all[0].Sequence, all[len(all)-1].MessageID)
	}
	data, err := os.ReadFile(h.logPath())
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 1+maxSnapshots {
		t.Errorf("log has %d lines, want the header and %d snapshots", n, maxSnapshots)
	}
}

// Tracking a new file in a new process late in a session reads the state
// file, not the log, and gives it v1.
func TestTrackNewFileInNewProcessReadsStateOnly(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "tracknew")
	multiSession(t, e, h, 120)
	logInfo, err := os.Stat(h.logPath())
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "brand-new.txt", "new\n")
	fresh := e.history(t, "tracknew")
	r := track(t, fresh, "brand-new.txt", "m120")
	if r.AlreadyTracked || r.Backup.Version != 1 || !r.Backup.Exists() {
		t.Errorf("track of a new file: %+v", r)
	}
	if got := fresh.Stats().LogBytesRead; got >= logInfo.Size()/4 {
		t.Errorf("tracking a new file read %d bytes of state; the log is %d", got, logInfo.Size())
	}
	checkStateMatchesLog(t, fresh)
}

// When a snapshot dropped a file that an earlier one holds (as Claude Code's
// update entries can), tracking it again in a new process reads the older
// snapshots, so its new version does not overwrite the backup they name.
func TestTrackFileDroppedByAnUpdateGetsANewVersion(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "dropped")
	begin(t, e, h, "x.txt", "x1\n", "m1")
	e.write(t, "other.txt", "o\n")
	track(t, h, "other.txt", "m1")
	snapshot(t, h, "m2")
	// Replace the latest snapshot with one that lacks x.txt.
	latest := snapshots(t, h)[1]
	delete(latest.Files, "x.txt")
	e2 := newSnapshotEntry(&latest)
	e2.IsSnapshotUpdate = true
	line, _, err := marshalLines(e2)
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, h, string(line))
	e.write(t, "x.txt", "x2\n")
	fresh := e.history(t, "dropped")
	r := track(t, fresh, "x.txt", "m2")
	if r.AlreadyTracked || r.Backup.Version != 2 {
		t.Fatalf("re-track of a dropped file: %+v, want version 2", r)
	}
	v1, err := os.ReadFile(filepath.Join(fresh.Dir(), BackupName(e.path("x.txt"), 1)))
	if err != nil || string(v1) != "x1\n" {
		t.Errorf("v1 backup = %q, %v; want it untouched", v1, err)
	}
}

// The file line's numbers: times as Unix seconds and nanoseconds, before and
// after 1970, and every way a number can be malformed.
func TestStateFileLineNumbers(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0), time.Unix(1700000000, 999_999_999), time.Unix(-1, 5),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 1, time.UTC),
	} {
		b := appendUnixTime(nil, tm)
		got, rest, ok := cutUnixTime(string(b))
		if !ok || rest != "" || !got.Equal(tm) {
			t.Errorf("%v: %q reads back as %v, %q, %v", tm, b, got, rest, ok)
		}
		line := "k\tn@v1\t1\t" + string(b) + "\t1 2 3 420 " + string(b) + " " + string(b)
		key, bk, fp, err := decodeFileLine(line)
		if err != nil || key != "k" || !bk.Time.Equal(tm) || fp == nil || !fp.mtime.Equal(tm) || !fp.ctime.Equal(tm) {
			t.Errorf("%q: %q %+v %+v %v", line, key, bk, fp, err)
		}
	}
	good := "k\tn@v1\t1\t1700000000 5\t1 2 3 420 1700000000 6 1700000001 7"
	if _, _, _, err := decodeFileLine(good); err != nil {
		t.Fatalf("%q: %v", good, err)
	}
	for _, bad := range []string{
		"k\tn@v1\t1\t1700000000\t-",                 // no nanoseconds
		"k\tn@v1\t1\t1700000000 1000000000\t-",      // nanoseconds overflow
		"k\tn@v1\t1\t1700000000 -1\t-",              // negative nanoseconds
		"k\tn@v1\t1\t1700000000 5 6\t-",             // a number too many
		"k\tn@v1\t1\t+1700000000 5\t-",              // a plus sign
		"k\tn@v1\t1\t2026-01-01T00:00:00Z\t-",       // version 1's RFC 3339
		"k\tn@v1\t1\t1700000000  5\t-",              // two spaces
		"k\tn@v1\t1\t9999999999999999999 5\t-",      // too many digits
		"k\tn@v1\t0\t1700000000 5\t-",               // version 0
		"k\tn@v1\t1\t1700000000 5",                  // a field short
		"k\tn@v1\t1\t1700000000 5\t-\t-",            // a field too many
		"k\tn@v1\t1\t1700000000 5\t1 2 3 420 1 6 1", // fingerprint short
		"k\tn@v1\t1\t1700000000 5\t1 2 3 420 1 6 1 7 8",
		"k\tn@v1\t1\t1700000000 5\t1 2 3 420 1 6 1 7 ",
		"k\tn@v1\t1\t1700000000 5\t-1 2 3 420 1 6 1 7",
		"k\tn@v1\t1\t1700000000 5\t1 2 x 420 1 6 1 7",
		"k\t\"\"\t1\t1700000000 5\t1 2 3 420 1 6 1 7", // fingerprint of a null entry
		"../k\tn@v1\t1\t1700000000 5\t-",
		"k\t../n@v1\t1\t1700000000 5\t-",
	} {
		if key, b, fp, err := decodeFileLine(bad); err == nil {
			t.Errorf("%q decoded: %q %+v %+v", bad, key, b, fp)
		}
	}
}

// The file lines must be in strictly increasing order of tracking path, as
// encodeState writes them, which also rules out a path listed twice; a state
// file of the previous format version (text, not framed) is refused.
func TestStateFileLinesOutOfOrder(t *testing.T) {
	tm := time.Unix(1700000000, 0).UTC()
	lf := &logFile{
		st: &state{cwd: "/p", logID: "id", sequence: 1, entries: 1, snapshots: []*Snapshot{{MessageID: "m1", Sequence: 1, Time: tm,
			Files: map[string]Backup{"a": {Version: 1, Time: tm}, "b": {Version: 1, Time: tm}, "c": {Version: 1, Time: tm}}}},
			starts: []entryStart{{100, 0, 1, true}}},
		offset: 1234,
	}
	data, err := encodeState(lf)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeState(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.latestKeys(), []string{"a", "b", "c"}) || back.keysOf != back.st.latest() {
		t.Errorf("decoded keys %q", back.keys)
	}
	hdr, lines := stateParts(t, data)
	ls := bytes.SplitAfter(lines, []byte("\n"))[:3]
	for name, bad := range map[string][]byte{
		"swapped":          reframe(stateFormat, hdr, slices.Concat(ls[1], ls[0], ls[2])),
		"twice":            reframe(stateFormat, hdr, slices.Concat(ls[0], ls[0], ls[2])),
		"previous version": textState(hdr, lines),
		"extra line":       reframe(stateFormat, hdr, slices.Concat(lines, ls[2])),
	} {
		if _, err := decodeState(bad); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if _, err := decodeState(textState(hdr, lines)); !errors.Is(err, framed.ErrMagic) {
		t.Errorf("a version 2 state file: %v, want framed.ErrMagic", err)
	}
}

// FuzzDecodeState feeds arbitrary headers and file lines, framed with good
// checksums so that the parser proper is reached. Decoding must not panic,
// and what decodes reads the same once encoded again. Seeds are in
// testdata/fuzz/FuzzDecodeState.
func FuzzDecodeState(f *testing.F) {
	tm := time.Date(2026, 3, 1, 12, 0, 0, 7, time.UTC)
	lf := &logFile{
		st: &state{cwd: "/p", logID: "id", sequence: 2, entries: 2, snapshots: []*Snapshot{{MessageID: "m2", Sequence: 2, Time: tm,
			Files: map[string]Backup{"a": {Name: "0123456789abcdef@v1", Version: 1, Time: tm}, "tab\there": {Version: 2, Time: tm}}}},
			starts: []entryStart{{100, 0, 1, true}, {200, 1, 2, true}}},
		offset: 1234, fps: map[string]fingerprint{"a": {backup: "0123456789abcdef@v1", id: fileID{3, 4}, size: 5, mode: 0o644, mtime: tm, ctime: tm}},
	}
	data, err := encodeState(lf)
	if err != nil {
		f.Fatal(err)
	}
	hdr, lines := stateParts(f, data)
	f.Add(hdr, lines)
	f.Add(hdr, lines[:len(lines)/2])
	f.Fuzz(func(t *testing.T, hdr, lines []byte) {
		lf, err := decodeState(reframe(stateFormat, hdr, lines))
		if err != nil {
			return
		}
		again, err := encodeState(lf)
		if err != nil {
			t.Fatal(err)
		}
		lf2, err := decodeState(again)
		if err != nil {
			t.Fatalf("re-encoded state does not decode: %v\n%s", err, again)
		}
		if diff := cmp.Diff(lf.st.latest(), lf2.st.latest()); diff != "" {
			t.Fatalf("latest snapshot after a round trip (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(lf.fps, lf2.fps, cmp.AllowUnexported(fingerprint{}, fileID{})); diff != "" {
			t.Fatalf("fingerprints after a round trip (-first +second):\n%s", diff)
		}
	})
}

// appendField quotes exactly what needs it: "", "-", and anything holding a
// control character, a quote or a backslash; what it writes reads back.
func TestAppendFieldQuoting(t *testing.T) {
	needs := func(s string) bool {
		return s == "" || s == "-" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' })
	}
	cases := []string{"", "-", "--", "a", "a b", "ünï", "\xff", "a\xffb", "\u2028", "\u0080", "tab\t", `q"`, `b\`, "\x7f"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range cases {
		got := string(appendField(nil, s))
		if quoted := strings.HasPrefix(got, `"`); quoted != needs(s) {
			t.Errorf("appendField(%q) = %s: quoted %v, want %v", s, got, quoted, needs(s))
		}
		if back, err := field(got); err != nil || back != s {
			t.Errorf("field(%s) = %q, %v; want %q", got, back, err, s)
		}
	}
}
