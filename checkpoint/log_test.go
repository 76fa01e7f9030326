package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memdir/memdir"
)

func appendRaw(tb testing.TB, h *History, data string) {
	tb.Helper()
	f, err := os.OpenFile(h.logPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		tb.Fatal(err)
	}
}

// checkLogLines fails unless every line of the log is a complete JSON object.
func checkLogLines(tb testing.TB, h *History) {
	tb.Helper()
	data, err := os.ReadFile(h.logPath())
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		tb.Errorf("log does not end with a newline")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			tb.Errorf("log line %d is not JSON: %q", i+1, line)
		}
	}
}

func TestTornLastLineIsIgnoredThenCutOff(t *testing.T) {
	for _, tail := range []string{
		`{"type":"file-history-snapshot","messageId":"m9","snaps`,
		"\x00\x00\x00\x00",
		"{\"type\":\"file-history-snap\x00\x00\n",
	} {
		e := newEnv(t)
		h := e.history(t, "torn")
		seedSession(t, e, h)
		want := snapshots(t, h)
		appendRaw(t, h, tail)
		fresh := e.history(t, "torn")
		if diff := cmp.Diff(want, snapshots(t, fresh)); diff != "" {
			t.Errorf("tail %q: snapshots after a torn append (-want +got):\n%s", tail, diff)
		}
		// The writer that appended before the tear still works too.
		snapshot(t, h, "m5")
		checkLogLines(t, h)
		if got := snapshots(t, e.history(t, "torn")); len(got) != len(want)+1 || got[len(got)-1].MessageID != "m5" {
			t.Errorf("tail %q: after the next append: %d snapshots, last %q", tail, len(got), got[len(got)-1].MessageID)
		}
	}
}

func TestLeftoverTempFilesAreIgnored(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "temps")
	seedSession(t, e, h)
	want := snapshots(t, h)
	for _, name := range []string{"." + LogName + ".tmp-123", ".0123456789abcdef@v1.tmp-9", ".0123456789abcdef@v1.link-ab"} {
		if err := os.WriteFile(filepath.Join(h.Dir(), name), []byte("garbage{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fresh := e.history(t, "temps")
	if diff := cmp.Diff(want, snapshots(t, fresh)); diff != "" {
		t.Errorf("snapshots with temp files around (-want +got):\n%s", diff)
	}
	rewind(t, fresh, "m1", false)
	if diff := cmp.Diff(map[string]string{"a.txt": "one\n"}, e.files(t, "a.txt", "b.txt")); diff != "" {
		t.Errorf("rewind (-want +got):\n%s", diff)
	}
}

func TestBadLogIsRefusedNamingFileAndLine(t *testing.T) {
	header := `{"type":"memdir-file-history","version":1,"sessionId":"bad","cwd":"/p","logId":"x"}` + "\n"
	snap := `{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{%s},"timestamp":"2026-01-01T00:00:00Z"},"isSnapshotUpdate":false,"sequence":1}` + "\n"
	good := strings.Replace(snap, "%s", `"a":{"backupFileName":"0123456789abcdef@v1","version":1,"backupTime":"2026-01-01T00:00:00Z"}`, 1)
	for _, tc := range []struct{ name, log, want string }{
		{"bad middle line", header + "{nope\n" + good, "line 2"},
		{"no header", good, "header"},
		{"newer version", strings.Replace(header, `"version":1`, `"version":2`, 1), "newer"},
		{"unknown type", header + `{"type":"file-history-frobnicate"}` + "\n" + good, "unknown entry type"},
		{"backup name escapes", header + strings.Replace(good, "0123456789abcdef@v1", "../../etc/passwd", 1) + good, "contains '/'"},
		{"tracking path escapes", header + strings.Replace(good, `"a":`, `"../a":`, 1) + good, "tracking path"},
		{"track before snapshot", header + `{"type":"file-history-track","messageId":"m","trackingPath":"a","backup":{"backupFileName":null,"version":1,"backupTime":"2026-01-01T00:00:00Z"}}` + "\n" + good, "before any snapshot"},
		{"relative cwd", strings.Replace(header, `"/p"`, `"p"`, 1) + good, "not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			h := e.history(t, "bad")
			if err := os.MkdirAll(h.Dir(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(h.logPath(), []byte(tc.log), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := h.Snapshots(context.Background())
			if err == nil || !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), h.logPath()) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Snapshots() = %v, want ErrInvalid naming %s and %q", err, h.logPath(), tc.want)
			}
			// Nothing is lost: a write is refused too and the log is untouched.
			if _, err := h.Snapshot(context.Background(), "m2"); err == nil {
				t.Errorf("Snapshot on a bad log succeeded")
			}
			if got, _ := os.ReadFile(h.logPath()); string(got) != tc.log {
				t.Errorf("bad log was changed")
			}
		})
	}
}

func TestClaudeCodeSnapshotUpdateReplacesLatest(t *testing.T) {
	st := &state{cwd: "/p"}
	log := `{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{},"timestamp":"2026-01-01T00:00:00Z"},"isSnapshotUpdate":false}
{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{"a.ts":{"backupFileName":null,"version":1,"backupTime":"2026-01-01T00:00:01Z"}},"timestamp":"2026-01-01T00:00:00Z"},"isSnapshotUpdate":true}
`
	if _, err := parseEntries(st, []byte(log), 2, 0); err != nil {
		t.Fatal(err)
	}
	want := []*Snapshot{{MessageID: "m1", Sequence: 1, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Files: map[string]Backup{"a.ts": {Version: 1, Time: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)}}}}
	if diff := cmp.Diff(want, st.snapshots); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBackupJSONIsClaudeCodeShape(t *testing.T) {
	tm := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		b    Backup
		want string
	}{
		{Backup{Name: "0123456789abcdef@v2", Version: 2, Time: tm}, `{"backupFileName":"0123456789abcdef@v2","version":2,"backupTime":"2026-03-01T12:00:00Z"}`},
		{Backup{Version: 3, Time: tm}, `{"backupFileName":null,"version":3,"backupTime":"2026-03-01T12:00:00Z"}`},
	} {
		got, err := json.Marshal(tc.b)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.b, got, err, tc.want)
		}
		var back Backup
		if err := json.Unmarshal(got, &back); err != nil || back != tc.b {
			t.Errorf("round trip of %s = %+v, %v", got, back, err)
		}
	}
}

