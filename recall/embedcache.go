package recall

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/internal/statedir"
	"github.com/memdir/memdir/llm"
)

// DefaultEmbedCachePath returns where the embedding cache of a memory
// directory lives: <StateDir>/embed/<SanitizePath(dir)>.vec, outside the
// memory directory, beside the recall cache.
func DefaultEmbedCachePath(memoryDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statedir.For(lookup, "embed", memoryDir, ".vec")
}

// The cache file is a framed file (package internal/framed, docs/format.md
// has the normative text), format "MDEMBVEC" version 3. Section 0 lists the
// embedders' sections and the file's generation, little-endian:
//
//	generation   uint64   incremented by every write
//	sections     uint32   number of embedder sections, at most 4
//	reserved     uint32   0
//	per embedder section i (0, 1, …):
//	  dim        uint32   floats per vector
//	  count      uint32   vectors
//	  generation uint64   the file generation that last wrote the section
//	  name_len   uint16, then name_len bytes: the embedder name
//
// and embedder section i is in the framed sections 1+4i to 4+4i, in the
// byte order of the machine that wrote it (the frame records it):
//
//	keys      count × 32 bytes: SHA-256 content keys, strictly ascending
//	vectors   count × dim × float32, in the order of the keys
//	sums      count × uint32: CRC-32C of each vector's bytes
//	sketches  count × sketchStride(dim) bytes, then the mean and the half
//	          width of the levels of each dimension (2 × dim × float32):
//	          each vector at 4 bits a dimension (vecsketch.go)
//
// Version 2 had no sketches (three framed sections an embedder); such a
// file is read as it is and rewritten with them by the first recall that
// wants them, so that no vector is embedded again.
//
// Why mapped and in place: a new process (a hook, a CLI call) needs the
// vectors of a few candidates and of nothing else, but version 1 was one
// flat file of every vector with one checksum over it, so every process
// read and converted all of it (123 MB at 20,000 vectors of 1,536 floats,
// most of a hybrid hook's cost). Version 2 is mapped: a reader checks the
// small sections (keys and sums) by the frame's checksums, finds a key by
// binary search over the keys, and checks each vector it uses against its
// own sum, so it touches the pages of those vectors only. The vectors
// section is used unverified (framed.File.Unverified) because checking its
// frame checksum would read all of it.
const (
	embedCacheMagic   = "MDEMBVEC"
	embedCacheVersion = 3
	// embedParts is how many framed sections hold one embedder's vectors
	// (keys, vectors, sums, sketches, their levels); version 2 had the
	// first three.
	embedParts   = 5
	embedPartsV2 = 3
	// embedMaxSections bounds how many embedders' vectors one file keeps;
	// the least recently written go first.
	embedMaxSections = 4
	// embedSaveEvery is the fewest batches embedded between saves, so an
	// interrupted first indexing keeps most of its work.
	embedSaveEvery = 16
	// embedMaxDim rejects nonsense dimensions when reading a file.
	embedMaxDim = 1 << 16
)

var (
	embedFormat   = framed.Format{Magic: embedCacheMagic, Version: embedCacheVersion}
	embedFormatV2 = framed.Format{Magic: embedCacheMagic, Version: 2}
)

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// EmbedCache keeps the vectors of texts between processes, in one file
// outside the memory directory (see DefaultEmbedCachePath). Entries are keyed
// by the SHA-256 of the embedded text, the embedder name and the vector
// dimension: editing a memory re-embeds that memory only, and another model
// or dimension re-embeds everything (the file keeps the vectors of up to four
// embedders, so switching back is free).
//
// It is derived data: a missing, corrupt or other-version file is rebuilt
// silently, and deleting it costs only the embedding calls to fill it again.
//
// Several processes may share the file on one machine: every write happens
// under an OS lock on FILE.lock, merges what other processes wrote since
// this one read the file, and replaces the file atomically, so readers never
// see a partial file and no process loses another's vectors. On network
// filesystems the lock may not hold; the worst outcome is then a vector
// embedded twice or dropped, never a corrupt read (the CRC catches that).
//
// An EmbedCache is safe for concurrent use; its Vectors calls run one at a
// time, so two goroutines never embed the same text twice.
type EmbedCache struct {
	path string

	mu       sync.Mutex
	loaded   bool
	gen      uint64 // generation of the file as last read or written
	sections []*embedSection
	// file is the mapped cache file (nil when there is none or it could
	// not be read), fi its status when mapped; lent is set once vectors
	// viewing it were handed out.
	file *framed.File
	fi   os.FileInfo
	lent bool
	// retained is set once a mapping was kept after its file was
	// replaced (see setFile); later loads read the file into memory, which
	// the garbage collector frees when its vectors are dropped, so that a
	// long-lived process keeps one old mapping at most, not one a write.
	retained bool
}

