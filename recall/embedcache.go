package recall

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/safeopen"
	"github.com/memdir/memdir/internal/statedir"
	"github.com/memdir/memdir/llm"
)

// DefaultEmbedCachePath returns where the embedding cache of a memory
// directory lives: <StateDir>/embed/<SanitizePath(dir)>.vec, outside the
// memory directory, beside the recall cache.
func DefaultEmbedCachePath(memoryDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statedir.For(lookup, "embed", memoryDir, ".vec")
}

// The cache file format, version 1 (docs/format.md has the normative text).
// Every integer is little-endian.
//
//	magic        8 bytes  "MDEMBVEC"
//	version      uint32   1
//	sections     uint32   number of sections
//	generation   uint64   incremented by every write
//	per section:
//	  name_len   uint16, then name_len bytes: the embedder name
//	  dim        uint32   floats per vector
//	  count      uint32   vectors
//	  generation uint64   the file generation that last wrote the section
//	  keys       count × 32 bytes: SHA-256 content keys
//	  vectors    count × dim × float32 (IEEE 754 bits), in key order
//	crc          uint32   CRC-32C (Castagnoli) of every byte before it
//
// Why a flat file and not gob: a warm recall needs nothing from it, but a new
// process (a hook, a CLI call) must load every vector before it can rank, and
// 20,000 vectors of 1,536 floats are 123 MB. Read as two flat arrays per
// section, that is one read, one checksum pass and one pass converting bits
// to floats, with a few allocations per section; gob of per-entry
// []float32 decodes through reflection and allocates per vector.
// BenchmarkEmbedCache measured it five times faster to load than gob, with
// a hundredth of the allocations (2,000 vectors: 61-80 ms against 410 ms, on
// a shared two-core machine).
const (
	embedCacheMagic   = "MDEMBVEC"
	embedCacheVersion = 1
	embedHeaderSize   = 24
	// embedMaxSections bounds how many embedders' vectors one file keeps;
	// the least recently written go first.
	embedMaxSections = 4
	// embedSaveEvery is the fewest batches embedded between saves, so an
	// interrupted first indexing keeps most of its work.
	embedSaveEvery = 16
	// embedMaxDim rejects nonsense dimensions when reading a file.
	embedMaxDim = 1 << 16
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
}

type embedSection struct {
	name  string
	dim   int
	gen   uint64
	keys  [][32]byte
	data  []float32 // len(keys) × dim
	index map[[32]byte]int
}

func (s *embedSection) vector(i int) []float32 {
	return s.data[i*s.dim : (i+1)*s.dim : (i+1)*s.dim]
}

