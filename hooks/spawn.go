package hooks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
)

// StartDetached starts exe with args as a background process that outlives
// the hook: in a session (process group) of its own, so Claude Code ending
// the hook's group does not end it; with standard input from the null
// device; and with its output appended to logPath (created 0600, its
// directory 0700), after a line saying when and what was started. It
// returns once the process has started, without waiting for it.
func StartDetached(exe string, args []string, logPath string) error {
	if err := atomicfile.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return fmt.Errorf("start %s: log: %w", filepath.Base(exe), err)
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start %s: log: %w", filepath.Base(exe), err)
	}
	defer log.Close()
	fmt.Fprintf(log, "\n== %s %s %s\n", time.Now().Format(time.RFC3339), filepath.Base(exe), strings.Join(args, " "))
	cmd := exec.Command(exe, args...)
	cmd.Stdin = nil // the null device
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(log, "could not start: %v\n", err)
		return fmt.Errorf("start %s %s: %w", exe, strings.Join(args, " "), err)
	}
	// Nobody waits for the child: when the hook exits it is adopted by init,
	// which reaps it.
	return cmd.Process.Release()
}