// embedSection is one embedder's vectors in the mapped file. Its slices
// view the mapping, which is read-only: nothing may write into them.
type embedSection struct {
	name string
	dim  int
	gen  uint64
	id   uint32 // framed id of the keys; the vectors, sums and sketches follow
	// parts is embedParts, or embedPartsV2 for a section without
	// sketches, read from a version 2 file.
	parts uint32

	// ready is set once the keys and sums were checked and viewed; bad
	// when the section is damaged, which makes it count as empty.
	ready, bad bool
	keys       [][32]byte // ascending
	vecs       []float32  // len(keys) × dim, unverified: see vector
	sums       []uint32   // CRC-32C of each vector
	// sketch holds each vector's sketch, sketchStride(dim) bytes apart,
	// and width the half width of each dimension's levels (see
	// vecsketch.go); both nil for a section of a version 2 file.
	sketch []byte
	width  []float32
	levels []byte // the levels' part (mean, width), to copy when rewriting the file
	// state is, per vector, whether its sum was checked (0 unchecked,
	// 1 good, 2 bad); made on the first check.
	state []uint8
	// searches counts binary searches; past embedIndexAfter, index maps
	// every key to its position, for a process that looks up many (the
	// MCP server ranking every memory).
	searches int
	index    map[[32]byte]int
}

// embedIndexAfter is how many binary searches of a section are made before
// its keys are put in a map: a hook looks up a few candidates, a server
// asking for every vector again and again would search 20,000 times a call.
const embedIndexAfter = 4096

// open views the keys, vectors and sums of s in f, checking the keys and
// sums against the frame's checksums and the keys' order; on any failure
// the section is bad.
func (s *embedSection) open(f *framed.File) {
	s.ready = true
	s.bad = true
	kb, err := f.Section(s.id)
	if err != nil {
		return
	}
	vb, err := f.Unverified(s.id + 1)
	if err != nil {
		return
	}
	sb, err := f.Section(s.id + 2)
	if err != nil {
		return
	}
	keys, ok1 := framed.View[[32]byte](kb)
	vecs, ok2 := framed.View[float32](vb)
	sums, ok3 := framed.View[uint32](sb)
	if !ok1 || !ok2 || !ok3 || len(sums) != len(keys) || len(vecs) != len(keys)*s.dim {
		return
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1][:], keys[i][:]) >= 0 {
			return
		}
	}
	s.keys, s.vecs, s.sums, s.bad = keys, vecs, sums, false
	if s.parts == embedParts {
		// The sketches are used unchecked: they only choose which vectors
		// have their cosine taken, and those are checked; checking an
		// eighth of the vectors' size on every prompt would cost more
		// than scoring it. Their levels (mean and width) are checked.
		// Damaged ones cost no vector: the section is used as one without
		// sketches, which the next recall over many memories rewrites.
		kb, err1 := f.Unverified(s.id + 3)
		lb, err2 := f.Section(s.id + 4)
		levels, ok := framed.View[float32](lb)
		if err1 != nil || err2 != nil || !ok || len(kb) != len(keys)*sketchStride(s.dim) || len(levels) != 2*s.dim {
			return
		}
		s.sketch, s.width, s.levels = kb, levels[s.dim:], lb
	}
}

// find returns the position of key k, by binary search.
func (s *embedSection) find(k [32]byte) (int, bool) {
	if s.index != nil {
		i, ok := s.index[k]
		return i, ok
	}
	if s.searches++; s.searches > embedIndexAfter {
		s.index = make(map[[32]byte]int, len(s.keys))
		for i, k := range s.keys {
			s.index[k] = i
		}
		return s.find(k)
	}
	return sort.Find(len(s.keys), func(i int) int { return bytes.Compare(k[:], s.keys[i][:]) })
}

