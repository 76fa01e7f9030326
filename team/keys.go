package team

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/memdir/memdir"
)

// MaxKeyBytes bounds the length of a key the server accepts.
const MaxKeyBytes = 1024

// MaxSegmentBytes bounds one "/"-separated segment of a key: the longest
// file name Linux, macOS and Windows file systems accept (NAME_MAX).
const MaxSegmentBytes = 255

// KeyRef is how errors and logs name a key without repeating it: a short
// prefix (at most 12 bytes and never more than half the key, cut at a rune
// boundary), "…", the first 12 hex digits of the key's SHA-256 and its
// length, as in "sub/…#3f2a9c01b2de/300B". A client finds the key it sent
// by computing KeyRef of its own keys. Keys are attacker-chosen text that
// may hold a secret, so the server never echoes one whole.
func KeyRef(key string) string {
	n := min(12, len(key)/2)
	for n > 0 && !utf8.RuneStart(key[n]) {
		n--
	}
	prefix := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, key[:n])
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%s…#%s/%dB", prefix, hex.EncodeToString(sum[:6]), len(key))
}

// SanitizeKey applies Claude Code's checks on a key received from a server
// (sanitizePathKey): it rejects
//   - a NUL byte;
//   - URL-encoded traversal: percent-decoding changes the key and the result
//     contains ".." or "/" (a malformed escape is tolerated, not decoded);
//   - Unicode-normalised traversal: NFKC changes the key and the result
//     contains "..", "/", "\" or NUL (fullwidth "．．／" becomes "../");
//   - any backslash;
//   - a leading "/".
//
// The error is a *KeyError wrapping [ErrInvalidKey].
func SanitizeKey(key string) error {
	if strings.IndexByte(key, 0) >= 0 {
		return &KeyError{key, "contains a NUL byte"}
	}
	if dec, err := url.PathUnescape(key); err == nil && dec != key &&
		(strings.Contains(dec, "..") || strings.Contains(dec, "/")) {
		return &KeyError{key, "URL-decodes to a path traversal"}
	}
	if n := norm.NFKC.String(key); n != key &&
		(strings.Contains(n, "..") || strings.ContainsAny(n, "/\\\x00")) {
		return &KeyError{key, "Unicode-normalises (NFKC) to a path traversal"}
	}
	if strings.IndexByte(key, '\\') >= 0 {
		return &KeyError{key, "contains a backslash"}
	}
	if strings.HasPrefix(key, "/") {
		return &KeyError{key, "is absolute"}
	}
	return nil
}

// ValidateKey is the server's check on a key it is asked to store:
// [SanitizeKey], and the key must be a canonical relative slash path
// (non-empty, valid UTF-8, no control characters, no empty, "." or ".."
// segment, at most MaxKeyBytes bytes, no segment over MaxSegmentBytes
// bytes) with no hidden component ([HiddenComponent]). Clients may hold
// keys the server would refuse; they skip them. Whether a key fits with
// the other keys of a repository (one may not be a directory of another)
// is [ValidateEntries]'s check.
func ValidateKey(key string) error {
	if err := validateKeyShape(key); err != nil {
		return err
	}
	return checkVisible(key)
}

// HiddenComponent returns the 1-based position of the first component of
// key that would make a hidden file or directory, and 0 when there is
// none. A component is hidden when it starts with "." (also after NFKC
// normalisation) or is "git~1" in any case, the short name Windows gives
// a ".git" directory. memdir's own path rules refuse hidden names
// everywhere in the memory directory; in team/ they matter most, because
// a teammate who could plant .git/config there would run a command of
// their choosing (core.fsmonitor) on every machine whose git looks at it.
func HiddenComponent(key string) int {
	i := 0
	for seg := range strings.SplitSeq(key, "/") {
		i++
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." || strings.EqualFold(seg, "git~1") {
			return i
		}
		if seg != "" && !strings.HasPrefix(seg, ".") && seg[0] >= utf8.RuneSelf && strings.HasPrefix(norm.NFKC.String(seg), ".") {
			return i
		}
	}
	return 0
}

