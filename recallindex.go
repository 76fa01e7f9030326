package memdir

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/lexical"
)

// recallBodyMax is how much of a memory's body the lexical index reads.
const recallBodyMax = 16 << 10

// recallCacheVersion changes whenever the cached fields or their meaning do.
const recallCacheVersion = 1

// indexedDoc is what the recall index keeps of one memory file.
type indexedDoc struct {
	Path        string
	Size        int64
	ModTime     int64 // UnixNano
	Name        string
	Description string
	Type        Type
	Body        string
}

func (d indexedDoc) header(dir string) Header {
	return Header{
		Path: d.Path, AbsPath: filepath.Join(dir, filepath.FromSlash(d.Path)),
		ModTime: time.Unix(0, d.ModTime), Size: d.Size,
		Name: d.Name, Description: d.Description, Type: d.Type,
	}
}

// RecallIndex is a lexical index over every memory of a directory, not only
// the newest 200. Refresh brings it up to date by listing the directory and
// comparing each file's size and modification time with what it holds, so
// only new and changed files are read. With a cache file, the next process
// starts from what this one read.
//
// A RecallIndex is safe for concurrent use.
type RecallIndex struct {
	dir       string
	cachePath string

	mu   sync.Mutex
	docs map[string]indexedDoc
	lex  *lexical.Index
	// loaded is true once the cache file was tried.
	loaded bool
}

// NewRecallIndex returns an index of the memory directory dir. cachePath, if
// not empty, is a file outside the memory directory where the index keeps
// what it read between processes (see DefaultRecallCachePath).
func NewRecallIndex(dir, cachePath string) *RecallIndex {
	return &RecallIndex{dir: filepath.Clean(dir), cachePath: cachePath, docs: map[string]indexedDoc{}}
}

// DefaultRecallCachePath returns where the recall cache of a memory directory
// lives: <StateDir>/recall/<SanitizePath(dir)>.gob.
func DefaultRecallCachePath(memoryDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "recall", memoryDir, ".gob")
}

// RefreshStats says what a Refresh did.
type RefreshStats struct {
	Files    int // memory files in the directory
	Read     int // files read because they were new or changed
	Removed  int // files gone since the last refresh
	Problems []Problem
}

type recallCache struct {
	Version int
	Dir     string
	Docs    []indexedDoc
}