func (s *embedSection) buildIndex() {
	s.index = make(map[[32]byte]int, len(s.keys))
	for i, k := range s.keys {
		s.index[k] = i
	}
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
// with the cache and must not be modified.
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
	sec := v.c.section(v.name)
	if sec != nil {
		v.dim = sec.dim
	}
	for i := range v.in {
		k := v.in[i].key()
		v.keys[i] = k
		if sec != nil {
			if j, ok := sec.index[k]; ok {
				v.out[i] = sec.vector(j)
				v.st.Cached++
				continue
			}
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
		if sec == nil {
			out = append(out, i)
			continue
		}
		if _, ok := sec.index[in[i].key()]; !ok {
			out = append(out, i)
		}
	}
	return out, nil
}

func (c *EmbedCache) section(name string) *embedSection {
	for _, s := range c.sections {
		if s.name == name {
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

// refresh reloads the file when another process wrote it since this one
// last read it, which the generation in its header tells.
func (c *EmbedCache) refresh() error {
	if c.loaded {
		gen, ok, err := c.readGeneration()
		if err != nil {
			return err
		}
		if ok && gen == c.gen {
			return nil
		}
		if !ok && c.gen == 0 && len(c.sections) == 0 {
			return nil
		}
	}
	return c.load()
}

// readGeneration reads the generation from the file's header; ok is false
// when there is no file or no valid header.
func (c *EmbedCache) readGeneration() (gen uint64, ok bool, err error) {
	f, _, err := safeopen.Open(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	defer f.Close()
	var h [embedHeaderSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:8]) != embedCacheMagic {
		return 0, false, nil
	}
	return binary.LittleEndian.Uint64(h[16:]), true, nil
}

// load reads the whole file. A missing file is an empty cache; a file that
// cannot be decoded is treated as one too, and replaced on the next write.
func (c *EmbedCache) load() error {
	c.loaded = true
	data, err := safeopen.ReadFile(c.path, 1<<40)
	if errors.Is(err, fs.ErrNotExist) {
		c.gen, c.sections = 0, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	gen, sections, err := decodeEmbedCache(data)
	if err != nil {
		// Derived data: start over. The generation is kept so that the
		// next write supersedes the broken file for every reader.
		sections = nil
	}
	c.gen, c.sections = gen, sections
	return nil
}

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

	old := c.section(name)
	ns := &embedSection{name: name, dim: dim}
	pruned := 0
	if old != nil && old.dim == dim {
		n := len(old.keys)
		ns.keys = make([][32]byte, 0, n+len(fresh))
		ns.data = make([]float32, 0, (n+len(fresh))*dim)
		for i, k := range old.keys {
			if keep != nil && !keep[k] {
				pruned++
				continue
			}
			ns.keys = append(ns.keys, k)
			ns.data = append(ns.data, old.vector(i)...)
		}
	} else {
		ns.keys = make([][32]byte, 0, len(fresh))
		ns.data = make([]float32, 0, len(fresh)*dim)
	}
	ns.buildIndex()
	added := make([][32]byte, 0, len(fresh))
	for k := range fresh {
		if _, ok := ns.index[k]; !ok {
			added = append(added, k)
		}
	}
	// A stable order makes the file the same for the same content.
	sort.Slice(added, func(i, j int) bool { return bytes.Compare(added[i][:], added[j][:]) < 0 })
	for _, k := range added {
		ns.index[k] = len(ns.keys)
		ns.keys = append(ns.keys, k)
		ns.data = append(ns.data, fresh[k]...)
	}

	gen := c.gen + 1
	ns.gen = gen
	sections := []*embedSection{ns}
	for _, s := range c.sections {
		if s.name != name {
			sections = append(sections, s)
		}
	}
	// Keep the current section first, then the most recently written.
	sort.SliceStable(sections[1:], func(i, j int) bool { return sections[1+i].gen > sections[1+j].gen })
	if len(sections) > embedMaxSections {
		sections = sections[:embedMaxSections]
	}
	if err := atomicfile.WriteFile(c.path, encodeEmbedCache(gen, sections), 0o600); err != nil {
		return 0, fmt.Errorf("embedding cache: %w", err)
	}
	removeLeftovers(c.path)
	c.gen, c.sections, c.loaded = gen, sections, true
	return pruned, nil
}

func encodeEmbedCache(gen uint64, sections []*embedSection) []byte {
	size := embedHeaderSize + 4
	for _, s := range sections {
		size += 2 + len(s.name) + 16 + len(s.keys)*32 + len(s.data)*4
	}
	b := make([]byte, 0, size)
	b = append(b, embedCacheMagic...)
	b = binary.LittleEndian.AppendUint32(b, embedCacheVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(sections)))
	b = binary.LittleEndian.AppendUint64(b, gen)
	for _, s := range sections {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(s.name)))
		b = append(b, s.name...)
		b = binary.LittleEndian.AppendUint32(b, uint32(s.dim))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.keys)))
		b = binary.LittleEndian.AppendUint64(b, s.gen)
		for _, k := range s.keys {
			b = append(b, k[:]...)
		}
		for _, f := range s.data {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// errEmbedCacheFormat is what decodeEmbedCache returns for any file it
// cannot read; the caller rebuilds the cache.
var errEmbedCacheFormat = errors.New("not an embedding cache file of this version")

// decodeEmbedCache reads a cache file. On error the generation is still
// returned when the header could be read.
func decodeEmbedCache(data []byte) (uint64, []*embedSection, error) {
	if len(data) < embedHeaderSize+4 || string(data[:8]) != embedCacheMagic {
		return 0, nil, errEmbedCacheFormat
	}
	le := binary.LittleEndian
	gen := le.Uint64(data[16:])
	if le.Uint32(data[8:]) != embedCacheVersion {
		return gen, nil, errEmbedCacheFormat
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != le.Uint32(data[len(data)-4:]) {
		return gen, nil, errEmbedCacheFormat
	}
	n := le.Uint32(data[12:])
	p := body[embedHeaderSize:]
	var sections []*embedSection
	for range n {
		if len(p) < 2 {
			return gen, nil, errEmbedCacheFormat
		}
		nl := int(le.Uint16(p))
		p = p[2:]
		if len(p) < nl+16 {
			return gen, nil, errEmbedCacheFormat
		}
		s := &embedSection{name: string(p[:nl])}
		p = p[nl:]
		dim, count := uint64(le.Uint32(p)), uint64(le.Uint32(p[4:]))
		s.gen = le.Uint64(p[8:])
		p = p[16:]
		if dim == 0 || dim > embedMaxDim || count*32+count*dim*4 > uint64(len(p)) {
			return gen, nil, errEmbedCacheFormat
		}
		s.dim = int(dim)
		s.keys = make([][32]byte, count)
		for i := range s.keys {
			copy(s.keys[i][:], p[i*32:])
		}
		p = p[count*32:]
		s.data = make([]float32, count*dim)
		raw := p[:len(s.data)*4]
		for i := range s.data {
			s.data[i] = math.Float32frombits(le.Uint32(raw[i*4:]))
		}
		p = p[len(raw):]
		s.buildIndex()
		sections = append(sections, s)
	}
	if len(p) != 0 {
		return gen, nil, errEmbedCacheFormat
	}
	return gen, sections, nil
}
