package team

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/memdir/memdir"
)

func TestSanitizeKey(t *testing.T) {
	tests := []struct {
		key  string
		want string // "" means accepted, else a substring of the reason
	}{
		{"MEMORY.md", ""},
		{"sub/dir/note.md", ""},
		{"a/../b.md", ""}, // lexical checks come later, in ValidateKeyPath
		{"100%.md", ""},   // malformed escape: tolerated
		{"%zz/x.md", ""},  // malformed escape with a slash: tolerated, not decoded
		{"a%20b.md", ""},  // decodes, but to nothing dangerous
		{"ｆｕｌｌ.md", ""},   // NFKC changes it, harmlessly
		{"a\x00b", "NUL"},
		{"%2e%2e/x", "URL-decodes"},
		{"..%2fx", "URL-decodes"},
		{"a%2Fb", "URL-decodes"},
		{"%5c..%5cx", "URL-decodes"},
		{"．．／x.md", "NFKC"},
		{"a／b", "NFKC"},
		{"a＼b", "NFKC"},
		{`a\b`, "backslash"},
		{`..\x`, "backslash"},
		{"/etc/passwd", "absolute"},
	}
	for _, tt := range tests {
		err := SanitizeKey(tt.key)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("SanitizeKey(%q) = %v, want nil", tt.key, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("SanitizeKey(%q) = %v, want an error about %q", tt.key, err, tt.want)
		case err != nil && !(errors.Is(err, ErrInvalidKey) && errors.Is(err, memdir.ErrInvalid)):
			t.Errorf("SanitizeKey(%q) = %v, does not wrap ErrInvalidKey and memdir.ErrInvalid", tt.key, err)
		}
	}
}

