package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
)

func TestIsShortQuery(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"": true, "   ": true, "deploy": true, "deploy?": true,
		"how do we deploy": false, " two words ": false,
		"部署": true, "部署流程": false, "怎么部署服务": false, "デプロイ方法": false,
	} {
		if got := IsShortQuery(q); got != want {
			t.Errorf("IsShortQuery(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestReadForSurfacing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	short := write("short.md", "---\nname: a\n---\nline one\nline two\n")
	got, cut, err := readForSurfacing(short)
	if err != nil || cut || got != "---\nname: a\n---\nline one\nline two" {
		t.Errorf("short file: %q, %v, %v", got, cut, err)
	}
	var lines []string
	for i := range 250 {
		lines = append(lines, fmt.Sprintf("l%d", i))
	}
	many := write("many.md", strings.Join(lines, "\n"))
	got, cut, _ = readForSurfacing(many)
	if !cut || !strings.HasPrefix(got, strings.Join(lines[:200], "\n")+"\n\n> Only the first 200 lines") || strings.Contains(got, "l200\n") || !strings.Contains(got, many) {
		t.Errorf("line cut wrong: %q", got[len(got)-120:])
	}
	big := write("big.md", strings.Repeat("0123456789abcdef0123456789abcdef0123456789\n", 200))
	got, cut, _ = readForSurfacing(big)
	body := got[:strings.Index(got, "\n\n> Only")]
	if !cut || len(body) > MaxBytes || !strings.HasSuffix(body, "0123456789") || !strings.Contains(got, "the first 4096 bytes") {
		t.Errorf("byte cut wrong: %d bytes, ends %q", len(body), got[len(got)-80:])
	}
	bin := write("bin.md", "a\x00b")
	if _, _, err := readForSurfacing(bin); err == nil {
		t.Error("a binary file was surfaced")
	}
}

// recallFixture writes a small memory directory.
func recallFixture(tb testing.TB, now time.Time) *memdir.Dir {
	tb.Helper()
	d := mustOpen(tb)
	d.Ensure()
	for _, m := range []struct {
		file, name, desc, typ, body string
		age                         time.Duration
	}{
		{"feedback_db_tests.md", "db-tests", "integration tests hit a real Postgres database, never mocks", "feedback", "Use docker compose Postgres.", 0},
		{"project_freeze.md", "release-freeze", "payments API frozen until the audit ends on 2026-12-15", "project", "No API changes to payments.", 40 * 24 * time.Hour},
		{"reference_grafana.md", "grafana", "dispatch latency dashboards live in Grafana", "reference", "grafana.internal/d/dispatch", 24 * time.Hour},
		{"user_role.md", "role", "backend lead for the dispatch service", "user", "Nine years of Go.", 3 * 24 * time.Hour},
	} {
		content := fmt.Sprintf("---\nname: %s\ndescription: %s\ntype: %s\n---\n\n%s\n", m.name, m.desc, m.typ, m.body)
		p := d.Abs(m.file)
		os.WriteFile(p, []byte(content), 0o600)
		os.Chtimes(p, now.Add(-m.age), now.Add(-m.age))
	}
	return d
}

func TestRecallLexical(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	d := recallFixture(t, now)
	opts := &Options{Now: func() time.Time { return now }}

	res, err := Recall(ctx, d, "should the integration tests mock the database?", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != MethodLexical || len(res.Memories) == 0 || res.Memories[0].Path != "feedback_db_tests.md" {
		t.Fatalf("Recall = %+v", res)
	}
	m := res.Memories[0]
	if m.Age != "today" || m.Freshness != "" || m.Header != "Memory (saved today): "+d.Abs(m.Path)+":" || !strings.Contains(m.Reason, "lexical") {
		t.Errorf("fresh memory rendered as %+v", m)
	}
	if !strings.HasPrefix(res.Render(), "<system-reminder>\nMemory (saved today): ") || !strings.Contains(res.Render(), "Use docker compose Postgres.") {
		t.Errorf("Render = %q", res.Render())
	}
	if res.Bytes != len(m.Content) || res.Candidates != 4 {
		t.Errorf("Bytes %d, Candidates %d", res.Bytes, res.Candidates)
	}

	res, _ = Recall(ctx, d, "is the payments API frozen right now?", opts)
	if len(res.Memories) == 0 || res.Memories[0].Path != "project_freeze.md" {
		t.Fatalf("freeze query: %+v", res)
	}
	if m := res.Memories[0]; m.Age != "40 days ago" || !strings.HasPrefix(m.Header, "This memory is 40 days old.") || !strings.HasSuffix(m.Header, "\n\nMemory: "+d.Abs(m.Path)+":") {
		t.Errorf("stale memory header = %q", m.Header)
	}

	// Already surfaced memories are not surfaced again (relative or absolute).
	res, _ = Recall(ctx, d, "is the payments API frozen right now?", &Options{Now: opts.Now, Surfaced: []string{d.Abs("project_freeze.md")}})
	for _, m := range res.Memories {
		if m.Path == "project_freeze.md" {
			t.Error("a surfaced memory came back")
		}
	}
	if res.Candidates != 3 {
		t.Errorf("Candidates = %d with one surfaced", res.Candidates)
	}

	// Nothing relevant: nothing back.
	res, _ = Recall(ctx, d, "write a haiku about autumn leaves", opts)
	if len(res.Memories) != 0 {
		t.Errorf("unrelated query surfaced %v", res.Memories)
	}

	for _, q := range []string{"", "deploy"} {
		res, _ = Recall(ctx, d, q, opts)
		if res.Method != MethodSkipped {
			t.Errorf("query %q not skipped: %+v", q, res)
		}
	}
	res, _ = Recall(ctx, d, "grafana", &Options{AllowShortQueries: true, Now: opts.Now})
	if len(res.Memories) == 0 || res.Memories[0].Path != "reference_grafana.md" {
		t.Errorf("one-word query with AllowShortQueries: %+v", res)
	}

	// The session budget: used up means skipped; nearly used up means fewer.
	res, _ = Recall(ctx, d, "integration tests database", &Options{SessionBytes: SessionBudget, Now: opts.Now})
	if res.Method != MethodSkipped || !strings.Contains(res.Reason, "budget") {
		t.Errorf("over budget: %+v", res)
	}
	res, _ = Recall(ctx, d, "integration tests database", &Options{Budget: 10, Now: opts.Now})
	if len(res.Memories) != 0 || !strings.Contains(res.Reason, "budget") {
		t.Errorf("tiny budget: %+v", res)
	}
}

func TestRecallIndexRefreshAndCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	d := recallFixture(t, now)
	cache := filepath.Join(t.TempDir(), "recall", "cache.gob")
	idx := NewIndex(d.Path(), &IndexOptions{CachePath: cache})
	st, err := idx.Refresh(ctx)
	if err != nil || st.Files != 4 || st.Read != 4 {
		t.Fatalf("first refresh: %+v, %v", st, err)
	}
	st, _ = idx.Refresh(ctx)
	if st.Read != 0 || st.Removed != 0 {
		t.Errorf("second refresh read %d, removed %d; want nothing", st.Read, st.Removed)
	}
	os.Remove(d.Abs("user_role.md"))
	os.WriteFile(d.Abs("reference_grafana.md"), []byte("---\nname: grafana\ndescription: kafka consumer lag graphs\ntype: reference\n---\nx\n"), 0o600)
	st, _ = idx.Refresh(ctx)
	if st.Read != 1 || st.Removed != 1 || idx.Len() != 3 {
		t.Errorf("after edits: %+v, len %d", st, idx.Len())
	}
	hits, hs := idx.Search("kafka consumer lag", 5)
	if len(hits) == 0 || hs[0].Path != "reference_grafana.md" || hs[0].Description != "kafka consumer lag graphs" {
		t.Errorf("search after a change: %v %v", hits, hs)
	}
	// A new process starts from the cache: nothing is read again.
	idx2 := NewIndex(d.Path(), &IndexOptions{CachePath: cache})
	st, _ = idx2.Refresh(ctx)
	if st.Read != 0 || idx2.Len() != 3 {
		t.Errorf("refresh from cache read %d files, holds %d", st.Read, idx2.Len())
	}
	if diff := cmp.Diff(idx.Headers(), idx2.Headers()); diff != "" {
		t.Errorf("cached index differs (-fresh +cached):\n%s", diff)
	}
	// A corrupt cache is rebuilt, not an error.
	os.WriteFile(cache, []byte("garbage"), 0o600)
	idx3 := NewIndex(d.Path(), &IndexOptions{CachePath: cache})
	if st, err := idx3.Refresh(ctx); err != nil || st.Read != 3 {
		t.Errorf("refresh over a corrupt cache: %+v, %v", st, err)
	}
}

func TestRecallEmptyDirectory(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	res, err := Recall(context.Background(), d, "anything at all here", nil)
	if err != nil || res.Method != MethodEmpty || len(res.Memories) != 0 {
		t.Errorf("Recall in an empty directory = %+v, %v", res, err)
	}
}
