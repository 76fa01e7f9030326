package memdir

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/memdir/memdir/internal/claudedir"
)

// LookupEnvFunc reads an environment variable. os.LookupEnv is one.
type LookupEnvFunc func(key string) (string, bool)

func getenv(lookup LookupEnvFunc, key string) string {
	if lookup == nil {
		return ""
	}
	v, _ := lookup(key)
	return v
}

// ConfigHome returns Claude Code's configuration directory: CLAUDE_CONFIG_DIR
// when set, otherwise ~/.claude, NFC-normalised.
func ConfigHome(lookup LookupEnvFunc) (string, error) { return claudedir.Config(lookup) }

// MemoryBase returns the directory under which project memory directories
// live: CLAUDE_CODE_REMOTE_MEMORY_DIR when set, otherwise [ConfigHome].
func MemoryBase(lookup LookupEnvFunc) (string, error) {
	if d := getenv(lookup, "CLAUDE_CODE_REMOTE_MEMORY_DIR"); d != "" {
		return d, nil
	}
	return ConfigHome(lookup)
}

// StateDir returns the directory where memdir keeps its own state (journal,
// cursors, caches), which never lives inside a memory directory: MEMDIR_STATE_DIR,
// else $XDG_STATE_HOME/memdir, else ~/.local/state/memdir.
func StateDir(lookup LookupEnvFunc) (string, error) {
	return xdgDir(lookup, "MEMDIR_STATE_DIR", "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// DataDir returns the directory for memdir's data files (the team server's
// SQLite database): MEMDIR_DATA_DIR, else $XDG_DATA_HOME/memdir, else
// ~/.local/share/memdir.
func DataDir(lookup LookupEnvFunc) (string, error) {
	return xdgDir(lookup, "MEMDIR_DATA_DIR", "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// ConfigDir returns the directory of memdir's own configuration file:
// MEMDIR_CONFIG_DIR, else $XDG_CONFIG_HOME/memdir, else ~/.config/memdir.
func ConfigDir(lookup LookupEnvFunc) (string, error) {
	return xdgDir(lookup, "MEMDIR_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
}

func xdgDir(lookup LookupEnvFunc, own, xdg, fallback string) (string, error) {
	if d := getenv(lookup, own); d != "" {
		return d, nil
	}
	if d := getenv(lookup, xdg); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%s=%q is not an absolute path: %w", xdg, d, ErrInvalid)
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

// statePath names memdir's state for one memory directory:
// <StateDir>/<kind>/<SanitizePath(absolute dir)><ext>, so each directory's
// journal, recall cache and review sit apart from every other's.
func statePath(lookup LookupEnvFunc, kind, memoryDir, ext string) (string, error) {
	state, err := StateDir(lookup)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, kind, SanitizePath(filepath.Clean(abs), HashBun)+ext), nil
}

// TeamSyncStateDir returns where team sync keeps its state for one team
// directory (the content each key had at the last pull or push, and the
// local versions of conflicting keys): <StateDir>/team-sync/<SanitizePath(dir)>,
// outside the memory directory so that neither Claude Code nor a push
// ever reads it.
func TeamSyncStateDir(teamDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "team-sync", teamDir, "")
}
