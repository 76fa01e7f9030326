package memdirtest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildProgram builds the main package pkg (as go build names it, relative
// to the test's directory) into a temporary directory as name and returns
// the binary's path, for tests that run memdir as users do: a process of
// its own. The test is skipped under -short, or when there is no go
// command to build with.
func BuildProgram(tb testing.TB, pkg, name string) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds", name)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go command to build", name, "with:", err)
	}
	bin := filepath.Join(tb.TempDir(), name)
	if out, err := exec.Command(goTool, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
