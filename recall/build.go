package recall

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/lexical"
)

// A first build (no index yet, or one rebuilt) puts each memory into a
// lexical.Builder as it is read, and then writes the cache file straight
// from it: the file's tables and strings, then the lexical segment
// streamed section by section into the temporary file, which is mapped
// before it is renamed into place. The index then searches that mapping,
// as a process that opens the file does; the in-memory lexical.Index a
// search of an unsaved index needs is never built. Without a cache file,
// or when another process holds the lock, the segment is written into
// memory and searched there instead.

// largeBuild is the number of documents from which a first build
// collects garbage before writing (see finishBuild).
const largeBuild = 20000

// finishBuild sets x.lex from the builder of a first build, writing the
// cache file when there is one.
func (x *Index) finishBuild(b *lexical.Builder) {
	if b.Docs() >= largeBuild {
		// What reading left (each file's text, the read results) is
		// garbage now: collected before the layout allocates its largest
		// arrays, which then reuse its pages. Left to the memory limit,
		// the collection came before or after the postings' allocation
		// by chance, and a first build at 100,000 memories peaked at 262
		// or 293 MB of RSS.
		runtime.GC()
	}
	if x.cachePath != "" && !x.buildInMemory {
		lex, spent := x.saveBuilt(b)
		if lex != nil {
			x.lex = lex
			return
		}
		if spent {
			// The write failed after the builder was used up (a full
			// disk): build again, in memory.
			x.buildInMemory = true
			x.reset()
			x.refreshLocked(context.Background(), true)
			x.buildInMemory = false
			return
		}
	}
	lex, err := b.Index(nil)
	if err != nil {
		lex = lexical.New(nil, nil) // too large to persist: nothing searchable
	}
	x.lex = lex
	x.base = ""
}

// saveBuilt writes the cache file from x.files, x.dirs and the builder,
// under the lock, and returns the lexical index over its mapping. spent
// reports whether the builder was used (it writes once), whatever the
// outcome.
func (x *Index) saveBuilt(b *lexical.Builder) (lex *lexical.Index, spent bool) {
	if err := atomicfile.MkdirAll(filepath.Dir(x.cachePath), 0o700); err != nil {
		return nil, false
	}
	lock, ok, err := flock.TryAcquire(x.cachePath + ".lock")
	if err != nil || !ok {
		return nil, false
	}
	defer lock.Unlock()
	var h recallDiskHeader
	var data []byte
	err = atomicfile.WriteStream(x.cachePath, 0o600, func(f *os.File) error {
		hd, err := x.headLayout()
		if err != nil {
			return err
		}
		w := &chunkWriter{f: f, buf: make([]byte, 0, 64<<10)}
		if hd, err = x.writeHead(w, hd); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		n, err := b.WriteSegmentAt(f, int64(hd.LexOff))
		if err != nil {
			return err
		}
		hd.finish(uint64(n))
		if _, err := f.WriteAt(rawBytes([]recallDiskHeader{hd}), 0); err != nil {
			return err
		}
		// Mapped before the rename: what is searched is what was
		// written, whatever another process renames over it next.
		data, err = mapOpen(f, int(hd.SourceSize))
		h = hd
		return err
	})
	if err != nil {
		if data != nil {
			unmapFile(data)
		}
		return nil, true
	}
	lex, err = lexical.Load(data[h.LexOff:h.SourceSize], nil)
	if err != nil || lex.Len() != x.searchable() {
		return nil, true
	}
	x.base = recallBase(&h)
	x.delta, x.deltaSum = nil, ""
	x.replacedBase()
	return lex, true
}

// searchable counts the files that can be searched.
func (x *Index) searchable() int {
	if x.view != nil {
		return x.view.searchable()
	}
	n := 0
	for i := range x.files {
		if !x.files[i].bad {
			n++
		}
	}
	return n
}

// replacedBase tidies up after a new base file was written: it holds what
// the delta did, and supersedes earlier versions' caches.
func (x *Index) replacedBase() {
	if err := os.Remove(x.deltaPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		x.base = ""
	}
	removeLeftovers(stateFiles(x.cachePath)...)
	if before, ok := strings.CutSuffix(x.cachePath, ".idx"); ok {
		// The cache of earlier versions (a gob of every memory's text),
		// superseded by this file.
		os.Remove(before + ".gob")
	}
}

// chunkWriter writes to f from its start in writes of at most 64 KiB
// (see atomicfile.WriteMapped for why).
type chunkWriter struct {
	f   *os.File
	off int64
	buf []byte
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf, p = append(w.buf, p[:k]...), p[k:]
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.f.WriteAt(w.buf, w.off)
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return err
}