// checkVisible refuses a key with a hidden component.
func checkVisible(key string) error {
	n := HiddenComponent(key)
	if n == 0 {
		return nil
	}
	what := `starts with "."`
	if seg := strings.Split(key, "/")[n-1]; strings.EqualFold(seg, "git~1") {
		what = `is "git~1", Windows' short name of ".git"`
	}
	return &KeyError{key, fmt.Sprintf("has a hidden path component (component %d %s); team memory holds no hidden files or directories", n, what)}
}

// validateKeyShape is [ValidateKey] without the hidden-component rule:
// what a key to delete must be, so that a repository holding a hidden key
// stored before the rule can still be cleaned up.
func validateKeyShape(key string) error {
	if err := SanitizeKey(key); err != nil {
		return err
	}
	switch {
	case key == "":
		return &KeyError{key, "is empty"}
	case len(key) > MaxKeyBytes:
		return &KeyError{key, fmt.Sprintf("is longer than %d bytes", MaxKeyBytes)}
	case !utf8.ValidString(key):
		return &KeyError{key, "is not valid UTF-8"}
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return &KeyError{key, "contains a control character"}
		}
	}
	if key == "." || path.Clean(key) != key || !filepath.IsLocal(filepath.FromSlash(key)) {
		return &KeyError{key, "is not a clean relative path (empty, \".\" or \"..\" segment)"}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if len(seg) > MaxSegmentBytes {
			return &KeyError{key, fmt.Sprintf("has a path segment of %d bytes, over the %d bytes a file name may have", len(seg), MaxSegmentBytes)}
		}
	}
	return nil
}

// ValidateContent checks that an entry's content can be stored and
// written back byte for byte: valid UTF-8 without NUL bytes.
func ValidateContent(key, content string) error {
	if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
		return fmt.Errorf("team memory entry %s: content is not text (invalid UTF-8 or a NUL byte): %w", KeyRef(key), memdir.ErrInvalid)
	}
	return nil
}

