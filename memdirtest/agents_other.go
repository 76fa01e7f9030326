//go:build !unix

package memdirtest

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, the context's
// cancellation kills the program alone.
func ownGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}
