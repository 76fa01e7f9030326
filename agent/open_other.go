//go:build !unix

package agent

import "os"

// openFlags: outside Unix there are no FIFOs to block on in a project tree.
const openFlags = os.O_RDONLY
