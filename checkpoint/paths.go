package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/errs"
)

// BackupName returns Claude Code's backup file name for version v of the
// file at absPath: the first 16 hex digits of sha256(absPath), "@v", v.
func BackupName(absPath string, v int) string {
	sum := sha256.Sum256([]byte(absPath))
	return hex.EncodeToString(sum[:])[:16] + "@v" + strconv.Itoa(v)
}

// checkSessionID accepts ids made of letters, digits, '.', '_' and '-' (a
// UUID, as Claude Code uses, is one), since the id becomes a directory name.
func checkSessionID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > 128 {
		return fmt.Errorf("session id %q: want 1 to 128 letters, digits, '.', '_' or '-': %w", id, errs.ErrInvalid)
	}
	for _, r := range id {
		if !(r < utf8.RuneSelf && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')) {
			return fmt.Errorf("session id %q contains %q: want letters, digits, '.', '_' or '-': %w", id, r, errs.ErrInvalid)
		}
	}
	return nil
}

// checkMessageID accepts any printable UTF-8 text up to 256 bytes.
func checkMessageID(id string) error {
	if id == "" {
		return fmt.Errorf("message id is empty: %w", errs.ErrInvalid)
	}
	if len(id) > 256 {
		return fmt.Errorf("message id %.40q... is longer than 256 bytes: %w", id, errs.ErrInvalid)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("message id %q is not valid UTF-8: %w", id, errs.ErrInvalid)
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return fmt.Errorf("message id %q contains control character %U: %w", id, r, errs.ErrInvalid)
		}
	}
	return nil
}

// checkTrackingPath validates a tracking path read from a log: a clean
// absolute path, or a clean local relative one. Anything else could make a
// rewind write outside where the session tracked files.
func checkTrackingPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty tracking path")
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("tracking path %q contains a NUL byte", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("tracking path %q is not valid UTF-8", p)
	case filepath.IsAbs(p):
		if filepath.Clean(p) != p {
			return fmt.Errorf("tracking path %q is not clean", p)
		}
	case !filepath.IsLocal(p) || filepath.Clean(p) != p || p == ".":
		return fmt.Errorf("tracking path %q is neither absolute nor a clean path inside the working directory", p)
	}
	return nil
}

// trackingPath returns the key Claude Code uses for abs: relative to cwd when
// abs is inside it, else abs itself.
func trackingPath(cwd, abs string) string {
	if rel, err := filepath.Rel(cwd, abs); err == nil && rel != "." && filepath.IsLocal(rel) {
		return rel
	}
	return abs
}

// expand turns a tracking path back into an absolute path.
func expand(cwd, key string) string {
	if filepath.IsAbs(key) {
		return key
	}
	return filepath.Join(cwd, key)
}

// expandAll is expand for each of keys, with one allocation for all the
// relative ones when it can: if cwd is clean and not a root, joining it
// with a clean local path (every relative tracking path is one, see
// checkTrackingPath) is putting a separator between them, which is all that
// filepath.Join would do after cleaning a result that is already clean.
// Each key is checked to be one, so the result is Join's whatever the keys.
func expandAll(cwd string, keys []string) []string {
	out := make([]string, len(keys))
	if filepath.Separator != '/' || !filepath.IsAbs(cwd) || filepath.Clean(cwd) != cwd || cwd == "/" {
		for i, k := range keys {
			out[i] = expand(cwd, k)
		}
		return out
	}
	n := 0
	for _, k := range keys {
		if cleanLocal(k) {
			n += len(cwd) + 1 + len(k)
		}
	}
	var all strings.Builder
	all.Grow(n)
	for _, k := range keys {
		if cleanLocal(k) {
			all.WriteString(cwd)
			all.WriteByte('/')
			all.WriteString(k)
		}
	}
	joined, at := all.String(), 0
	for i, k := range keys {
		if !cleanLocal(k) {
			out[i] = expand(cwd, k)
			continue
		}
		end := at + len(cwd) + 1 + len(k)
		out[i], at = joined[at:end], end
	}
	return out
}

// cleanLocal reports whether p is a relative slash-separated path that
// filepath.Clean leaves as it is and that stays inside its base: not empty,
// no leading or trailing slash, no empty, "." or ".." element.
func cleanLocal(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' {
		return false
	}
	for p != "" {
		elem, rest, _ := strings.Cut(p, "/")
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
		p = rest
	}
	return true
}

// resolveArg turns a path given by a caller into a clean absolute path,
// relative ones being taken from base.
func resolveArg(base, p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty file path: %w", errs.ErrInvalid)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("file path %q contains a NUL byte: %w", p, errs.ErrInvalid)
	case !utf8.ValidString(p):
		return "", fmt.Errorf("file path %q is not valid UTF-8: %w", p, errs.ErrInvalid)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	if p == filepath.Dir(p) {
		return "", fmt.Errorf("file path %q is a root directory, not a file: %w", p, errs.ErrInvalid)
	}
	return p, nil
}

// within reports whether p is dir or inside it, lexically.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// checkParentStaysInside refuses a path inside cwd whose nearest existing
// parent resolves, through symbolic links, to somewhere outside cwd: writing
// or reading there would escape the project while looking local. Paths
// outside cwd are the caller's explicit choice and are not checked.
func checkParentStaysInside(cwd, abs string) error {
	if !within(cwd, abs) {
		return nil
	}
	realCwd, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return fmt.Errorf("resolve working directory %s: %w", cwd, err)
	}
	parent := filepath.Dir(abs)
	for {
		real, err := filepath.EvalSymlinks(parent)
		if err == nil {
			if !within(realCwd, real) {
				return fmt.Errorf("refusing %s: its directory leads through a symbolic link to %s, outside %s: %w", abs, real, cwd, errs.ErrInvalid)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("resolve %s: %w", parent, err)
		}
		next := filepath.Dir(parent)
		if next == parent {
			return fmt.Errorf("resolve %s: %w", parent, err)
		}
		parent = next
	}
}

// checkRegular refuses anything but a plain file with a single link: Claude
// Code's hardened variant refuses symbolic links, devices, FIFOs and hard
// links, whose content or target may not be what the path suggests.
func checkRegular(fi fs.FileInfo, path string) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("refusing %s: it is a symbolic link, and checkpoints never follow links: %w", path, errs.ErrInvalid)
	case fi.IsDir():
		return fmt.Errorf("refusing %s: it is a directory; track the files in it one by one: %w", path, errs.ErrInvalid)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("refusing %s: it is not a regular file (%s): %w", path, fi.Mode().Type(), errs.ErrInvalid)
	case linkCount(fi) > 1:
		return fmt.Errorf("refusing %s: it has %d hard links, so a rewind would change the other names too; copy it to break the link: %w", path, linkCount(fi), errs.ErrInvalid)
	}
	return nil
}

// checkDirNoLink refuses a directory path that is a symbolic link.
func checkDirNoLink(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("refusing %s: it is not a plain directory (a symbolic link?): %w", dir, errs.ErrInvalid)
	}
	return nil
}

// modeBits is the part of a file mode a backup preserves and compares.
func modeBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}