func TestValidateKey(t *testing.T) {
	ok := []string{"MEMORY.md", "sub/x.md", "日本語.md", "a b.md", "a..b.md", "a.b/c.md", "x./y.", "git~2/config", "agit~1"}
	bad := []string{"", ".", "..", "a/..", "a/../b", "./a", "a/", "a//b", "../x", "a\tb", "a\x7fb", "\xff.md", strings.Repeat("x", MaxKeyBytes+1),
		// Hidden components: a planted .git/config runs commands.
		".hidden.md", ".git/HEAD", ".git/config", "a/.hidden.md", "a/b/.git", "..x", "GIT~1/config", "sub/git~1/hooks/x", "\uff0egit", "a/\ufe52x.md"}
	for _, k := range ok {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range bad {
		if err := ValidateKey(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

// symlinkTree builds a team directory with hostile symlinks:
//
//	base/team/            the team directory
//	base/team/inner -> base/team/sub   (stays inside)
//	base/team/sub/
//	base/team/out -> base/outside      (escapes)
//	base/team/dangling -> base/nowhere (dangling)
//	base/team/loop1 -> loop2, loop2 -> loop1
//	base/team/file.md                  (a regular file)
//	base/team-evil/                    (prefix attack target)
func symlinkTree(tb testing.TB) (base, teamDir string) {
	tb.Helper()
	base = tb.TempDir()
	teamDir = filepath.Join(base, "team")
	for _, d := range []string{teamDir, filepath.Join(teamDir, "sub"), filepath.Join(base, "outside"), filepath.Join(base, "team-evil")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	links := map[string]string{
		"inner":    filepath.Join(teamDir, "sub"),
		"out":      filepath.Join(base, "outside"),
		"dangling": filepath.Join(base, "nowhere"),
		"loop1":    filepath.Join(teamDir, "loop2"),
		"loop2":    filepath.Join(teamDir, "loop1"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(teamDir, name)); err != nil {
			tb.Skipf("symlinks not available: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(teamDir, "file.md"), []byte("x"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return base, teamDir
}

func TestValidateKeyPath(t *testing.T) {
	_, teamDir := symlinkTree(t)
	tests := []struct {
		key     string
		wantRel string // path relative to teamDir when accepted
		wantErr string // substring of the error when rejected
	}{
		{key: "MEMORY.md", wantRel: "MEMORY.md"},
		{key: "new/dir/x.md", wantRel: "new/dir/x.md"},
		{key: "sub/x.md", wantRel: "sub/x.md"},
		{key: "inner/x.md", wantRel: "inner/x.md"},
		{key: "a/../b.md", wantRel: "b.md"},
		{key: "file.md/below.md", wantRel: "file.md/below.md"}, // ENOTDIR keeps walking; the write fails later
		{key: "../x.md", wantErr: "outside"},
		{key: "../team-evil/x.md", wantErr: "outside"},
		{key: "sub/../../x.md", wantErr: "outside"},
		{key: "..", wantErr: "outside"},
		{key: "", wantErr: "outside"},
		{key: "out/x.md", wantErr: "symlink"},
		{key: "out", wantErr: "symlink"},
		{key: "dangling", wantErr: "dangling"},
		{key: "dangling/x.md", wantErr: "dangling"},
		{key: "loop1/x.md", wantErr: "symlink"},
		{key: "%2e%2e/x.md", wantErr: "URL"},
		{key: "/etc/passwd", wantErr: "absolute"},
		{key: `sub\..\..\x`, wantErr: "backslash"},
	}
	for _, tt := range tests {
		got, err := ValidateKeyPath(teamDir, tt.key)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidKey) {
				t.Errorf("ValidateKeyPath(%q) = %q, %v; want an ErrInvalidKey about %q", tt.key, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ValidateKeyPath(%q) = %v", tt.key, err)
			continue
		}
		if want := filepath.Join(teamDir, filepath.FromSlash(tt.wantRel)); got != want {
			t.Errorf("ValidateKeyPath(%q) = %q, want %q", tt.key, got, want)
		}
	}
}

func TestValidateKeyPathTeamDirIsSymlink(t *testing.T) {
	base, teamDir := symlinkTree(t)
	link := filepath.Join(base, "team-link")
	if err := os.Symlink(teamDir, link); err != nil {
		t.Skip(err)
	}
	// The team directory itself may be reached through a symlink (macOS
	// /tmp, a dotfiles setup); keys under it are still inside.
	if _, err := ValidateKeyPath(link+string(filepath.Separator), "sub/x.md"); err != nil {
		t.Errorf("through a symlinked team dir: %v", err)
	}
	if _, err := ValidateKeyPath(link, "out/x.md"); err == nil {
		t.Errorf("escape through a symlinked team dir accepted")
	}
}

func TestValidateKeyPathMissingTeamDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	got, err := ValidateKeyPath(dir, "a/b.md")
	if err != nil || got != filepath.Join(dir, "a", "b.md") {
		t.Errorf("ValidateKeyPath under a missing dir = %q, %v", got, err)
	}
	if _, err := ValidateKeyPath(dir, "../b.md"); err == nil {
		t.Errorf("traversal under a missing dir accepted")
	}
}

func TestNormalizeRepo(t *testing.T) {
	for in, want := range map[string]string{"Acme/Widgets": "acme/widgets", "a-b_c.d/x.y": "a-b_c.d/x.y"} {
		if got, err := NormalizeRepo(in); err != nil || got != want {
			t.Errorf("NormalizeRepo(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "acme", "acme/", "/x", "a/b/c", "../x", "a/..", "a b/c", "a/b?c", "ä/b"} {
		if _, err := NormalizeRepo(in); !errors.Is(err, ErrInvalidRepo) {
			t.Errorf("NormalizeRepo(%q) = %v, want ErrInvalidRepo", in, err)
		}
	}
}

// FuzzValidateKeyPath checks the invariant the path checks exist for: an
// accepted key names a path inside the team directory, lexically and after
// resolving symlinks.
func FuzzValidateKeyPath(f *testing.F) {
	for _, k := range []string{"MEMORY.md", "../x", "inner/../../x", "out/x", "dangling/y", "%2e%2e%2fx", "．．／x", "a\\b", "/abs", "loop1/z", "sub/./x"} {
		f.Add(k)
	}
	base, teamDir := symlinkTree(f)
	realTeam, err := filepath.EvalSymlinks(teamDir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got, err := ValidateKeyPath(teamDir, key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("ValidateKeyPath(%q) = %v, not an ErrInvalidKey", key, err)
			}
			return
		}
		if !strings.HasPrefix(got, teamDir+string(filepath.Separator)) {
			t.Fatalf("ValidateKeyPath(%q) = %q, outside %s", key, got, teamDir)
		}
		if real, err := realpathDeepestExisting(got); err == nil && !strings.HasPrefix(real, realTeam+string(filepath.Separator)) && real != realTeam {
			t.Fatalf("ValidateKeyPath(%q) = %q, really %q, outside %s (base %s)", key, got, real, realTeam, base)
		}
		if strings.ContainsAny(key, "\\\x00") || strings.HasPrefix(key, "/") {
			t.Fatalf("ValidateKeyPath(%q) accepted a key SanitizeKey must reject", key)
		}
	})
}

// FuzzValidateKey checks that a key the server accepts is also one every
// client accepts: it passes SanitizeKey and stays inside any team directory.
func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{"a.md", "a/b.md", "a/../b", "..", "%2e%2e", "．．", "a\x00", "ä/ö.md", ".git/config", "a/.x.md", "GIT~1/HEAD", "\uff0egit"} {
		f.Add(k)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, key string) {
		if ValidateKey(key) != nil {
			return
		}
		if err := SanitizeKey(key); err != nil {
			t.Fatalf("ValidateKey accepted %q but SanitizeKey rejects it: %v", key, err)
		}
		if _, err := ValidateKeyPath(dir, key); err != nil {
			t.Fatalf("ValidateKey accepted %q but ValidateKeyPath rejects it: %v", key, err)
		}
		for seg := range strings.SplitSeq(key, "/") {
			if strings.HasPrefix(seg, ".") || strings.HasPrefix(norm.NFKC.String(seg), ".") || strings.EqualFold(seg, "git~1") {
				t.Fatalf("ValidateKey accepted %q, whose component %q is hidden", key, seg)
			}
		}
	})
}
