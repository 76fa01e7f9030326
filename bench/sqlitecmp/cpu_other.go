//go:build !unix

package main

import "time"

// cpu is zero where getrusage(2) does not exist, so CPU figures read 0 there.
func cpu() time.Duration { return 0 }
