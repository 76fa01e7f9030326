//go:build !linux

package memtool

import "os"

// renameNoReplace renames oldRel to newRel inside r and fails with an error
// matching fs.ErrExist if newRel exists. Without renameat2 this is the
// link-or-check fallback; see renameNoReplaceFallback for its limits.
func renameNoReplace(r *os.Root, oldRel, newRel string) error {
	return renameNoReplaceFallback(r, oldRel, newRel)
}
