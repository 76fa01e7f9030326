//go:build !linux

package recall

import "os"

// dirEnt is an entry of a directory listing; ino is 0 (unknown) here,
// and reg false (every new file is stat-ed before it is read).
type dirEnt struct {
	name       string
	isDir, reg bool
	ino        uint64
}

// listDir lists the directory at path, calling each for every entry.
func listDir(path string, each func(dirEnt)) error {
	ents, err := os.ReadDir(path)
	for _, e := range ents {
		each(dirEnt{name: e.Name(), isDir: e.IsDir()})
	}
	return err
}