// vector returns the i'th vector, a view of the mapping, after checking it
// against its sum the first time; ok is false when it fails, and the
// section is then bad.
func (s *embedSection) vector(i int) (v []float32, ok bool) {
	v = s.vecs[i*s.dim : (i+1)*s.dim : (i+1)*s.dim]
	if s.state == nil {
		s.state = make([]uint8, len(s.keys))
	}
	switch s.state[i] {
	case 1:
		return v, true
	case 0:
		if crc32.Checksum(framed.Raw(v), castagnoli()) == s.sums[i] {
			s.state[i] = 1
			return v, true
		}
		s.state[i] = 2
	}
	s.bad = true
	return nil, false
}

// OpenEmbedCache returns the cache kept in the file at path. The file is
// read on first use and created on the first write, with its directory.
func OpenEmbedCache(path string) (*EmbedCache, error) {
	if path == "" {
		return nil, fmt.Errorf("embedding cache: no file path given: %w", memdir.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	return &EmbedCache{path: abs}, nil
}

// Path returns the cache file.
func (c *EmbedCache) Path() string { return c.path }

// Len returns how many vectors the cache file holds for the embedder name,
// reading the file when it changed; an unreadable file counts as empty.
func (c *EmbedCache) Len(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refresh() != nil {
		return 0
	}
	if s := c.section(name); s != nil {
		return len(s.keys)
	}
	return 0
}

// Vectors returns one vector per input, in order: from the cache when it
// holds the input's key for this embedder, else from e, in batches, the new
// vectors then being saved to the file. Inputs with equal keys are embedded
// once. An input found in the cache needs no Text (see Missing); one that is
// not and whose text is empty or only white space gets a nil vector (Cosine
// 0 with anything) and costs no call. The returned vectors are shared
// with the cache and must not be modified: those found in the cache view
// the mapped file, mapped read-only where the system maps files (a write
// into one faults), and stay valid for as long as the process runs, even
// after the file is replaced.
//
// When the embedder fails or answers with the wrong number of vectors or
// mixed dimensions, the error is an *EmbedError and the vectors of the
// batches that succeeded are saved. When e's vectors turn out to have another
// dimension than the cached ones, the cached ones are dropped and every
// input is embedded. On any error the returned vectors are nil.
func (c *EmbedCache) Vectors(ctx context.Context, e llm.Embedder, in []EmbedInput, opts *EmbedOptions) ([][]float32, *EmbedStats, error) {
	var o EmbedOptions
	if opts != nil {
		o = *opts
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultEmbedBatchSize
	}
	name := e.EmbedderName()
	if name == "" || len(name) > math.MaxUint16 {
		return nil, nil, fmt.Errorf("embedding cache: embedder name %q is empty or too long: %w", name, memdir.ErrInvalid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(); err != nil {
		return nil, nil, err
	}
	v := &vectorsRun{c: c, e: e, name: name, in: in, o: o, st: &EmbedStats{}, fresh: map[[32]byte][]float32{}}
	v.lookup()
	if err := v.embed(ctx); err != nil {
		return nil, nil, err
	}
	if err := v.finish(ctx); err != nil {
		return nil, nil, err
	}
	return v.out, v.st, nil
}

// vectorsRun is one Vectors call: what the cache held, what is embedded.
type vectorsRun struct {
	c    *EmbedCache
	e    llm.Embedder
	name string
	in   []EmbedInput
	o    EmbedOptions
	st   *EmbedStats
	keys [][32]byte
	out  [][]float32
	// todo are the indexes of the inputs to embed, one per key.
	todo   []int
	queued map[[32]byte]bool
	// fresh are the vectors embedded in this call, by key; dim is their
	// dimension (the cached one until the first batch says otherwise).
	fresh map[[32]byte][]float32
	dim   int
}

// lookup takes each input's vector from the cache, and queues the others
// that have text to embed.
func (v *vectorsRun) lookup() {
	v.keys = make([][32]byte, len(v.in))
	v.out = make([][]float32, len(v.in))
	v.queued = map[[32]byte]bool{}
	for i := range v.in {
		v.keys[i] = v.in[i].key()
	}
	sec := v.c.section(v.name)
	if sec != nil {
		v.dim = sec.dim
		for i, k := range v.keys {
			if j, ok := sec.find(k); ok {
				vec, ok := sec.vector(j)
				if !ok { // damaged: the section counts as empty
					clear(v.out)
					v.st.Cached, v.dim, sec = 0, 0, nil
					break
				}
				v.out[i] = vec
				v.st.Cached++
			}
		}
		if v.st.Cached > 0 {
			v.c.lent = true
		}
	}
	for i, k := range v.keys {
		if v.out[i] != nil {
			continue
		}
		if strings.TrimSpace(v.in[i].Text) == "" {
			continue // nothing to embed; servers reject empty input
		}
		if !v.queued[k] {
			v.queued[k] = true
			v.todo = append(v.todo, i)
		}
	}
}

// saveFresh keeps what was embedded so far; used on the way out of a
// failure, where the failure is what gets reported.
func (v *vectorsRun) saveFresh(ctx context.Context) {
	if len(v.fresh) > 0 {
		v.c.save(ctx, v.name, v.dim, v.fresh, nil)
	}
}

// embed sends the queued texts to the embedder in batches, saving now and
// then during a long indexing so that an interruption keeps most of it.
func (v *vectorsRun) embed(ctx context.Context) error {
	if v.o.Progress != nil && len(v.todo) > 0 {
		v.o.Progress(0, len(v.todo))
	}
	firstBatch := true
	unsaved := 0 // texts embedded since the last save
	for start := 0; start < len(v.todo); {
		if err := ctx.Err(); err != nil {
			v.saveFresh(ctx)
			return err
		}
		batch := v.todo[start:min(start+v.o.BatchSize, len(v.todo))]
		vecs, err := v.embedBatch(ctx, batch, firstBatch)
		if err != nil {
			v.saveFresh(ctx)
			return err
		}
		firstBatch = false
		start += len(batch)
		for j, i := range batch {
			v.fresh[v.keys[i]] = vecs[j]
		}
		v.st.Embedded += len(batch)
		if v.o.Progress != nil {
			v.o.Progress(v.st.Embedded, len(v.todo))
		}
		// Save at doubling intervals, so that the file is rewritten a few
		// times, not once per batch.
		if unsaved += len(batch); unsaved >= max(embedSaveEvery*v.o.BatchSize, v.st.Cached+v.st.Embedded-unsaved) && start < len(v.todo) {
			if _, err := v.c.save(ctx, v.name, v.dim, v.fresh, nil); err != nil {
				return err
			}
			unsaved = 0
		}
	}
	return nil
}

// embedBatch embeds the inputs of one batch and checks the reply: one
// vector per text, all of one dimension, the dimension of those before.
// When the first batch shows the embedder's dimension changed under the
// same name, what the cache holds is of no use, and every input is queued.
func (v *vectorsRun) embedBatch(ctx context.Context, batch []int, first bool) ([][]float32, error) {
	texts := make([]string, len(batch))
	for j, i := range batch {
		texts[j] = v.in[i].Text
	}
	emb, err := v.e.Embed(ctx, texts)
	v.st.Requests++
	if err == nil && emb == nil {
		err = errors.New("no reply")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embeddings from %s: %w", v.name, ctx.Err())
		}
		return nil, &llm.EmbedError{Embedder: v.name, Err: err}
	}
	v.st.Usage.Add(emb.Usage)
	if len(emb.Vectors) != len(texts) {
		return nil, errEmbedReply(v.name, "%d vectors for %d texts", len(emb.Vectors), len(texts))
	}
	got := len(emb.Vectors[0])
	for j, vec := range emb.Vectors {
		if len(vec) == 0 || len(vec) != got {
			return nil, errEmbedReply(v.name, "vector %d of a batch has %d dimensions, vector 0 has %d", j, len(vec), got)
		}
	}
	if v.dim != got {
		if !first || len(v.fresh) > 0 {
			return nil, errEmbedReply(v.name, "vectors of %d dimensions after vectors of %d", got, v.dim)
		}
		if v.dim != 0 {
			v.requeueCached()
		}
		v.dim = got
	}
	return emb.Vectors, nil
}

// requeueCached drops the cached vectors taken for the inputs and queues
// those inputs to be embedded again.
func (v *vectorsRun) requeueCached() {
	for i := range v.in {
		if v.out[i] != nil {
			v.out[i] = nil
			if !v.queued[v.keys[i]] {
				v.queued[v.keys[i]] = true
				v.todo = append(v.todo, i)
			}
		}
	}
	v.st.Cached = 0
}

// finish saves the new vectors (and prunes, when asked), and fills the
// result with them.
func (v *vectorsRun) finish(ctx context.Context) error {
	var keep map[[32]byte]bool
	if v.o.Prune {
		keep = make(map[[32]byte]bool, len(v.keys))
		for _, k := range v.keys {
			keep[k] = true
		}
	}
	if len(v.fresh) > 0 || (keep != nil && v.c.prunable(v.name, keep)) {
		pruned, err := v.c.save(ctx, v.name, v.dim, v.fresh, keep)
		if err != nil {
			return err
		}
		v.st.Pruned = pruned
	}
	for i := range v.in {
		if vec, ok := v.fresh[v.keys[i]]; ok && v.out[i] == nil {
			v.out[i] = vec[:len(vec):len(vec)]
		}
	}
	return nil
}

// Missing returns the indexes of the inputs whose keys the cache holds no
// vector for, for embedder e: the inputs whose Text a caller must fill
// before Vectors (an input found in the cache needs no text).
func (c *EmbedCache) Missing(e llm.Embedder, in []EmbedInput) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(); err != nil {
		return nil, err
	}
	sec := c.section(e.EmbedderName())
	var out []int
	for i := range in {
		if sec != nil {
			if j, ok := sec.find(in[i].key()); ok {
				if _, ok := sec.vector(j); ok {
					continue
				}
				// damaged: the section counts as empty
				sec = nil
				out = out[:0]
				for i := range i + 1 {
					out = append(out, i)
				}
				continue
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// section returns the section of embedder name, viewing it on first use;
// nil when the file has none or it is damaged.
func (c *EmbedCache) section(name string) *embedSection {
	for _, s := range c.sections {
		if s.name == name {
			if !s.ready {
				s.open(c.file)
			}
			if s.bad {
				return nil
			}
			return s
		}
	}
	return nil
}

// prunable reports whether the section of name holds keys outside keep.
func (c *EmbedCache) prunable(name string, keep map[[32]byte]bool) bool {
	s := c.section(name)
	if s == nil {
		return false
	}
	for _, k := range s.keys {
		if !keep[k] {
			return true
		}
	}
	return false
}

// refresh maps the file again when it was replaced since this process
// last mapped it (writers replace it by rename, so a new file is a new
// inode); a file that did not change is not read at all.
func (c *EmbedCache) refresh() error {
	fi, err := os.Stat(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		if !c.loaded || c.file != nil || len(c.sections) > 0 {
			c.setFile(nil, nil, nil)
			c.gen = 0
		}
		c.loaded = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	if c.loaded && c.fi != nil && os.SameFile(fi, c.fi) && fi.Size() == c.fi.Size() && fi.ModTime().Equal(c.fi.ModTime()) {
		return nil
	}
	return c.load(fi)
}

// load maps the file, whose status before opening was fi. A missing file
// is an empty cache; a file that cannot be read as a cache of this version
// is treated as one too, and replaced on the next write.
func (c *EmbedCache) load(fi os.FileInfo) error {
	c.loaded = true
	open := embedFormat.Open
	if c.retained || (c.file != nil && c.lent) {
		open = embedFormat.ReadFile
	}
	f, err := open(c.path)
	parts := uint32(embedParts)
	if errors.Is(err, framed.ErrVersion) {
		// A version 2 file: its vectors are good, it lacks the sketches.
		v2 := embedFormatV2.Open
		if c.retained || (c.file != nil && c.lent) {
			v2 = embedFormatV2.ReadFile
		}
		if f2, err2 := v2(c.path); err2 == nil {
			f, err, parts = f2, nil, embedPartsV2
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.setFile(nil, nil, nil)
		c.gen = 0
		return nil
	case errors.Is(err, framed.ErrMagic), errors.Is(err, framed.ErrVersion), errors.Is(err, framed.ErrCorrupt):
		// Derived data: start over. The generation is kept so that the
		// next write supersedes the broken file.
		c.setFile(nil, fi, nil)
		return nil
	case err != nil:
		return fmt.Errorf("embedding cache: %w", err)
	}
	gen, sections, err := parseEmbedMeta(f, parts)
	if err != nil {
		f.Close()
		c.setFile(nil, fi, nil)
		return nil
	}
	c.setFile(f, fi, sections)
	c.gen = gen
	return nil
}

// setFile replaces the mapped file. The one it replaces is unmapped unless
// vectors were handed out from it, which callers may still hold: that
// mapping then lasts as long as the process (it is read-only, and its file
// was replaced by rename, so it never changes). A process keeps one such
// mapping at most: once it kept one, it reads the file instead (see load),
// as a hook or CLI call rarely does and a server after every write would.
func (c *EmbedCache) setFile(f *framed.File, fi os.FileInfo, sections []*embedSection) {
	if c.file != nil && c.file != f {
		if c.lent {
			c.retained = true
		} else {
			c.file.Close()
		}
	}
	c.file, c.fi, c.sections, c.lent = f, fi, sections, false
}

// parseEmbedMeta reads section 0 of the file: its generation and the list
// of embedder sections, not yet viewed (see embedSection.open).
func parseEmbedMeta(f *framed.File, parts uint32) (uint64, []*embedSection, error) {
	p, err := f.Section(0)
	if err != nil {
		return 0, nil, err
	}
	le := binary.LittleEndian
	if len(p) < 16 {
		return 0, nil, errEmbedCacheFormat
	}
	gen, n := le.Uint64(p), le.Uint32(p[8:])
	if n > embedMaxSections || uint32(f.Len()) != 1+parts*n {
		return gen, nil, errEmbedCacheFormat
	}
	p = p[16:]
	var sections []*embedSection
	for i := range n {
		if len(p) < 18 {
			return gen, nil, errEmbedCacheFormat
		}
		dim, count, sgen, nl := le.Uint32(p), le.Uint32(p[4:]), le.Uint64(p[8:]), int(le.Uint16(p[16:]))
		p = p[18:]
		if dim == 0 || dim > embedMaxDim || nl == 0 || len(p) < nl {
			return gen, nil, errEmbedCacheFormat
		}
		_ = count // the sections' lengths say it again, and are checked
		sections = append(sections, &embedSection{name: string(p[:nl]), dim: int(dim), gen: sgen, id: 1 + parts*i, parts: parts})
		p = p[nl:]
	}
	if len(p) != 0 {
		return gen, nil, errEmbedCacheFormat
	}
	return gen, sections, nil
}

// errEmbedCacheFormat is what parseEmbedMeta returns for a file it cannot
// read; the caller rebuilds the cache.
var errEmbedCacheFormat = errors.New("not an embedding cache file of this version")

// save merges fresh vectors into the section of name, under the file lock
// and on top of the file as it is now, drops the entries outside keep when
// keep is not nil, and writes the file. It returns how many entries keep
// dropped.
func (c *EmbedCache) save(ctx context.Context, name string, dim int, fresh map[[32]byte][]float32, keep map[[32]byte]bool) (int, error) {
	ctx = context.WithoutCancel(ctx) // a cancelled call still keeps its work
	dir := filepath.Dir(c.path)
	if err := atomicfile.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("embedding cache: %w", err)
	}
	lock, err := flock.Acquire(ctx, c.path+".lock")
	if err != nil {
		return 0, fmt.Errorf("embedding cache: %w", err)
	}
	defer lock.Unlock()
	if err := c.refresh(); err != nil {
		return 0, err
	}

	ns, pruned := mergeSection(c.section(name), name, dim, fresh, keep)
	gen := c.gen + 1
	ns.gen = gen
	sections := []*embedOut{ns}
	for _, s := range c.sections {
		if s.name == name {
			continue
		}
		if !s.ready {
			s.open(c.file)
		}
		if !s.bad {
			sections = append(sections, &embedOut{name: s.name, dim: s.dim, gen: s.gen, keys: s.keys, raw: framed.Raw(s.vecs), sums: s.sums, sketch: s.sketch, levels: s.levels})
		}
	}
	// Keep the current section first, then the most recently written.
	sort.SliceStable(sections[1:], func(i, j int) bool { return sections[1+i].gen > sections[1+j].gen })
	if len(sections) > embedMaxSections {
		sections = sections[:embedMaxSections]
	}
	if err := writeEmbedCache(c.path, gen, sections); err != nil {
		return 0, fmt.Errorf("embedding cache: %w", err)
	}
	removeLeftovers(c.path)
	// Map what was written (under the lock, nobody replaced it since).
	c.loaded = false
	if err := c.refresh(); err != nil {
		return 0, err
	}
	return pruned, nil
}

// embedOut is a section to write: keys ascending, and either the vectors
// of each key (vecs) or the vectors' bytes and sums as another file held
// them (raw, sums), with their sketch part when it had one (sketch; it is
// computed when nil).
type embedOut struct {
	name   string
	dim    int
	gen    uint64
	keys   [][32]byte
	vecs   [][]float32
	raw    []byte
	sums   []uint32
	sketch []byte
	levels []byte
}

// mergeSection returns the section of name holding the vectors of old
// (none when it is nil, damaged, or of another dimension) whose keys are in
// keep (every one when keep is nil), and the fresh vectors old lacks; and
// how many of old's keep dropped.
func mergeSection(old *embedSection, name string, dim int, fresh map[[32]byte][]float32, keep map[[32]byte]bool) (*embedOut, int) {
	ns := &embedOut{name: name, dim: dim}
	var oldKeys [][32]byte
	var oldVecs [][]float32
	pruned := 0
	if old != nil && old.dim == dim {
		oldKeys = make([][32]byte, 0, len(old.keys))
		oldVecs = make([][]float32, 0, len(old.keys))
		for i, k := range old.keys {
			if keep != nil && !keep[k] {
				pruned++
				continue
			}
			v, ok := old.vector(i)
			if !ok { // damaged: the section counts as empty
				oldKeys, oldVecs, pruned = nil, nil, 0
				break
			}
			oldKeys = append(oldKeys, k)
			oldVecs = append(oldVecs, v)
		}
	}
	added := make([][32]byte, 0, len(fresh))
	for k := range fresh {
		if _, ok := slices.BinarySearchFunc(oldKeys, k, compareKeys); !ok {
			added = append(added, k)
		}
	}
	slices.SortFunc(added, compareKeys)
	n := len(oldKeys) + len(added)
	ns.keys = make([][32]byte, 0, n)
	ns.vecs = make([][]float32, 0, n)
	i, j := 0, 0
	for i < len(oldKeys) || j < len(added) {
		if j == len(added) || (i < len(oldKeys) && compareKeys(oldKeys[i], added[j]) < 0) {
			ns.keys, ns.vecs = append(ns.keys, oldKeys[i]), append(ns.vecs, oldVecs[i])
			i++
		} else {
			ns.keys, ns.vecs = append(ns.keys, added[j]), append(ns.vecs, fresh[added[j]])
			j++
		}
	}
	return ns, pruned
}

func compareKeys(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) }

// writeEmbedCache writes the file of generation gen holding sections (see
// the format above), by atomic replace.
func writeEmbedCache(path string, gen uint64, sections []*embedOut) error {
	le := binary.LittleEndian
	meta := le.AppendUint64(nil, gen)
	meta = le.AppendUint32(meta, uint32(len(sections)))
	meta = le.AppendUint32(meta, 0)
	size := 64
	for _, s := range sections {
		meta = le.AppendUint32(meta, uint32(s.dim))
		meta = le.AppendUint32(meta, uint32(len(s.keys)))
		meta = le.AppendUint64(meta, s.gen)
		meta = le.AppendUint16(meta, uint16(len(s.name)))
		meta = append(meta, s.name...)
		size += embedParts*(8+24) + len(s.keys)*(32+4+4*s.dim) + sketchBytes(len(s.keys), s.dim)
	}
	w := embedFormat.NewWriter(nil)
	w.Grow(size + len(meta))
	w.Add(0, meta)
	for i, s := range sections {
		id := 1 + embedParts*uint32(i)
		w.Add(id, framed.Raw(s.keys))
		if s.vecs == nil {
			w.Add(id+1, s.raw)
			w.Add(id+2, framed.Raw(s.sums))
			sk, lv := s.sketch, s.levels
			if sk == nil || lv == nil {
				vecs, _ := framed.View[float32](s.raw)
				sk, lv = buildSketches(len(s.keys), s.dim, func(i int) []float32 { return vecs[i*s.dim : (i+1)*s.dim] })
			}
			w.Add(id+3, sk)
			w.Add(id+4, lv)
			continue
		}
		sums := make([]uint32, len(s.vecs))
		w.AddFunc(id+1, func(b []byte) ([]byte, error) {
			for k, v := range s.vecs {
				raw := framed.Raw(v)
				sums[k] = crc32.Checksum(raw, castagnoli())
				b = append(b, raw...)
			}
			return b, nil
		})
		w.Add(id+2, framed.Raw(sums))
		sk, lv := buildSketches(len(s.keys), s.dim, func(i int) []float32 { return s.vecs[i] })
		w.Add(id+3, sk)
		w.Add(id+4, lv)
	}
	return w.WriteMapped(path, 0o600)
}