func TestLogIsCompacted(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "compact")
	e.write(t, "f", "x")
	snapshot(t, h, "m0")
	for i := range 150 {
		track(t, h, "f", "m")
		track(t, h, "new"+string(rune('a'+i%26))+"/g", "m")
		snapshot(t, h, "m")
	}
	want := snapshots(t, h)
	data, err := os.ReadFile(h.logPath())
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(data, []byte("\n")); lines > 1+2*maxSnapshots+40 {
		t.Errorf("log has %d lines for %d snapshots: not compacted", lines, len(want))
	}
	checkLogLines(t, h)
	if diff := cmp.Diff(want, snapshots(t, e.history(t, "compact")), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("after compaction, a fresh reader sees (-want +got):\n%s", diff)
	}
}

// FuzzParseLog feeds arbitrary bytes after a valid header. Parsing must not
// panic, and whatever it accepts must survive compaction unchanged.
func FuzzParseLog(f *testing.F) {
	f.Add([]byte(`{"type":"file-history-snapshot","messageId":"m1","snapshot":{"messageId":"m1","trackedFileBackups":{"a":{"backupFileName":"0123456789abcdef@v1","version":1,"backupTime":"2026-01-01T00:00:00Z"}},"timestamp":"2026-01-01T00:00:00Z"},"isSnapshotUpdate":false,"sequence":1}` + "\n"))
	f.Add([]byte(`{"type":"file-history-track","messageId":"m","trackingPath":"b","backup":{"backupFileName":null,"version":1,"backupTime":"2026-01-01T00:00:00Z"}}` + "\n{\"type\":"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := &state{cwd: "/p", logID: "x"}
		used, err := parseEntries(st, data, 2, 0)
		if err != nil {
			return
		}
		if used > int64(len(data)) {
			t.Fatalf("consumed %d of %d bytes", used, len(data))
		}
		out, next, err := compactData("s", st)
		if err != nil {
			t.Fatal(err)
		}
		nl := bytes.IndexByte(out, '\n')
		again := &state{cwd: "/p"}
		if _, err := parseEntries(again, out[nl+1:], 2, int64(nl+1)); err != nil {
			t.Fatalf("compacted log does not parse: %v\n%s", err, out)
		}
		if diff := cmp.Diff(next.snapshots, again.snapshots, cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(0)); diff != "" {
			t.Fatalf("compaction changed the snapshots (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(next.starts, again.starts, cmp.AllowUnexported(entryStart{}), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("compaction's snapshot starts differ from a reader's (-compaction +reader):\n%s", diff)
		}
	})
}

// FuzzTrackingPath checks that a tracking path accepted from a log never
// expands to somewhere outside the working directory unless it is absolute.
func FuzzTrackingPath(f *testing.F) {
	for _, s := range []string{"a.txt", "../a", "/etc/passwd", "a/../../b", "./a", "a//b", "", "a\x00b", `..\a`, "/work/proj", "/work/proj/.", ".", "a/../b", "a/.", "a/", "...", "a/..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		// Whatever Track accepts, it records as a key the log reader accepts
		// and that expands back to the same file.
		if abs, err := resolveArg("/work/proj", p); err == nil {
			key := trackingPath("/work/proj", abs)
			if err := checkTrackingPath(key); err != nil {
				t.Fatalf("Track(%q) would record key %q, which a reader refuses: %v", p, key, err)
			}
			if got := expand("/work/proj", key); got != abs {
				t.Fatalf("key %q of %q expands to %s, want %s", key, p, got, abs)
			}
		}
		// The join that snapshots use is expand's, for any cwd and key.
		for _, cwd := range []string{"/work/proj", "/", "/work/proj/", "/work//proj", "/work/./proj"} {
			if got, want := expandAll(cwd, []string{"a", p, "/b", p}), []string{expand(cwd, "a"), expand(cwd, p), "/b", expand(cwd, p)}; !slices.Equal(got, want) {
				t.Fatalf("expandAll(%q, %q) = %q, expand gives %q", cwd, p, got, want)
			}
			if cleanLocal(p) && (filepath.Clean(p) != p || !filepath.IsLocal(p)) {
				t.Fatalf("cleanLocal(%q), but Clean gives %q and IsLocal %v", p, filepath.Clean(p), filepath.IsLocal(p))
			}
		}
		if checkTrackingPath(p) != nil {
			return
		}
		abs := expand("/work/proj", p)
		if !filepath.IsAbs(p) && !within("/work/proj", abs) {
			t.Fatalf("relative tracking path %q expands outside the project: %s", p, abs)
		}
		if filepath.IsAbs(p) && abs != p {
			t.Fatalf("absolute tracking path %q changed to %s", p, abs)
		}
	})
}

