//go:build !linux

package main

import "errors"

// canEvict is false: evictFile is not available here, and the row that
// needs it is left out.
const canEvict = false

func evictFile(string) error { return errors.ErrUnsupported }
