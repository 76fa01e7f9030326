//go:build !linux

package recall

import "os"

// dirEnt is an entry of a directory listing; ino is 0 (unknown) here.
type dirEnt struct {
	name  string
	isDir bool
	ino   uint64
}

// listDir lists the directory at path.
func listDir(path string) ([]dirEnt, error) {
	ents, err := os.ReadDir(path)
	out := make([]dirEnt, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirEnt{name: e.Name(), isDir: e.IsDir()})
	}
	return out, err
}