// The hand-written encoder of snapshot entries writes what encoding/json
// writes, or declines.
func TestSnapshotEntryEncodingMatchesEncodingJSON(t *testing.T) {
	tm := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	local := time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name    string
		s       Snapshot
		update  bool
		decline bool
	}{
		{name: "empty", s: Snapshot{MessageID: "m", Sequence: 1, Time: tm, Files: map[string]Backup{}}},
		{name: "nil files", s: Snapshot{MessageID: "m", Sequence: 2, Time: tm}},
		{name: "files", update: true, s: Snapshot{MessageID: "0f7c-uuid", Sequence: 30, Time: local, Files: map[string]Backup{
			"src/b.go": {Name: "0123456789abcdef@v2", Version: 2, Time: local},
			"/abs/a b": {Version: 3, Time: tm},
			"a.go":     {Name: "fedcba9876543210@v1", Version: 1},
		}}},
		{name: "escaped key", decline: true, s: Snapshot{MessageID: "m", Time: tm, Files: map[string]Backup{"a<b>&\"c\\\t": {Version: 1, Time: tm}}}},
		{name: "non-ASCII key", decline: true, s: Snapshot{MessageID: "m", Time: tm, Files: map[string]Backup{"café": {Version: 1, Time: tm}}}},
		{name: "escaped message", decline: true, s: Snapshot{MessageID: "m\u2028", Time: tm}},
		{name: "year 10000", decline: true, s: Snapshot{MessageID: "m", Time: tm, Files: map[string]Backup{"a": {Version: 1, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSnapshotEntry(&tc.s)
			e.IsSnapshotUpdate = tc.update
			got, ok := appendSnapshotEntry([]byte("prefix"), &e)
			if ok == tc.decline {
				t.Fatalf("encoded = %v, want %v", ok, !tc.decline)
			}
			if !ok {
				if string(got) != "prefix" {
					t.Errorf("declined but appended %q", got)
				}
				return
			}
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix"+string(want), string(got)); diff != "" {
				t.Errorf("(-encoding/json +ours):\n%s", diff)
			}
		})
	}
}
