package memdir

import "github.com/memdir/memdir/internal/statedir"

// LookupEnvFunc reads an environment variable. os.LookupEnv is one.
type LookupEnvFunc func(key string) (string, bool)

// statePath names memdir's state of one kind for one memory directory (see
// package statedir).
func statePath(lookup LookupEnvFunc, kind, memoryDir, ext string) (string, error) {
	return statedir.For(lookup, kind, memoryDir, ext)
}
