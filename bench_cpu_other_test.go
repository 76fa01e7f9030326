//go:build !unix

package memdir

import "time"

// cpuTime is zero where getrusage(2) does not exist, so the cpu-ms/op metric
// reads 0 there; ns/op is still measured.
func cpuTime() time.Duration { return 0 }
