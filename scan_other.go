//go:build !unix

package memdir

import (
	"os"
)

type fastTree struct{}

func (*fastTree) scan(string, int, []byte) (Header, []Problem, bool, []byte, bool) {
	return Header{}, nil, false, nil, false
}

func (*fastTree) close() {}

func listMemoryFiles(root *os.Root, _ string) (*memoryFiles, error) {
	return walkMemoryFiles(root)
}
