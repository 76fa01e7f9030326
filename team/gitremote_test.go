package team

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGitHubRepo(t *testing.T) {
	tests := map[string]string{
		"https://github.com/Acme/Widgets.git":        "acme/widgets",
		"https://github.com/acme/widgets":            "acme/widgets",
		"https://github.com/acme/widgets/":           "acme/widgets",
		"https://user:secret@github.com/acme/w.git":  "acme/w",
		"http://github.com/acme/w":                   "acme/w",
		"ssh://git@github.com/acme/w.git":            "acme/w",
		"ssh://git@github.com:22/acme/w.git":         "acme/w",
		"git://github.com/acme/w.git":                "acme/w",
		"git@github.com:acme/w.git":                  "acme/w",
		"github.com:acme/w":                          "acme/w",
		"git@GitHub.com:acme/my.repo.git":            "acme/my.repo",
		"https://gitlab.com/acme/w.git":              "",
		"git@github.example.com:acme/w.git":          "",
		"https://github.com/acme":                    "",
		"https://github.com/acme/w/tree/main":        "",
		"/srv/git/w.git":                             "",
		"file:///srv/git/w.git":                      "",
		"https://github.com.evil.example/acme/w.git": "",
	}
	for in, want := range tests {
		got, ok := GitHubRepo(in)
		if got != want || ok != (want != "") {
			t.Errorf("GitHubRepo(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestRepoFromGit(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	main := filepath.Join(base, "main")
	writeFile(t, filepath.Join(main, ".git", "config"), "[remote \"upstream\"]\n\turl = https://github.com/up/stream\n[Remote \"origin\"] \n\turl = \"https://github.com/acme/widgets.git\" ; comment\n")
	// A worktree of main: its .git file points into main/.git/worktrees.
	wt := filepath.Join(base, "wt")
	wtGit := filepath.Join(main, ".git", "worktrees", "wt")
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
	writeFile(t, filepath.Join(wtGit, "commondir"), "../..\n")
	writeFile(t, filepath.Join(wtGit, "gitdir"), filepath.Join(wt, ".git")+"\n")
	// A repository whose origin is not on github.com.
	other := filepath.Join(base, "other")
	writeFile(t, filepath.Join(other, ".git", "config"), "[remote \"origin\"]\n\turl = https://user:hunter2@gitlab.com/a/b\n")
	// A repository without an origin.
	none := filepath.Join(base, "none")
	writeFile(t, filepath.Join(none, ".git", "config"), "[core]\n\tbare = false\n")

	for _, dir := range []string{main, filepath.Join(main, "sub", "dir"), wt} {
		os.MkdirAll(dir, 0o700)
		if got, err := RepoFromGit(dir); err != nil || got != "acme/widgets" {
			t.Errorf("RepoFromGit(%s) = %q, %v", dir, got, err)
		}
	}
	for dir, want := range map[string]string{other: "not a github.com", none: "no url", filepath.Join(base, "plain"): "not in a git repository"} {
		os.MkdirAll(dir, 0o700)
		_, err := RepoFromGit(dir)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--repo") {
			t.Errorf("RepoFromGit(%s) = %v, want an error about %q that suggests --repo", dir, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error shows the remote's password: %v", err)
		}
	}
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}
