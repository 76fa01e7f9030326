// Package claudedir finds the home and Claude Code configuration
// directories from the environment. The root re-exports ConfigHome; the
// package exists so that programs which need the directory but not the
// root (the lean memdir-checkpoint binary) find it the same way.
package claudedir

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/text/unicode/norm"
)

// Home returns $HOME, else the system's idea of the home directory.
// lookup reads an environment variable; nil reads none.
func Home(lookup func(string) (string, bool)) (string, error) {
	if h := getenv(lookup, "HOME"); h != "" {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory: set HOME: %w", err)
	}
	return h, nil
}

// Config returns Claude Code's configuration directory: CLAUDE_CONFIG_DIR
// when set, otherwise ~/.claude, NFC-normalised.
func Config(lookup func(string) (string, bool)) (string, error) {
	if d := getenv(lookup, "CLAUDE_CONFIG_DIR"); d != "" {
		return norm.NFC.String(d), nil
	}
	h, err := Home(lookup)
	if err != nil {
		return "", err
	}
	return norm.NFC.String(filepath.Join(h, ".claude")), nil
}

func getenv(lookup func(string) (string, bool), key string) string {
	if lookup == nil {
		return ""
	}
	v, _ := lookup(key)
	return v
}
