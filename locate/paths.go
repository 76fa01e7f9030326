package locate

import (
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/claudedir"
	"github.com/memdir/memdir/internal/sanitize"
	"github.com/memdir/memdir/internal/statedir"
)

func getenv(lookup memdir.LookupEnvFunc, key string) string {
	if lookup == nil {
		return ""
	}
	v, _ := lookup(key)
	return v
}

// ConfigHome returns Claude Code's configuration directory: CLAUDE_CONFIG_DIR
// when set, otherwise ~/.claude, NFC-normalised.
func ConfigHome(lookup memdir.LookupEnvFunc) (string, error) { return claudedir.Config(lookup) }

// MemoryBase returns the directory under which project memory directories
// live: CLAUDE_CODE_REMOTE_MEMORY_DIR when set, otherwise [ConfigHome].
func MemoryBase(lookup memdir.LookupEnvFunc) (string, error) {
	if d := getenv(lookup, EnvRemoteMemoryDir); d != "" {
		return d, nil
	}
	return ConfigHome(lookup)
}

// StateDir returns the directory where memdir keeps its own state (journal,
// cursors, caches), which never lives inside a memory directory: MEMDIR_STATE_DIR,
// else $XDG_STATE_HOME/memdir, else ~/.local/state/memdir.
func StateDir(lookup memdir.LookupEnvFunc) (string, error) { return statedir.State(lookup) }

// DataDir returns the directory for memdir's data files (the team server's
// SQLite database): MEMDIR_DATA_DIR, else $XDG_DATA_HOME/memdir, else
// ~/.local/share/memdir.
func DataDir(lookup memdir.LookupEnvFunc) (string, error) { return statedir.Data(lookup) }

// ConfigDir returns the directory of memdir's own configuration file:
// MEMDIR_CONFIG_DIR, else $XDG_CONFIG_HOME/memdir, else ~/.config/memdir.
func ConfigDir(lookup memdir.LookupEnvFunc) (string, error) { return statedir.Config(lookup) }

// HashRuntime selects how project names longer than 200 UTF-16 units are
// hashed: the hash depends on the JavaScript runtime that ran Claude Code.
type HashRuntime = sanitize.Runtime

const (
	// HashBun reproduces the shipped Claude Code CLI, which runs on Bun:
	// Bun.hash, 64-bit wyhash with seed 0 over the UTF-8 bytes, in base 36.
	HashBun = sanitize.Bun
	// HashNode reproduces Claude Code run under Node.js: a signed 32-bit
	// djb2 over UTF-16 units, absolute value, in base 36.
	HashNode = sanitize.Node
)

// SanitizePath turns a path into a directory name exactly as Claude Code
// does: every UTF-16 code unit that is not an ASCII letter or digit becomes
// '-' (so a character outside the Basic Multilingual Plane becomes "--"). A
// result longer than 200 units is cut to 200 and followed by '-' and a hash
// of the original, unsanitised name.
func SanitizePath(name string, runtime HashRuntime) string { return sanitize.Path(name, runtime) }
