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
