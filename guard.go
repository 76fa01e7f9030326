package memdir

import (
	"context"
	"path"
)

// A Guard screens what an automatic writer is about to write into the
// directory (see Options.Guard). Package review implements it with a queue
// that holds a suspicious write for a person to accept or reject.
type Guard interface {
	// Screen is called before w is written, under the directory lock. A
	// non-nil error stops the write, and the writer returns it as is.
	Screen(w *GuardedWrite) error
}

// GuardedWrite is one write a Guard is asked about.
type GuardedWrite struct {
	// Path is the file, relative to the memory directory.
	Path string
	// Op is "save" (a memory through Dir.Save) or "write" (a whole file,
	// from the memory tool or a sync pull).
	Op string
	// Old is the file's content before the write, nil when Created.
	Old     []byte
	Created bool
	// Content is the complete new content.
	Content []byte
	// Origin says who is writing; Automatic() is true.
	Origin *Provenance
}

// WriteGuard returns a hook for writers of whole files (memtool.Options.Write,
// agent.Options.Write): for an automatic origin it asks the directory's
// Guard about the new content of rel, and returns the Guard's error (a held
// write: nothing is to be written); otherwise it returns the content with
// origin recorded in its frontmatter (files without frontmatter, such as
// MEMORY.md, are returned unchanged). old is the file's current content,
// nil when it does not exist.
func (d *Dir) WriteGuard(origin *Provenance) func(rel string, old, content []byte) ([]byte, error) {
	return func(rel string, old, content []byte) ([]byte, error) {
		if d.guard != nil && origin.Automatic() {
			w := &GuardedWrite{Path: rel, Op: "write", Old: old, Created: old == nil, Content: content, Origin: origin}
			if err := d.guard.Screen(w); err != nil {
				return nil, err
			}
		}
		if origin != nil && path.Base(rel) != EntrypointName {
			if out, ok := StampProvenance(content, origin.Stamped(d.now())); ok {
				return out, nil
			}
		}
		return content, nil
	}
}

// A NameIndex finds memories by their frontmatter name without scanning the
// directory (see Options.Names); package recall's index implements it.
type NameIndex interface {
	// LookupName returns the memories whose name may be name. Save reads
	// each path it gives to check; a failure makes Save scan instead.
	LookupName(ctx context.Context, name string) (*NameMatch, error)
}

// NameMatch is what a NameIndex found for one Save.
type NameMatch struct {
	// Paths are the memories (slash paths relative to the directory)
	// whose name may be the one asked for.
	Paths []string
	// Saving, when set, is called under the directory lock before the save
	// writes anything, and Saved once it wrote the memory at rel, named
	// name, and its index line: an index that records the directory's own
	// recent saves updates its record there.
	Saving func()
	Saved  func(rel, name string)
}

func (m *NameMatch) saving() {
	if m != nil && m.Saving != nil {
		m.Saving()
	}
}

func (m *NameMatch) saved(rel, name string) {
	if m != nil && m.Saved != nil {
		m.Saved(rel, name)
	}
}
