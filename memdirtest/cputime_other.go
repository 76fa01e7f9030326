//go:build !unix

package memdirtest

import "time"

// CPUTime is zero where getrusage(2) does not exist, so a cpu-ms/op metric
// reads 0 there; ns/op is still measured.
func CPUTime() time.Duration { return 0 }