// ValidateEntries checks an update before anything is written: every key
// of entries passes [ValidateKey], every key of deletes the same rules but
// the hidden-component one (so that a hidden key stored before that rule
// can be deleted), every content [ValidateContent], no key is both
// written and deleted, and in the repository the update leaves behind no
// written key is a directory of another key ("sub" and "sub/x.md" cannot
// both be files on a client). current holds the keys the repository has now (the values are not
// read; nil means none), so the server passes its stored entry checksums
// and a client the server's hashes view. Conflicts among keys already
// stored and not written are left alone: a repository that holds one can
// still be repaired by deleting a key.
//
// Keys are checked in sorted order, so the error is deterministic. A key
// error is a *KeyError wrapping [ErrInvalidKey]; a content error wraps
// memdir.ErrInvalid.
func ValidateEntries(entries map[string]string, deletes []string, current map[string]string) error {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return err
		}
		if err := ValidateContent(k, entries[k]); err != nil {
			return err
		}
	}
	deleted := make(map[string]bool, len(deletes))
	for _, k := range deletes {
		if err := validateKeyShape(k); err != nil {
			return err
		}
		if _, ok := entries[k]; ok {
			return &KeyError{k, "is both written and deleted in one update"}
		}
		deleted[k] = true
	}
	if len(keys) == 0 {
		return nil
	}
	has := func(k string) bool {
		if _, ok := entries[k]; ok {
			return true
		}
		_, ok := current[k]
		return ok && !deleted[k]
	}
	// dirs maps every directory of a key in the result to one key under it.
	dirs := map[string]string{}
	addDirs := func(k string) {
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			if _, ok := dirs[k[:i]]; ok {
				return
			}
			dirs[k[:i]] = k
		}
	}
	for _, k := range keys {
		addDirs(k)
	}
	for k := range current {
		if !deleted[k] {
			addDirs(k)
		}
	}
	for _, k := range keys {
		if under, ok := dirs[k]; ok {
			return &KeyError{k, fmt.Sprintf("is a directory of key %s; a key cannot be both a file and a directory", KeyRef(under))}
		}
		for i := strings.IndexByte(k, '/'); i > 0; {
			if has(k[:i]) {
				return &KeyError{k, fmt.Sprintf("is under key %s, which is a file; a key cannot be both a file and a directory", KeyRef(k[:i]))}
			}
			j := strings.IndexByte(k[i+1:], '/')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return nil
}

// ValidateKeyPath checks a key received from a server and returns the
// absolute path it names under teamDir (validateTeamMemKey). It applies
// [SanitizeKey], then requires that
//   - the lexically resolved path lies inside teamDir (compared with a
//     trailing separator, so "team-evil" is not inside "team");
//   - after resolving symlinks of the deepest existing ancestor, the real
//     path lies inside the real teamDir. A dangling symlink on the way is
//     rejected, a symlink loop is rejected, ENOTDIR and ENAMETOOLONG keep
//     walking up, and any other error fails closed.
//
// If teamDir does not exist yet the symlink check is skipped: nothing under
// it can be a link.
//
// The check protects against a hostile or compromised server. It does not
// defend against a local process racing to plant symlinks between the check
// and the write; such a process can write the user's files directly anyway.
func ValidateKeyPath(teamDir, key string) (string, error) {
	if err := SanitizeKey(key); err != nil {
		return "", err
	}
	root, err := filepath.Abs(teamDir)
	if err != nil {
		return "", fmt.Errorf("team directory %s: %w", teamDir, err)
	}
	prefix := strings.TrimSuffix(root, string(filepath.Separator)) + string(filepath.Separator)
	abs := filepath.Join(root, filepath.FromSlash(key))
	if !strings.HasPrefix(abs, prefix) {
		return "", &KeyError{key, "resolves outside the team directory"}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	if err != nil {
		return "", fmt.Errorf("team directory %s: cannot resolve symlinks: %w", teamDir, err)
	}
	real, err := realpathDeepestExisting(abs)
	if err != nil {
		return "", &KeyError{key, err.Error()}
	}
	if real != realRoot && !strings.HasPrefix(real, strings.TrimSuffix(realRoot, string(filepath.Separator))+string(filepath.Separator)) {
		return "", &KeyError{key, "escapes the team directory through a symlink"}
	}
	return abs, nil
}

// realpathDeepestExisting resolves the symlinks of the deepest existing
// ancestor of p and re-joins the missing tail.
func realpathDeepestExisting(p string) (string, error) {
	var tail []string
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(tail) - 1; i >= 0; i-- {
				real = filepath.Join(real, tail[i])
			}
			return real, nil
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("goes through a dangling symlink at %s", cur)
			}
		case errors.Is(err, syscall.ELOOP):
			return "", fmt.Errorf("goes through a symlink loop at %s", cur)
		case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG):
		default:
			// Includes filepath's own "too many links" error for loops.
			return "", fmt.Errorf("cannot resolve symlinks at %s: %v", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("no existing ancestor of %s", p)
		}
		tail = append(tail, filepath.Base(cur))
		cur = parent
	}
}

// NormalizeRepo checks a repository name of the form "owner/name" (GitHub's
// character set: letters, digits, '-', '_', '.') and returns it in lower
// case, because GitHub names are case-insensitive and two clones of one
// repository must share one team memory. The error wraps [ErrInvalidRepo].
func NormalizeRepo(repo string) (string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !repoPart(owner) || !repoPart(name) {
		return "", fmt.Errorf("%q: %w", repo, ErrInvalidRepo)
	}
	return strings.ToLower(repo), nil
}

func repoPart(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
