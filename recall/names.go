package recall

import (
	"context"
	"errors"

	"github.com/memdir/memdir"
)

// Names is the store's name lookup (memdir.NameIndex) over a directory's
// persisted recall index: a Save finds the memory it updates by reading
// only the files the index and the directories' changes point to, instead
// of scanning the directory. Each lookup opens the index file afresh, as a
// new process does, so saves by several processes see each other's; a
// lookup also reads and extends the record of the directory's own recent
// saves (see LookupFresh).
type Names struct {
	dir, cachePath string
}

var _ memdir.NameIndex = (*Names)(nil)

// NewNames returns the name lookup of the memory directory dir through the
// index file at cachePath (see DefaultIndexPath).
func NewNames(dir, cachePath string) *Names { return &Names{dir: dir, cachePath: cachePath} }

// LookupName implements memdir.NameIndex.
func (n *Names) LookupName(ctx context.Context, name string) (*memdir.NameMatch, error) {
	if n.cachePath == "" {
		return nil, errors.New("recall names: no index file")
	}
	idx := NewIndex(n.dir, &IndexOptions{CachePath: n.cachePath})
	paths, rs, err := idx.lookupFresh(ctx, name)
	if err != nil {
		return nil, err
	}
	m := &memdir.NameMatch{Paths: paths}
	if rs != nil {
		note := &recentNote{x: idx, rs: rs}
		m.Saving, m.Saved = note.before, note.after
	}
	return m, nil
}
