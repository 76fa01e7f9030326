//go:build unix

package main

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
)

// TestSignalEndsAStuckCommand: SIGTERM or SIGINT ends a command even when
// it is stuck where no context reaches (here the hook, reading an input
// that never ends), as a shell expects: with 128 plus the signal's number.
func TestSignalEndsAStuckCommand(t *testing.T) {
	bin := memdirtest.BuildProgram(t, ".", "memdir")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "hook")
		stdin, err := cmd.StdinPipe() // never written to, never closed
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		cmd.Env = []string{"HOME=" + t.TempDir(), "MEMDIR_STATE_DIR=" + t.TempDir()}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // let it reach the read
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("after %v: %v, want exit %d", sig, err, 128+int(sig))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("memdir hook went on after %v", sig)
		}
	}
}
