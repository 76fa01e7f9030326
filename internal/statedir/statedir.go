// Package statedir finds memdir's own directories (state, data,
// configuration) from the environment, and names the state kept for one
// memory directory. Package locate exports the same functions; the store
// and the services below it use this package so that none of them needs
// locate.
package statedir

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/memdir/memdir/internal/claudedir"
	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/sanitize"
)

// Lookup reads an environment variable; nil reads none.
type Lookup = func(key string) (string, bool)

func getenv(lookup Lookup, key string) string {
	if lookup == nil {
		return ""
	}
	v, _ := lookup(key)
	return v
}

// State returns the directory where memdir keeps its own state (journal,
// cursors, caches), which never lives inside a memory directory:
// MEMDIR_STATE_DIR, else $XDG_STATE_HOME/memdir, else ~/.local/state/memdir.
func State(lookup Lookup) (string, error) {
	return xdg(lookup, "MEMDIR_STATE_DIR", "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// Data returns the directory of memdir's data files (the team server's
// SQLite database): MEMDIR_DATA_DIR, else $XDG_DATA_HOME/memdir, else
// ~/.local/share/memdir.
func Data(lookup Lookup) (string, error) {
	return xdg(lookup, "MEMDIR_DATA_DIR", "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// Config returns the directory of memdir's configuration file:
// MEMDIR_CONFIG_DIR, else $XDG_CONFIG_HOME/memdir, else ~/.config/memdir.
func Config(lookup Lookup) (string, error) {
	return xdg(lookup, "MEMDIR_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
}

func xdg(lookup Lookup, own, xdg, fallback string) (string, error) {
	if d := getenv(lookup, own); d != "" {
		return d, nil
	}
	if d := getenv(lookup, xdg); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%s=%q is not an absolute path: %w", xdg, d, errs.ErrInvalid)
		}
		return filepath.Join(d, "memdir"), nil
	}
	h, err := claudedir.Home(lookup)
	if err != nil {
		return "", err
	}
	if h == "" {
		return "", errors.New("cannot find the home directory: set HOME")
	}
	return filepath.Join(h, fallback, "memdir"), nil
}

// For names memdir's state of one kind for one memory directory:
// <State>/<kind>/<sanitised absolute dir><ext>, so each directory's
// journal, recall cache and review queue sit apart from every other's.
func For(lookup Lookup, kind, memoryDir, ext string) (string, error) {
	state, err := State(lookup)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, kind, sanitize.Path(filepath.Clean(abs), sanitize.Bun)+ext), nil
}
