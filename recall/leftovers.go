package recall

import (
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
)

// stateFiles are the files recall keeps beside a cache path.
func stateFiles(cachePath string) []string {
	return []string{cachePath, cachePath + ".cursor", cachePath + ".recent", cachePath + ".hint", cachePath + ".delta"}
}

// removeLeftovers removes the temporary files killed writes of the files
// beside cachePath left behind. Each is a full copy of what it replaced,
// so they would otherwise pile up; errors are ignored, as the next write
// tries again.
func removeLeftovers(files ...string) {
	now := time.Now() // file times are the wall clock's
	for _, f := range files {
		atomicfile.RemoveStale(f, atomicfile.StaleAge, now)
	}
}

// Leftovers lists the temporary files that killed writes of a memory
// directory's recall index and embedding cache left in the state
// directory, at least five minutes old. When remove is set it also removes
// them and returns those it removed. They are partial copies of derived
// data: removing them loses nothing.
func Leftovers(memoryDir string, lookup memdir.LookupEnvFunc, remove bool) ([]string, error) {
	now := time.Now()
	idx, err := DefaultIndexPath(memoryDir, lookup)
	if err != nil {
		return nil, err
	}
	vec, err := DefaultEmbedCachePath(memoryDir, lookup)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range append(stateFiles(idx), vec) {
		var found []string
		if remove {
			found, err = atomicfile.RemoveStale(f, atomicfile.StaleAge, now)
		} else {
			found, err = atomicfile.Stale(f, atomicfile.StaleAge, now)
		}
		out = append(out, found...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
