package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
)

// journalHook is the memory tool's BeforeChange for one call: it journals
// every file a command is about to change in the call's run, so that undoing
// the run restores the directory.
//
// The memory tool names directories as well as files. A directory about to be
// deleted or renamed is journaled file by file. For a rename the tool then
// names the destination, which does not exist yet; the hook journals each
// file the source held under its destination name too (as absent), so that
// an undo removes the moved copies and puts the originals back.
//
// With each memory file it records the file's MEMORY.md lines as they are
// before the command, because an undo puts those lines back: without them it
// would drop the line of a memory the command merely edited.
type journalHook struct {
	rec *memdir.Recorder
	dir *memdir.Dir
	// indexes caches the indexes read during the call, by index path.
	indexes map[string]*memdir.Index
	// srcDir and srcFiles are the directory last journaled and the files
	// it held, waiting for a rename's destination.
	srcDir   string
	srcFiles []string
}

func (h *journalHook) before(rel string) error {
	rel = path.Clean(rel)
	src, files := h.srcDir, h.srcFiles
	h.srcDir, h.srcFiles = "", nil
	fi, err := os.Lstat(h.dir.Abs(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if src == "" {
			return h.record(rel)
		}
		moved := make([]string, len(files))
		for i, f := range files {
			moved[i] = rel + strings.TrimPrefix(f, src)
		}
		return h.record(moved...)
	case err != nil:
		return err
	case fi.IsDir():
		files, err := h.filesUnder(rel)
		if err != nil {
			return err
		}
		h.srcDir, h.srcFiles = rel, files
		return h.record(files...)
	default:
		// A regular file; anything else (a symbolic link) is refused by
		// the journal, which can only restore regular files.
		return h.record(rel)
	}
}

// record journals files and notes the index lines each has now.
func (h *journalHook) record(files ...string) error {
	if err := h.rec.Before(files...); err != nil {
		return err
	}
	for _, f := range files {
		if path.Base(f) == memdir.EntrypointName {
			continue
		}
		indexRel, link := memdir.IndexFor(f)
		ix := h.indexes[indexRel]
		if ix == nil {
			var err error
			if ix, err = h.dir.ReadIndex(indexRel != memdir.EntrypointName); err != nil {
				return err
			}
			if h.indexes == nil {
				h.indexes = map[string]*memdir.Index{}
			}
			h.indexes[indexRel] = ix
		}
		// The lines exactly as written, so that an undo restores them
		// byte for byte.
		var lines []string
		all := ix.Lines()
		for _, e := range ix.Find(link) {
			lines = append(lines, all[e.Line-1])
		}
		h.rec.NoteIndexLines(f, lines)
	}
	return nil
}

// filesUnder lists every non-directory entry below dir, as slash paths
// relative to the root. Links are listed, not followed, so the journal
// refuses them rather than lose them.
func (h *journalHook) filesUnder(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(h.dir.Abs(dir), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(h.dir.Path(), p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal the directory %s: %w", dir, err)
	}
	return files, nil
}
