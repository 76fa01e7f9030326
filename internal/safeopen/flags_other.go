//go:build !unix

package safeopen

// Elsewhere there are no FIFOs to block on in the file system, and links
// are not followed by an open of the kind memdir makes.
const (
	nonBlock = 0
	noFollow = 0
)
