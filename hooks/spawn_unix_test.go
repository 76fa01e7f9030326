//go:build linux

package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sessionOf reads the session id of a process from /proc.
func sessionOf(tb testing.TB, pid string) string {
	tb.Helper()
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return fields[3]
}

// TestStartDetached starts a shell that reports its session and whether it
// could read standard input, and checks both in the log: a session of its
// own, and the null device.
func TestStartDetached(t *testing.T) {
	sh, err := os.Stat("/bin/sh")
	if err != nil || sh.IsDir() {
		t.Skip("no /bin/sh")
	}
	logPath := filepath.Join(t.TempDir(), "logs", "s.log")
	script := `read line; echo "read=$? sid=$(cut -d' ' -f6 /proc/$$/stat) pid=$$"; echo "$((40+2))-end"`
	if err := StartDetached("/bin/sh", []string{"-c", script}, logPath); err != nil {
		t.Fatal(err)
	}
	// Waiting for the child's output is not a timing assertion: the
	// deadline only stops a broken test from hanging.
	var log string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(logPath)
		if log = string(data); strings.Contains(log, "42-end\n") {
			break
		}
	}
	if !strings.Contains(log, "== ") || !strings.Contains(log, "sh -c read line;") {
		t.Errorf("log lacks the start line:\n%s", log)
	}
	var readStatus, sid, pid string
	for f := range strings.FieldsSeq(log[strings.LastIndex(log, "read="):]) {
		if k, v, ok := strings.Cut(f, "="); ok {
			switch k {
			case "read":
				readStatus = v
			case "sid":
				sid = v
			case "pid":
				pid = v
			}
		}
	}
	if readStatus != "1" {
		t.Errorf("read from standard input exited %q, want 1 (end of file from /dev/null)", readStatus)
	}
	if sid != pid || sid == sessionOf(t, "self") {
		t.Errorf("child session %s (pid %s), ours %s: want a session of its own", sid, pid, sessionOf(t, "self"))
	}
	if fi, err := os.Stat(filepath.Dir(logPath)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("log directory: %v %v", fi, err)
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v %v", fi, err)
	}
	// A second run appends.
	if err := StartDetached("/bin/sh", []string{"-c", "echo second"}, logPath); err != nil {
		t.Fatal(err)
	}
	if err := StartDetached(filepath.Join(t.TempDir(), "missing"), nil, logPath); err == nil {
		t.Errorf("starting a missing program succeeded")
	}
	data, _ := os.ReadFile(logPath)
	if !strings.HasPrefix(string(data), "\n== ") || !strings.Contains(string(data), "could not start") {
		t.Errorf("log was not appended to:\n%s", data)
	}
}
