package memdirtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GitRepo is a fixture git repository in a temporary directory, with
// commits by a fixed author and a distinct modification time for every file
// written.
type GitRepo struct {
	tb testing.TB
	// Root is the repository's directory, symbolic links resolved.
	Root string
	n    int
}

// NewGitRepo makes an empty repository on branch main.
func NewGitRepo(tb testing.TB) *GitRepo {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Fatalf("git is needed for the anchor fixtures: %v", err)
	}
	root, _ := filepath.EvalSymlinks(tb.TempDir())
	r := &GitRepo{tb: tb, Root: root}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the repository and returns its output, failing the test
// on an error.
func (r *GitRepo) Git(args ...string) string {
	r.tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.Root}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.com",
		"GIT_COMMITTER_NAME=Fixture", "GIT_COMMITTER_EMAIL=fixture@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Commit writes files (path → content; "" deletes) and commits them.
func (r *GitRepo) Commit(files map[string]string) {
	r.tb.Helper()
	for p, c := range files {
		abs := filepath.Join(r.Root, filepath.FromSlash(p))
		if c == "" {
			r.Git("rm", "-q", p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			r.tb.Fatal(err)
		}
		// A distinct mtime for every write, so the stat check sees it.
		r.n++
		mt := time.Date(2026, 1, 1, 0, 0, r.n, 0, time.UTC)
		os.Chtimes(abs, mt, mt)
		r.Git("add", p)
	}
	r.Git("commit", "-q", "-m", "change")
}
