// Package gitroot finds a project's git root and, for a worktree, the main
// repository it belongs to, as Claude Code does to key the memory directory.
// Package locate exports it; team sync uses it to name the repository.
package gitroot

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Find walks up from start looking for a .git directory or file, as
// Claude Code's findGitRoot does (the filesystem root included).
func Find(start string) (string, bool) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return norm.NFC.String(dir), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Canonical resolves a worktree to its main repository, so that all
// worktrees of one repository share one memory directory. Submodules and
// ordinary repositories resolve to themselves; a worktree of a bare repository
// resolves to the bare repository's directory.
func Canonical(gitRoot string) string {
	root, _ := Explain(gitRoot)
	return root
}

// Explain is Canonical, also saying how the root was decided.
func Explain(gitRoot string) (string, string) {
	dotgit := filepath.Join(gitRoot, ".git")
	fi, err := os.Stat(dotgit)
	if err != nil {
		return gitRoot, "cannot stat .git"
	}
	if fi.IsDir() {
		return gitRoot, "an ordinary repository"
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return gitRoot, "cannot read the .git file"
	}
	content := strings.TrimSpace(string(data))
	if !strings.HasPrefix(content, "gitdir:") {
		return gitRoot, ".git file without gitdir:"
	}
	wtGitDir := resolvePath(gitRoot, strings.TrimSpace(strings.TrimPrefix(content, "gitdir:")))
	cd, err := os.ReadFile(filepath.Join(wtGitDir, "commondir"))
	if err != nil {
		return gitRoot, "a submodule (no commondir)"
	}
	commonDir := resolvePath(wtGitDir, strings.TrimSpace(string(cd)))
	// Both checks guard against a crafted .git file pointing at another
	// repository's metadata: the worktree must be registered under the
	// common dir, and must point back at this checkout.
	if filepath.Dir(wtGitDir) != filepath.Join(commonDir, "worktrees") {
		return gitRoot, "worktree check failed: gitdir is not under <commondir>/worktrees; treated as its own root"
	}
	back, err := os.ReadFile(filepath.Join(wtGitDir, "gitdir"))
	if err != nil {
		return gitRoot, "worktree check failed: no gitdir back-link; treated as its own root"
	}
	backReal, err1 := filepath.EvalSymlinks(strings.TrimSpace(string(back)))
	rootReal, err2 := filepath.EvalSymlinks(gitRoot)
	if err1 != nil || err2 != nil || backReal != filepath.Join(rootReal, ".git") {
		return gitRoot, "worktree check failed: the back-link does not point at this checkout; treated as its own root"
	}
	if filepath.Base(commonDir) != ".git" {
		return norm.NFC.String(commonDir), "a worktree of the bare repository " + commonDir
	}
	main := filepath.Dir(commonDir)
	return norm.NFC.String(main), "a worktree of " + main
}

func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
