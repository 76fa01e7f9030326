package memtool

import (
	"context"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/usage"
)

// CountViews returns a function that counts a memory-tool view of the file
// at rel (a slash path relative to the directory) as a use, for
// Options.AfterView. Files that are not memories (MEMORY.md, files
// not ending in .md) are not counted. A failure to count goes to onErr
// (nil drops it): a view never fails for it. A nil log gives nil.
func CountViews(ctx context.Context, u *usage.Log, onErr func(error)) func(rel string) {
	if u == nil {
		return nil
	}
	return func(rel string) {
		if clean, err := memdir.CleanMemoryFilePath(rel); err != nil || clean != rel {
			return
		}
		if err := u.Record(ctx, usage.View, rel); err != nil && onErr != nil {
			onErr(err)
		}
	}
}
