//go:build !unix

package checkpoint

import (
	"io/fs"
	"time"
)

// diskUsage falls back to the file size where block counts are not exposed.
func diskUsage(fi fs.FileInfo) int64 { return fi.Size() }

// cpuTime is not measured where getrusage is missing: the CPU metric then
// reads 0.
func cpuTime() time.Duration { return 0 }
