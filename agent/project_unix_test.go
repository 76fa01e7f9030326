//go:build unix

package agent

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFileFIFO(t *testing.T) {
	p, dir := testProject(t, map[string]string{})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for tool, input := range map[string]string{ToolReadFile: `{"path":"pipe"}`, ToolGrep: `{"path":"pipe","pattern":"x"}`} {
		got, isErr := answer(t, p, tool, input)
		if !isErr || !strings.Contains(got, "pipe is not a regular file") {
			t.Errorf("%s on a FIFO = %q, want a not-a-regular-file error", tool, got)
		}
	}
	// Opening is non-blocking too, for a FIFO swapped in after the check.
	if _, err := p.readSmall(ToolGrep, "pipe"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("readSmall on a FIFO: %v", err)
	}
}
