package review

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
)

func TestRecordProvenanceOutsideTheFile(t *testing.T) {
	t.Parallel()
	d, q, setNow := openWithReview(t)
	setNow(func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) })
	content := []byte("---\nname: build\ndescription: how to build\nprovenance: {by: user, via: cli}\n---\n\nmake all\n")
	// Before any record, the frontmatter's answers.
	if p, err := q.WrittenBy("team/build.md", content); err != nil || p == nil || p.By != memdir.ByUser {
		t.Fatalf("WrittenBy before a record = %+v, %v; want the frontmatter's user record", p, err)
	}
	origin := &memdir.Provenance{By: memdir.BySync, Server: "https://team.example/acme/widgets", Version: "sha256:abc"}
	if err := q.RecordProvenance("team/build.md", content, origin); err != nil {
		t.Fatal(err)
	}
	p, err := q.WrittenBy("team/build.md", content)
	if err != nil || p == nil || p.By != memdir.BySync || p.Server != origin.Server || p.Version != "sha256:abc" || p.At != "2026-12-01T10:00:00Z" {
		t.Fatalf("WrittenBy = %+v, %v; want the sync record stamped with the clock", p, err)
	}
	// Other content at the same path: the record lapses.
	if p, err := q.WrittenBy("team/build.md", append(content, "more\n"...)); err != nil || p == nil || p.By != memdir.ByUser {
		t.Errorf("WrittenBy of changed content = %+v, %v; want the frontmatter's record", p, err)
	}
	// The same content at another path has no record.
	if p, _ := q.WrittenBy("team/other.md", []byte("no frontmatter")); p != nil {
		t.Errorf("WrittenBy of another file = %+v, want nil", p)
	}
	// The records sit beside the review queue without being taken for items.
	if items, errs := q.List(true); len(items) != 0 || len(errs) != 0 {
		t.Errorf("HeldWrites beside a provenance record = %v, %v; want none", items, errs)
	}
	// Nothing is written into the memory directory.
	if _, err := os.Stat(d.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("recording provenance created the memory directory: %v", err)
	}
	for _, bad := range []string{"../x.md", "team/MEMORY.md", "notes.txt"} {
		if err := q.RecordProvenance(bad, content, origin); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("RecordProvenance(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if err := q.RecordProvenance("a.md", content, &memdir.Provenance{By: "robot"}); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("RecordProvenance by robot = %v, want ErrInvalid", err)
	}
	// A damaged record is reported, naming it, with the frontmatter's answer.
	if err := os.WriteFile(q.outsidePath("team/build.md"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = q.WrittenBy("team/build.md", content)
	if err == nil || !strings.Contains(err.Error(), q.outsidePath("team/build.md")) || p == nil || p.By != memdir.ByUser {
		t.Errorf("WrittenBy with a damaged record = %+v, %v", p, err)
	}
}
