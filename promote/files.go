package promote

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
)

// isDailyLog reports whether rel is a daily log, which the review leaves
// alone.
func isDailyLog(rel string) bool { return strings.HasPrefix(rel, "logs/") }

// overflowFor returns the overflow file of the index at indexRel.
func overflowFor(indexRel string) string {
	return path.Join(path.Dir(indexRel), memdir.OverflowIndexName)
}

// statePath names memdir's state for one memory directory, as the root
// package does: <StateDir>/<kind>/<SanitizePath(absolute dir)><ext>.
func statePath(lookup memdir.LookupEnvFunc, kind, memoryDir, ext string) (string, error) {
	state, err := locate.StateDir(lookup)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, kind, locate.SanitizePath(filepath.Clean(abs), locate.HashBun)+ext), nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
