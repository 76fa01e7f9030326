package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	_ "modernc.org/sqlite" // the FTS5 baseline's engine

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/recall"
)

// fts5 scores the baseline a developer would reach for first: SQLite FTS5
// with the porter stemmer over name, description and body, ranked by its
// BM25, the query's words OR-ed, top 5. It runs in memory, on the same
// directory as the other rows, distractors included.
func (ed *evalDir) fts5(p *evalParts) error {
	const name = "fts5-porter"
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	if _, err := db.Exec(`CREATE VIRTUAL TABLE m USING fts5(path UNINDEXED, name, description, body, tokenize = 'porter unicode61')`); err != nil {
		return fmt.Errorf("fts5 baseline: %w", err)
	}
	for _, h := range ed.idx.Headers() {
		data, err := os.ReadFile(filepath.Join(ed.d.Path(), filepath.FromSlash(h.Path)))
		if err != nil {
			return fmt.Errorf("fts5 baseline: %w", err)
		}
		body := ""
		if m, _ := memdir.ParseMemory(data); m != nil {
			body = m.Body
		}
		if _, err := db.Exec(`INSERT INTO m (path, name, description, body) VALUES (?, ?, ?, ?)`, h.Path, h.Name, h.Description, body); err != nil {
			return fmt.Errorf("fts5 baseline: %w", err)
		}
	}
	var qerr error
	rep := evalset.Evaluate(ed.set, func(q string) []string {
		match := fts5Query(q)
		if match == "" {
			return nil
		}
		rows, err := db.Query(`SELECT path FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT ?`, match, recall.MaxMemories)
		if err != nil {
			qerr = fmt.Errorf("fts5 baseline, query %q: %w", q, err)
			return nil
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var path string
			if rows.Scan(&path) == nil {
				out = append(out, path)
			}
		}
		return out
	}, &evalset.Options{Ks: []int{5}})
	if qerr != nil {
		return qerr
	}
	p.add(name)
	p.reports[name] = rep
	return nil
}

// fts5Query is an FTS5 query matching any word of q: its letter and digit
// runs, each quoted (so no word is read as an operator), OR-ed.
func fts5Query(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}
