//go:build !linux

package prefault

func populate([]byte, bool) bool { return false }