// Refresh updates the index from the directory.
func (x *RecallIndex) Refresh(ctx context.Context) (*RefreshStats, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.loaded {
		x.loaded = true
		x.loadCache()
	}
	st := &RefreshStats{}
	root, err := os.OpenRoot(x.dir)
	if errors.Is(err, fs.ErrNotExist) {
		st.Removed = len(x.docs)
		x.docs = map[string]indexedDoc{}
		x.lex = lexical.New(nil, nil)
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recall index %s: %w", x.dir, err)
	}
	defer root.Close()

	type entry struct {
		rel      string
		size, mt int64
	}
	var stale []entry
	seen := map[string]bool{}
	err = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil
		}
		if e.IsDir() || !strings.HasSuffix(p, ".md") || e.Name() == EntrypointName {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		seen[p] = true
		st.Files++
		if d, ok := x.docs[p]; ok && d.Size == fi.Size() && d.ModTime == fi.ModTime().UnixNano() {
			return nil
		}
		stale = append(stale, entry{p, fi.Size(), fi.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recall index %s: %w", x.dir, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for p := range x.docs {
		if !seen[p] {
			delete(x.docs, p)
			if x.lex != nil {
				x.lex.Remove(p)
			}
			st.Removed++
		}
	}

	// Read new and changed files in parallel.
	read := make([]indexedDoc, len(stale))
	probs := make([][]Problem, len(stale))
	ok := make([]bool, len(stale))
	var wg sync.WaitGroup
	var next int
	var nmu sync.Mutex
	for w := 0; w < min(max(4, 2*runtime.GOMAXPROCS(0)), len(stale)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				nmu.Lock()
				i := next
				next++
				nmu.Unlock()
				if i >= len(stale) || ctx.Err() != nil {
					return
				}
				read[i], probs[i], ok[i], buf = readIndexedDoc(root, stale[i].rel, buf)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range stale {
		st.Problems = append(st.Problems, probs[i]...)
		if !ok[i] {
			delete(x.docs, stale[i].rel)
			if x.lex != nil {
				x.lex.Remove(stale[i].rel)
			}
			continue
		}
		st.Read++
		x.docs[stale[i].rel] = read[i]
		if x.lex != nil {
			x.lex.Put(read[i].lexDoc())
		}
	}
	if x.lex == nil {
		docs := make([]lexical.Doc, 0, len(x.docs))
		for _, d := range x.sortedDocs() {
			docs = append(docs, d.lexDoc())
		}
		x.lex = lexical.New(docs, nil)
	}
	if (st.Read > 0 || st.Removed > 0) && x.cachePath != "" {
		if err := x.saveCache(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (d indexedDoc) lexDoc() lexical.Doc {
	return lexical.Doc{ID: d.Path, Name: d.Name, Description: d.Description, Body: d.Body}
}

// readIndexedDoc reads a memory for the index: its header from the first 30
// lines, as a scan reads it, and up to recallBodyMax bytes of body.
func readIndexedDoc(root *os.Root, rel string, buf []byte) (indexedDoc, []Problem, bool, []byte) {
	h, probs, ok, buf := scanFile(root, rel, buf)
	if !ok {
		return indexedDoc{}, probs, false, buf
	}
	doc := indexedDoc{Path: rel, Size: h.Size, ModTime: h.ModTime.UnixNano(), Name: h.Name, Description: h.Description, Type: h.Type}
	f, err := root.Open(rel)
	if err != nil {
		return doc, probs, true, buf
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, recallBodyMax))
	if err == nil {
		m, _ := ParseMemory(data)
		doc.Body = m.Body
	}
	return doc, probs, true, buf
}

func (x *RecallIndex) sortedDocs() []indexedDoc {
	out := make([]indexedDoc, 0, len(x.docs))
	for _, d := range x.docs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (x *RecallIndex) loadCache() {
	if x.cachePath == "" {
		return
	}
	data, err := os.ReadFile(x.cachePath)
	if err != nil {
		return
	}
	var c recallCache
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&c); err != nil || c.Version != recallCacheVersion || c.Dir != x.dir {
		// A cache from another version or directory is simply rebuilt.
		return
	}
	for _, d := range c.Docs {
		x.docs[d.Path] = d
	}
}

func (x *RecallIndex) saveCache() error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(recallCache{Version: recallCacheVersion, Dir: x.dir, Docs: x.sortedDocs()}); err != nil {
		return fmt.Errorf("recall cache: %w", err)
	}
	if err := atomicfile.MkdirAll(filepath.Dir(x.cachePath), 0o700); err != nil {
		return fmt.Errorf("recall cache: %w", err)
	}
	return atomicfile.WriteFile(x.cachePath, buf.Bytes(), 0o600)
}

// Headers returns every indexed memory, newest first, like a scan.
func (x *RecallIndex) Headers() []Header {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]Header, 0, len(x.docs))
	for _, d := range x.docs {
		out = append(out, d.header(x.dir))
	}
	sortHeaders(out)
	return out
}

// Len returns how many memories the index holds.
func (x *RecallIndex) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.docs)
}

// Search ranks the indexed memories against query and returns the best k
// with their headers. Refresh first.
func (x *RecallIndex) Search(query string, k int) ([]lexical.Hit, []Header) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lex == nil {
		return nil, nil
	}
	hits := x.lex.Search(query, k)
	hs := make([]Header, len(hits))
	for i, h := range hits {
		hs[i] = x.docs[h.ID].header(x.dir)
	}
	return hits, hs
}
