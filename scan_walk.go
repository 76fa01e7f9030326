package memdir

import (
	"io/fs"
	"os"
	"strings"
)

// memoryFiles are the memory files a scan found, in the order fs.WalkDir
// visits them, and how to read each one's header.
type memoryFiles struct {
	rels []string
	// fast reads files without os.Root where the platform allows it (see
	// scan_unix.go); nil reads every file through the root.
	fast *fastTree
}

// scan reads the header of the i-th file.
func (t *memoryFiles) scan(root *os.Root, i int, buf []byte) (Header, []Problem, bool, []byte) {
	if t.fast != nil {
		if h, probs, ok, buf, done := t.fast.scan(t.rels[i], i, buf); done {
			return h, probs, ok, buf
		}
	}
	return scanFile(root, t.rels[i], buf)
}

func (t *memoryFiles) close() {
	if t.fast != nil {
		t.fast.close()
	}
}

// walkMemoryFiles lists the memory files below root with fs.WalkDir: every
// *.md file at any depth except files named MEMORY.md. An unreadable
// subdirectory is skipped, as an unreadable file is.
func walkMemoryFiles(root *os.Root) (*memoryFiles, error) {
	var rels []string
	err := fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil
		}
		if e.IsDir() || !strings.HasSuffix(p, ".md") || e.Name() == EntrypointName {
			return nil
		}
		rels = append(rels, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &memoryFiles{rels: rels}, nil
}
