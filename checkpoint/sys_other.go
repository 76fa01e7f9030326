//go:build !unix

package checkpoint

import "io/fs"

// Without O_NOFOLLOW the Lstat checks before and the identity checks after
// opening are the only defence against a swapped-in link.
const (
	oNoFollow = 0
	oNonBlock = 0
)

type fileID struct{ dev, ino uint64 }

// statID returns no identity: os.SameFile is not available from a FileInfo
// alone here, so identity checks always pass.
func statID(fs.FileInfo) fileID { return fileID{} }

func linkCount(fs.FileInfo) uint64 { return 1 }
