//go:build unix

package memdirtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fatalTB records the message of a Fatalf and ends the goroutine, as a
// test's Fatalf does, without failing the test that uses it.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting to be reaped has exited).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestRunAgentKillsGroupOnTimeout checks that a run that outlives its
// timeout fails the test and takes what it started down with it.
func TestRunAgentKillsGroupOnTimeout(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the processes")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The shell starts a grandchild that ignores the end of its parent.
	script := "sleep 300 & echo $! > " + pidFile + "; wait"
	tb := &fatalTB{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runAgent(tb, 500*time.Millisecond, dir, os.Environ(), "/bin/sh", "-c", script)
	}()
	<-done
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v to end", took)
	}
	if !strings.Contains(tb.msg, "still running after 500ms, killed") {
		t.Errorf("failure message %q", tb.msg)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the run's grandchild %d is still running", pid)
	}
}
