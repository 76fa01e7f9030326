//go:build !unix

package recall

import (
	"os"

	"github.com/memdir/memdir"
)

// fileReader reads memories through the root (see readfile_unix.go).
type fileReader struct{ root *os.Root }

func newFileReader(root *os.Root, _ []string) *fileReader { return &fileReader{root} }

func (r *fileReader) close() {}

func (r *fileReader) read(rel string, hr *memdir.HeaderReader, _ *[]byte) (recallFile, string, []memdir.Problem) {
	return readRecallFile(r.root, rel, hr)
}

// readNew is read with the stamp of a stat taken first; the listing here
// never types a file regular, so staleFiles stats every new file itself.
func (r *fileReader) readNew(rel string, hr *memdir.HeaderReader, buf *[]byte) (f recallFile, body string, probs []memdir.Problem, gone bool) {
	fi, err := r.root.Stat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return recallFile{}, "", nil, true
	}
	f, body, probs = r.read(rel, hr, buf)
	f.stamp = fileStamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	return f, body, probs, false
}
