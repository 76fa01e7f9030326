package team

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir/internal/gitroot"
)

// RepoFromGit returns owner/name from the github.com remote "origin" of
// the git repository holding dir, reading its config file directly: the
// canonical git root's (so worktrees use their main repository's), the
// gitdir a .git file points to for submodules, or the repository itself
// when it is bare. Errors wrap ErrNoRepo.
func RepoFromGit(dir string) (string, error) {
	root, ok := gitroot.Find(dir)
	if !ok {
		return "", fmt.Errorf("%s is not in a git repository: %w", dir, ErrNoRepo)
	}
	canonical := gitroot.Canonical(root)
	config, err := gitConfigPath(canonical)
	if err != nil {
		return "", fmt.Errorf("git repository %s: %v: %w", canonical, err, ErrNoRepo)
	}
	remoteURL, err := originURL(config)
	if err != nil {
		return "", fmt.Errorf("%v: %w", err, ErrNoRepo)
	}
	repo, ok := GitHubRepo(remoteURL)
	if !ok {
		return "", fmt.Errorf("remote \"origin\" of %s is %s, not a github.com repository: %w", canonical, redactURL(remoteURL), ErrNoRepo)
	}
	return repo, nil
}

// gitConfigPath finds the config file of the repository at root.
func gitConfigPath(root string) (string, error) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err == nil && fi.IsDir():
		return filepath.Join(dotgit, "config"), nil
	case err == nil:
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return "", err
		}
		gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return "", errors.New(`.git file without a "gitdir:" line`)
		}
		gitdir = strings.TrimSpace(gitdir)
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(root, gitdir)
		}
		return filepath.Join(gitdir, "config"), nil
	case errors.Is(err, fs.ErrNotExist):
		return filepath.Join(root, "config"), nil // a bare repository
	default:
		return "", err
	}
}

// originURL reads the url of [remote "origin"] from a git config file.
func originURL(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	inOrigin := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inOrigin = isOriginSection(line)
			continue
		}
		if !inOrigin {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(key), "url") {
			return unquoteGitValue(strings.TrimSpace(value)), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return "", fmt.Errorf("%s has no url for remote \"origin\"", path)
}

// isOriginSection reports whether a section header is [remote "origin"]:
// the section name is case-insensitive, the subsection is not.
func isOriginSection(line string) bool {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
	if !ok {
		return false
	}
	name, sub, ok := strings.Cut(inner, " ")
	return ok && strings.EqualFold(name, "remote") && strings.TrimSpace(sub) == `"origin"`
}

// unquoteGitValue decodes a git config value: double quotes group, a
// backslash escapes, and '#' or ';' outside quotes starts a comment.
func unquoteGitValue(v string) string {
	var b strings.Builder
	quoted, pendingSpace := false, ""
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteString(pendingSpace)
			pendingSpace = ""
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			return b.String()
		case !quoted && (c == ' ' || c == '\t'):
			if b.Len() > 0 {
				pendingSpace += string(c)
			}
		default:
			b.WriteString(pendingSpace)
			pendingSpace = ""
			b.WriteByte(c)
		}
	}
	return b.String()
}

// GitHubRepo returns owner/name for a github.com remote URL in any of the
// forms git accepts: https://github.com/o/n(.git), ssh://git@github.com/o/n,
// git://github.com/o/n, git@github.com:o/n.git.
func GitHubRepo(remote string) (string, bool) {
	var host, path string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		host, path = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(remote, ":"); ok && !strings.Contains(at, "/") {
		// scp-like: [user@]host:path
		if i := strings.LastIndex(at, "@"); i >= 0 {
			at = at[i+1:]
		}
		host, path = at, rest
	} else {
		return "", false
	}
	if !strings.EqualFold(host, "github.com") {
		return "", false
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	repo, err := NormalizeRepo(path)
	if err != nil {
		return "", false
	}
	return repo, true
}

// redactURL hides credentials embedded in a remote URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("…")
		return u.String()
	}
	return s
}
