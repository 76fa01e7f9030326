package review

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/memfile"
)

// Some writers must leave a file's bytes exactly as they came: a team sync
// pull writes what the server has, so that the next pull and push (memdir's,
// and Claude Code's own, which compares checksums of whole files) find the
// two equal and upload nothing. A provenance line in the frontmatter would
// change those bytes, so for such writes memdir keeps the record outside the
// memory directory, beside the review queue:
//
//	<review dir>/provenance/<first 32 hex digits of sha256(path)>.json
//	{"path": "team/deploy.md", "sum": "sha256:…", "provenance": {…}}
//
// A record holds only while the file's content has the checksum it names:
// any later write (by memdir, by hand, by Claude Code) lets it lapse, and the
// frontmatter's record, if any, speaks again. Each record is its own file,
// replaced atomically, so concurrent writers need no lock: the last one
// wins, and either is true of the content it names.

// outsideRecord is one provenance record kept outside the directory.
type outsideRecord struct {
	Path       string             `json:"path"`
	Sum        string             `json:"sum"`
	Provenance *memdir.Provenance `json:"provenance"`
}

func (q *Queue) outsidePath(rel string) string {
	h := sha256.Sum256([]byte(rel))
	return filepath.Join(q.dir, "provenance", hex.EncodeToString(h[:16])+".json")
}

// RecordProvenance records p as the provenance of the file rel (relative to
// the directory) holding content, outside the directory, for a writer that
// must not change the file's bytes (see WrittenBy). An empty p.At is filled
// from the directory's clock.
func (q *Queue) RecordProvenance(rel string, content []byte, p *memdir.Provenance) error {
	rel, err := memdir.CleanMemoryFilePath(rel)
	if err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	rec := outsideRecord{Path: rel, Sum: memfile.ContentSum(content), Provenance: p.Stamped(q.now())}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	dst := q.outsidePath(rel)
	if err := atomicfile.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("record provenance of %s: %w", rel, err)
	}
	if err := atomicfile.WriteFile(dst, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record provenance of %s: %w", rel, err)
	}
	return nil
}

// WrittenBy returns how the file rel, whose current content is content, was
// last written: the record RecordProvenance kept for exactly that content
// (a sync pull), else the record in its frontmatter (Memory.Provenance), nil
// when neither says. An unreadable record outside the directory is
// reported with the frontmatter's answer.
func (q *Queue) WrittenBy(rel string, content []byte) (*memdir.Provenance, error) {
	m, _ := memdir.ParseMemory(content)
	front := m.Provenance()
	rel, err := memdir.CleanMemoryFilePath(rel)
	if err != nil {
		return front, err
	}
	p := q.outsidePath(rel)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return front, nil
	}
	if err != nil {
		return front, fmt.Errorf("provenance record of %s: %w", rel, err)
	}
	var rec outsideRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Provenance == nil {
		if err == nil {
			err = errors.New("no provenance in it")
		}
		return front, fmt.Errorf("provenance record %s of %s is unreadable (%v); remove it, the file itself is unaffected", p, rel, err)
	}
	if rec.Path != rel || rec.Sum != memfile.ContentSum(content) {
		return front, nil
	}
	return rec.Provenance, nil
}
