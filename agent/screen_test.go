package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/transcript"
)

func loadSamples(tb testing.TB, name string) []string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "screen", name))
	if err != nil {
		tb.Fatal(err)
	}
	var ss []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &ss); err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Text
	}
	return out
}

// screenWorld is an extraction world whose review queue is in the test's
// temporary directory.
func screenWorld(tb testing.TB) (*memdir.Dir, *review.Queue, *memdirtest.ModelServer, *agent.Extractor) {
	tb.Helper()
	base := tb.TempDir()
	d, q, err := review.Open(filepath.Join(base, "memory"), &memdir.Options{
		Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)}, &review.Options{Dir: filepath.Join(base, "review")})
	if err != nil {
		tb.Fatal(err)
	}
	srv := memdirtest.NewModelServer(tb)
	e, err := agent.NewExtractor(&agent.ExtractOptions{
		Model: clients[0].new(tb, srv), Dir: d, StateDir: filepath.Join(base, "state"), SessionID: "sess-9",
		Now: func() time.Time { return time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d, q, srv, e
}

func scriptCreate(srv *memdirtest.ModelServer, body string) {
	file := "---\nname: notes\ndescription: project notes\ntype: project\n---\n\n" + body + "\n"
	srv.Enqueue(
		reply(llm.Usage{InputTokens: 10, OutputTokens: 10}, use("t1", "memory", mustJSON(map[string]string{"command": "create", "path": "/memories/project_notes.md", "file_text": file}))),
		memdirtest.TextReply("Done."),
	)
}

// webConv is a conversation in which the assistant fetched a web page.
func webConv() []transcript.Message {
	msgs := conv("summarise the vendor's install page", "Here is the summary.")
	msgs[1].Content = append([]llm.Block{use("w1", "WebFetch", `{"url":"https://vendor.example/install"}`)}, msgs[1].Content...)
	return msgs
}

func TestExtractHostileGoesToReview(t *testing.T) {
	ctx := context.Background()
	for i, text := range loadSamples(t, "hostile.json") {
		d, q, srv, e := screenWorld(t)
		scriptCreate(srv, text)
		res, err := e.Extract(ctx, agent.Source{Messages: webConv()})
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if len(res.Saved) != 0 {
			t.Errorf("sample %d: saved %v", i, res.Saved)
		}
		if _, err := os.Stat(d.Abs("project_notes.md")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("sample %d reached the memory directory (%v): %q", i, err, text)
		}
		items, errs := q.List(false)
		if len(errs) != 0 || len(items) != 1 {
			t.Fatalf("sample %d: held %v %v", i, items, errs)
		}
		it := items[0]
		if it.Path != "project_notes.md" || !strings.Contains(it.Content, text) || it.Provenance.By != memdir.ByExtraction || it.Provenance.Session != "sess-9" || it.Provenance.Position != "u2" {
			t.Errorf("sample %d: item %+v", i, it)
		}
		// The model was told the write was held.
		if last := srv.LastRequest(); !strings.Contains(mustJSON(last.Messages), "held for review") {
			t.Errorf("sample %d: the model was not told", i)
		}
		if i == 0 {
			if _, err := q.Accept(ctx, d, it.ID); err != nil {
				t.Fatal(err)
			}
			m, err := d.Get(ctx, "project_notes.md")
			if err != nil {
				t.Fatal(err)
			}
			if p := m.Provenance(); p == nil || p.By != memdir.ByExtraction || strings.Join(p.Untrusted, ",") != "WebFetch" {
				t.Errorf("accepted provenance %+v", p)
			}
		}
	}
}

func TestExtractBenignIsSavedWithProvenance(t *testing.T) {
	ctx := context.Background()
	for i, text := range loadSamples(t, "benign.json") {
		d, _, srv, e := screenWorld(t)
		scriptCreate(srv, text)
		res, err := e.Extract(ctx, agent.Source{Messages: webConv()})
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if len(res.Saved) != 1 {
			t.Errorf("sample %d not saved: %q", i, text)
			continue
		}
		m, err := d.Get(ctx, "project_notes.md")
		if err != nil {
			t.Fatal(err)
		}
		p := m.Provenance()
		if p == nil || p.By != memdir.ByExtraction || p.Session != "sess-9" || p.Position != "u2" || strings.Join(p.Untrusted, ",") != "WebFetch" {
			t.Errorf("sample %d provenance %+v", i, p)
		}
		if !strings.Contains(m.Body, strings.TrimSpace(text)) {
			t.Errorf("sample %d body changed: %q", i, m.Body)
		}
	}
}
