package promote

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
)

// Small file and path helpers the review shares in spirit with the root
// package, which keeps its own copies private.

// isDailyLog reports whether rel is a daily log, which the review leaves
// alone.
func isDailyLog(rel string) bool { return strings.HasPrefix(rel, "logs/") }

// overflowFor returns the overflow file of the index at indexRel.
func overflowFor(indexRel string) string {
	return path.Join(path.Dir(indexRel), memdir.OverflowIndexName)
}

// contentSum names content the way the journal does, so that apply can
// tell whether a memory changed since the review read it.
func contentSum(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// hashFile is the contentSum of a file, "" when it is missing.
func hashFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return contentSum(data), nil
}

// readRooted reads a file inside root, refusing non-regular files and files
// over max bytes. A missing file returns fs.ErrNotExist.
func readRooted(root *os.Root, rel string, max int64) ([]byte, fs.FileInfo, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, fmt.Errorf("%s is not a regular file", rel)
	}
	if fi.Size() > max {
		return nil, fi, fmt.Errorf("%s is %s, over the %s limit for a memory file: split it into smaller memories", rel, memdir.FormatFileSize(int(fi.Size())), memdir.FormatFileSize(int(max)))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fi, err
	}
	return data, fi, nil
}

// projectDirsDown lists the directories from the git root (or the project
// root outside git) down to the project root, outermost first.
func projectDirsDown(l *memdir.Location) []string {
	dirs := []string{l.ProjectRoot}
	if l.GitRoot == "" {
		return dirs
	}
	for d := l.ProjectRoot; d != l.GitRoot; {
		parent := filepath.Dir(d)
		if parent == d || !strings.HasPrefix(d, l.GitRoot) {
			break
		}
		dirs = append(dirs, parent)
		d = parent
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// statePath names memdir's state for one memory directory, as the root
// package does: <StateDir>/<kind>/<SanitizePath(absolute dir)><ext>.
func statePath(lookup memdir.LookupEnvFunc, kind, memoryDir, ext string) (string, error) {
	state, err := memdir.StateDir(lookup)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, kind, memdir.SanitizePath(filepath.Clean(abs), memdir.HashBun)+ext), nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
