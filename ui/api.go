package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/secrets"
	"github.com/memdir/memdir/session"
	"github.com/memdir/memdir/usage"
)

const teamPrefix = memdir.TeamDirName + "/"

// endpoints lists the API: every route, what it answers with, and its
// handler.
func (s *Server) endpoints() []endpoint {
	get, post := http.MethodGet, http.MethodPost
	return []endpoint{
		handle(s, "/api/session", get, s.apiSession),
		handle(s, "/api/memories", get, s.apiMemories),
		handle(s, "/api/search", get, s.apiSearch),
		handle(s, "/api/memory", get, s.apiMemory),
		handle(s, "/api/memory/save", post, s.apiSave),
		handle(s, "/api/memory/create", post, s.apiCreate),
		handle(s, "/api/memory/rename", post, s.apiRename),
		handle(s, "/api/memory/move-to-team", post, s.apiMoveToTeam),
		handle(s, "/api/memory/delete", post, s.apiDelete),
		handle(s, "/api/undo", post, s.apiUndo),
		handle(s, "/api/index", get, s.apiIndex),
		handle(s, "/api/doctor/fix", post, s.apiFix),
		handle(s, "/api/activity", get, s.apiActivity),
		handle(s, "/api/run", get, s.apiRun),
		handle(s, "/api/recall/preview", post, s.apiPreview),
		handle(s, "/api/team", get, s.apiTeam),
		handle(s, "/api/team/history", get, s.apiTeamHistory),
		handle(s, "/api/checkpoints", get, s.apiCheckpoints),
		handle(s, "/api/checkpoints/diff", get, s.apiCheckpointDiff),
		handle(s, "/api/checkpoints/rewind", get, s.apiCheckpointRewind),
		handle(s, "/api/review", get, s.apiReview),
		handle(s, "/api/review/accept", post, s.apiReviewDecide(true)),
		handle(s, "/api/review/reject", post, s.apiReviewDecide(false)),
	}
}

func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("/", s.serveAsset)
	for _, e := range s.endpoints() {
		mux.Handle(e.path, e.handler)
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
}

// indexLimits are Claude Code's load limits of an index.
type indexLimits struct {
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

var limits = indexLimits{Lines: memdir.MaxIndexLines, Chars: memdir.MaxIndexChars}

// sessionResponse is what the page learns when it starts: the CSRF token
// for its POSTs and what the footer and forms show.
type sessionResponse struct {
	CSRF    string        `json:"csrf"`
	Dir     string        `json:"dir"`
	Version string        `json:"version"`
	Model   bool          `json:"model"`
	Team    bool          `json:"team"`
	Limits  indexLimits   `json:"limits"`
	Types   []memdir.Type `json:"types"`
	// Enabled, EnabledReason and Source come from where the directory was
	// found; they are absent with --dir.
	Enabled       *bool  `json:"enabled,omitempty"`
	EnabledReason string `json:"enabled_reason,omitempty"`
	Source        string `json:"source,omitempty"`
}

func (s *Server) apiSession(r *http.Request) (*sessionResponse, error) {
	out := &sessionResponse{
		CSRF: s.csrf, Dir: s.d.Path(), Version: s.opts.Version,
		Model: s.opts.Model != nil, Team: s.opts.Team != nil, Limits: limits, Types: memdir.Types,
	}
	if l := s.opts.Location; l != nil {
		enabled := l.Enabled
		out.Enabled, out.EnabledReason, out.Source = &enabled, l.EnabledReason, string(l.Source)
	}
	return out, nil
}

// memoryItem is one memory in the list.
type memoryItem struct {
	Path        string    `json:"path"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        string    `json:"type"`
	RawType     string    `json:"raw_type,omitempty"`
	Team        bool      `json:"team"`
	ModTime     time.Time `json:"mtime"`
	AgeDays     int       `json:"age_days"`
	Age         string    `json:"age"`
	Size        int64     `json:"size"`
	Indexed     bool      `json:"indexed"`
	// IndexLine is the line of its MEMORY.md that indexes the memory (0
	// when none does; see IndexFile); IndexLoaded says whether Claude Code
	// loads that line, which it does not past the 200-line or
	// 25,000-character cut.
	IndexLine   int  `json:"index_line,omitempty"`
	IndexLoaded bool `json:"index_loaded"`
	// IndexFile is set when the line is in the overflow file compaction
	// moved it to (MEMORY-more.md, beside MEMORY.md), which Claude Code
	// does not load: agents reach it through MEMORY.md's link to it.
	// IndexLine is then that file's line.
	IndexFile   string `json:"index_file,omitempty"`
	Frontmatter bool   `json:"has_frontmatter"`
}

// memoriesResponse lists every memory of the directory.
type memoriesResponse struct {
	Dir      string           `json:"dir"`
	Total    int              `json:"total"`
	Memories []memoryItem     `json:"memories"`
	Problems []memdir.Problem `json:"problems"`
}

func (s *Server) apiMemories(r *http.Request) (*memoriesResponse, error) {
	res, err := s.d.Scan(r.Context(), &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	// Each index is parsed once; Find then looks memories up through its
	// map, so the listing is linear in the directory.
	// A memory whose line compaction moved is indexed by MEMORY-more.md.
	idx, more := map[bool]*memdir.Index{}, map[bool]*memdir.Index{}
	loaded := map[bool]map[string]bool{}
	for _, team := range []bool{false, true} {
		if idx[team], err = s.d.ReadIndex(team); err != nil {
			return nil, err
		}
		if more[team], err = s.d.ReadOverflowIndex(team); err != nil {
			return nil, err
		}
		loaded[team] = loadedLines(idx[team])
	}
	now := s.now()
	items := make([]memoryItem, 0, len(res.Memories))
	for _, h := range res.Memories {
		indexRel, link := memdir.IndexFor(h.Path)
		team := indexRel != memdir.EntrypointName
		it := memoryItem{
			Path: h.Path, Name: h.Name, Description: h.Description, Type: string(h.Type), RawType: h.RawType,
			Team: team, ModTime: h.ModTime, AgeDays: memdir.AgeDays(h.ModTime, now), Age: memdir.MemoryAge(h.ModTime, now),
			Size: h.Size, Frontmatter: h.HasFrontmatter,
		}
		if entries := idx[team].Find(link); len(entries) > 0 {
			it.Indexed, it.IndexLine = true, entries[0].Line
			for _, e := range entries {
				if loaded[team][strings.TrimSpace(idx[team].Line(e.Line))] {
					it.IndexLine, it.IndexLoaded = e.Line, true
					break
				}
			}
		} else if more[team] != nil && link != memdir.OverflowIndexName {
			if entries := more[team].Find(link); len(entries) > 0 {
				it.Indexed, it.IndexLine = true, entries[0].Line
				it.IndexFile = path.Join(path.Dir(indexRel), memdir.OverflowIndexName)
			}
		}
		items = append(items, it)
	}
	return &memoriesResponse{Dir: s.d.Path(), Total: res.Total, Memories: items, Problems: nonNil(res.Problems)}, nil
}

// loadedLines returns the lines of ix, space-trimmed, that Claude Code
// loads: MEMORY.md as memdir.LoadIndexText cuts it (frontmatter and HTML
// comments out, then the first 200 lines and 25,000 characters).
func loadedLines(ix *memdir.Index) map[string]bool {
	text, _ := memdir.LoadIndexText(ix.Bytes())
	out := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		out[strings.TrimSpace(line)] = true
	}
	return out
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func (s *Server) recallOptions() *recall.Options {
	return &recall.Options{Model: s.opts.Model, Index: s.opts.RecallIndex, Now: s.now, Via: usage.UI}
}

func (s *Server) apiSearch(r *http.Request) (*recall.Result, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return nil, errorf(http.StatusBadRequest, "search: the query q is empty")
	}
	opts := s.recallOptions()
	opts.AllowShortQueries = true
	opts.Max = 20
	res, err := recall.Recall(r.Context(), s.d, q, opts)
	if err != nil {
		return nil, err
	}
	wordsForTerms(res)
	return res, nil
}

// cleanRef checks a memory path from a request.
func cleanRef(raw string) (string, error) {
	if raw == "" {
		return "", errorf(http.StatusBadRequest, "no memory path given")
	}
	rel, err := memdir.CleanMemoryFilePath(raw)
	if err != nil {
		return "", err
	}
	if path.Base(rel) == memdir.EntrypointName {
		return "", fmt.Errorf("%s is an index, not a memory: %w", rel, memdir.ErrInvalid)
	}
	return rel, nil
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:])
}

// readFile reads a file inside the memory directory, through os.Root so no
// symlink leads out of it.
func (s *Server) readFile(rel string) ([]byte, error) {
	root, err := os.OpenRoot(s.d.Path())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(rel)
}

// memoryResponse is one memory: its fields, its content as written and as
// rendered, how MEMORY.md lists it, what is wrong with it, and its history.
type memoryResponse struct {
	Path        string `json:"path"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	RawType     string `json:"raw_type"`
	Team        bool   `json:"team"`
	// Metadata is the frontmatter's fields by name: its keys are the
	// file's, not memdir's.
	Metadata    map[string]any `json:"metadata"`
	Frontmatter string         `json:"frontmatter"`
	Body        string         `json:"body"`
	HTML        string         `json:"html"`
	Content     string         `json:"content"`
	SHA         string         `json:"sha"`
	ModTime     time.Time      `json:"mtime"`
	Age         string         `json:"age"`
	Freshness   string         `json:"freshness"`
	IndexFile   string         `json:"index_file"`
	IndexLines  []string       `json:"index_lines"`
	Errors      []string       `json:"errors"`
	Warnings    []string       `json:"warnings"`
	History     []historyEntry `json:"history"`
	// Provenance is how the memory was last written, WrittenBy the same in
	// words ("" and null when unknown).
	Provenance *memdir.Provenance `json:"provenance"`
	WrittenBy  string             `json:"written_by"`
}

func (s *Server) apiMemory(r *http.Request) (*memoryResponse, error) {
	ctx := r.Context()
	rel, err := cleanRef(r.URL.Query().Get("path"))
	if err != nil {
		return nil, err
	}
	m, data, err := s.d.Read(ctx, rel)
	if err != nil {
		return nil, err
	}
	indexRel, link := memdir.IndexFor(m.Path)
	team := indexRel != memdir.EntrypointName
	ix, err := s.d.ReadIndex(team)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, e := range ix.Find(link) {
		lines = append(lines, ix.Line(e.Line))
	}
	errs, warns := validate(data, team)
	history, err := s.historyOf(m.Path)
	if err != nil {
		return nil, err
	}
	// How it was last written: the frontmatter's record, or the one kept
	// outside the directory for a sync pull.
	prov, perr := s.review.WrittenBy(m.Path, data)
	if perr != nil {
		warns = append(warns, perr.Error())
	}
	writtenBy := ""
	if prov != nil {
		writtenBy = prov.String()
	}
	now := s.now()
	return &memoryResponse{
		Path: m.Path, Name: m.Name, Description: m.Description, Type: string(m.Type), RawType: m.RawType,
		Team: team, Metadata: m.Metadata(), Frontmatter: frontmatterText(data),
		Body: m.Body, HTML: RenderMarkdown(m.Body), Content: string(data), SHA: sum(data),
		ModTime: m.ModTime, Age: memdir.MemoryAge(m.ModTime, now), Freshness: recall.FreshnessText(m.ModTime, now),
		IndexFile: indexRel, IndexLines: nonNil(lines),
		Errors: nonNil(errs), Warnings: nonNil(warns), History: history,
		Provenance: prov, WrittenBy: writtenBy,
	}, nil
}

// frontmatterText returns the frontmatter block as written, "" when there is
// none.
func frontmatterText(data []byte) string {
	t := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
	if !strings.HasPrefix(t, "---\n") {
		return ""
	}
	end := strings.Index(t[4:], "\n---")
	if end < 0 {
		return ""
	}
	return t[4 : 4+end]
}

// validate checks memory content as 'memdir edit' does: errors stop a save,
// warnings are shown. In team/ what looks like a credential is an error,
// since a sync would hand it to every collaborator.
func validate(content []byte, team bool) (errs, warns []string) {
	if bytes.IndexByte(content, 0) >= 0 {
		return []string{"the file holds NUL bytes: a memory is Markdown text"}, nil
	}
	if len(content) > memdir.MaxMemoryFileBytes {
		errs = append(errs, fmt.Sprintf("the memory is %s, over the %s memdir reads: split it", memdir.FormatFileSize(len(content)), memdir.FormatFileSize(memdir.MaxMemoryFileBytes)))
	}
	m, prob := memdir.ParseMemory(content)
	switch {
	case prob != nil && !prob.Recovered:
		errs = append(errs, prob.Error())
	case prob != nil:
		warns = append(warns, prob.Error()+"; quote values that hold ': ' or ' #'")
	case !m.HasFrontmatter():
		errs = append(errs, "no frontmatter: the file must start with a --- block holding name, description and type")
	}
	if m.HasFrontmatter() || prob != nil {
		if strings.TrimSpace(m.Name) == "" {
			errs = append(errs, "name is empty")
		}
		if strings.TrimSpace(m.Description) == "" {
			errs = append(errs, "description is empty: recall decides relevance from it")
		}
		switch {
		case m.RawType == "":
			warns = append(warns, "type is missing: use user, feedback, project or reference")
		case m.Type == "":
			warns = append(warns, fmt.Sprintf("type %q is not user, feedback, project or reference", m.RawType))
		}
	}
	if team {
		if found := secrets.Scan(string(content)); len(found) > 0 {
			errs = append(errs, "team memory must not hold what looks like a credential ("+secrets.Labels(found)+"): 'memdir sync' would not share it; remove it")
		}
	}
	return errs, warns
}

type saveRequest struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// SHA is the content's hash when the page opened it; the save is refused
	// when the file changed since.
	SHA string `json:"sha"`
}

// saveResponse is the outcome of a save: whether the file changed, its new
// hash, the checks' warnings, and the journal run that Undo reverses.
type saveResponse struct {
	Path     string   `json:"path"`
	Changed  bool     `json:"changed"`
	SHA      string   `json:"sha"`
	Warnings []string `json:"warnings"`
	Run      string   `json:"run,omitempty"`
}

// apiSave replaces a memory file with the edited content, under the
// directory lock, journaled, and refuses when the file changed since the
// page read it.
func (s *Server) apiSave(r *http.Request) (*saveResponse, error) {
	var req saveRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	rel, err := cleanRef(req.Path)
	if err != nil {
		return nil, err
	}
	if req.SHA == "" {
		return nil, errorf(http.StatusBadRequest, "save %s: sha (the content's hash when opened) is required", rel)
	}
	indexRel, link := memdir.IndexFor(rel)
	team := indexRel != memdir.EntrypointName
	content := []byte(req.Content)
	errs, warns := validate(content, team)
	if len(errs) > 0 {
		e := errorf(http.StatusUnprocessableEntity, "%s was not saved: %s", rel, strings.Join(errs, "; "))
		e.more = errorResponse{Errors: errs, Warnings: nonNil(warns)}
		return nil, e
	}
	m, _ := memdir.ParseMemory(content)
	ctx := r.Context()
	var unchanged *saveResponse
	run, err := s.d.Change(ctx, "edit", nil, func(rec *memdir.Recorder) error {
		cur, err := s.readFile(rel)
		if err != nil {
			return fmt.Errorf("save %s: %w", rel, err)
		}
		if sum(cur) != req.SHA {
			e := errorf(http.StatusConflict, "%s changed on disk since you opened it; reload it to see the change, then edit again", rel)
			e.more = errorResponse{CurrentSHA: sum(cur)}
			return e
		}
		if bytes.Equal(cur, content) {
			unchanged = &saveResponse{Path: rel, SHA: sum(cur), Warnings: nonNil(warns)}
			return nil
		}
		ix, err := s.d.ReadIndex(team)
		if err != nil {
			return err
		}
		rec.SetSummary("edit " + rel + " (memdir ui)")
		if err := rec.Before(rel); err != nil {
			return err
		}
		var lines []string
		for _, e := range ix.Find(link) {
			lines = append(lines, e.String())
		}
		rec.NoteIndexLines(rel, lines)
		root, err := os.OpenRoot(s.d.Path())
		if err != nil {
			return err
		}
		defer root.Close()
		if err := atomicfile.WriteFileIn(root, rel, content, 0o600); err != nil {
			return err
		}
		line := memdir.IndexEntry{Title: m.Name, File: link, Hook: m.Description}.String()
		if ix.Upsert(link, line) {
			return atomicfile.WriteFileIn(root, indexRel, ix.Bytes(), 0o600)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if unchanged != nil {
		return unchanged, nil
	}
	out := &saveResponse{Path: rel, Changed: true, SHA: sum(content), Warnings: nonNil(warns)}
	if run != nil {
		out.Run = run.ID
	}
	return out, nil
}

type createRequest struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Team        bool   `json:"team"`
	Body        string `json:"body"`
}

// createResponse names the new memory, its journal run, and what is wrong
// with its index after the save, if anything.
type createResponse struct {
	Path         string `json:"path"`
	Run          string `json:"run"`
	IndexWarning string `json:"index_warning"`
}

func (s *Server) apiCreate(r *http.Request) (*createResponse, error) {
	var req createRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	t := memdir.ParseType(req.Type)
	if t == "" {
		return nil, fmt.Errorf("type %q: want user, feedback, project or reference: %w", req.Type, memdir.ErrInvalid)
	}
	m := &memdir.Memory{Name: strings.TrimSpace(req.Name), Description: strings.TrimSpace(req.Description), Type: t, Body: req.Body}
	if req.Team {
		if errs, _ := validate(m.Format(), true); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", strings.Join(errs, "; "), memdir.ErrInvalid)
		}
	}
	res, err := s.d.Save(r.Context(), m, &memdir.SaveOptions{Team: req.Team, Create: true, Origin: &memdir.Provenance{By: memdir.ByUser, Via: "ui"}})
	if err != nil {
		return nil, err
	}
	return &createResponse{Path: res.Path, Run: res.RunID, IndexWarning: res.Index.Warning()}, nil
}

type renameRequest struct {
	Path string `json:"path"`
	To   string `json:"to"`
}

// renameResponse is a rename's (or a move to team/'s) paths and run.
type renameResponse struct {
	From string `json:"from"`
	To   string `json:"to"`
	Run  string `json:"run"`
}

func (s *Server) apiRename(r *http.Request) (*renameResponse, error) {
	var req renameRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	from, err := cleanRef(req.Path)
	if err != nil {
		return nil, err
	}
	to := strings.TrimSpace(req.To)
	if to != "" && !strings.HasSuffix(to, ".md") {
		to += ".md"
	}
	if to, err = cleanRef(to); err != nil {
		return nil, err
	}
	return s.rename(r.Context(), from, to)
}

func (s *Server) rename(ctx context.Context, from, to string) (*renameResponse, error) {
	if strings.HasPrefix(to, teamPrefix) && !strings.HasPrefix(from, teamPrefix) {
		data, err := s.readFile(from)
		if err != nil {
			return nil, err
		}
		if errs, _ := validate(data, true); len(errs) > 0 {
			return nil, fmt.Errorf("%s cannot move to team/: %s: %w", from, strings.Join(errs, "; "), memdir.ErrInvalid)
		}
	}
	res, err := s.d.Rename(ctx, from, to, nil)
	if err != nil {
		return nil, err
	}
	return &renameResponse{From: res.From, To: res.To, Run: res.RunID}, nil
}

func (s *Server) apiMoveToTeam(r *http.Request) (*renameResponse, error) {
	var req struct {
		Path string `json:"path"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	from, err := cleanRef(req.Path)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(from, teamPrefix) {
		return nil, fmt.Errorf("%s is already in team/: %w", from, memdir.ErrInvalid)
	}
	return s.rename(r.Context(), from, teamPrefix+path.Base(from))
}

// deleteResponse is a removed memory, the MEMORY.md lines that went with
// it, and the run that Undo reverses.
type deleteResponse struct {
	Path       string   `json:"path"`
	IndexLines []string `json:"index_lines"`
	Run        string   `json:"run"`
}

func (s *Server) apiDelete(r *http.Request) (*deleteResponse, error) {
	var req struct {
		Path string `json:"path"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	rel, err := cleanRef(req.Path)
	if err != nil {
		return nil, err
	}
	res, err := s.d.Remove(r.Context(), rel, nil)
	if err != nil {
		return nil, err
	}
	return &deleteResponse{Path: res.Path, IndexLines: nonNil(res.IndexLines), Run: res.RunID}, nil
}

// undoResponse is the run an undo made, the run it reverses, and how many
// files it changed.
type undoResponse struct {
	Run    string `json:"run"`
	Undoes string `json:"undoes"`
	Files  int    `json:"files"`
}

func (s *Server) apiUndo(r *http.Request) (*undoResponse, error) {
	var req struct {
		Run   string `json:"run"`
		Force bool   `json:"force"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if !validRunID(req.Run) {
		return nil, errorf(http.StatusBadRequest, "undo: run %q is not a journal run id", req.Run)
	}
	target, err := s.d.Journal().Run(req.Run)
	if err != nil {
		return nil, err
	}
	if target.Root != s.d.Path() {
		// CLAUDE.md and settings edits are journaled here too; the page
		// writes nothing outside the memory directory.
		return nil, errorf(http.StatusForbidden, "run %s changed files in %s, outside the memory directory; undo it with 'memdir undo %s'", target.ID, target.Root, target.ID)
	}
	run, err := s.d.Undo(r.Context(), target.ID, &memdir.UndoOptions{Force: req.Force})
	if err != nil {
		return nil, err
	}
	return &undoResponse{Run: run.ID, Undoes: run.Undoes, Files: len(run.ChangedFiles())}, nil
}

// validRunID accepts what the journal names runs with: letters, digits and
// dashes, so an id can never be a path.
func validRunID(id string) bool {
	if id == "" || len(id) > 100 || strings.Contains(id, "..") || strings.HasPrefix(id, ".") {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// indexState is one MEMORY.md as written and as loaded.
type indexState struct {
	File     string `json:"file"`
	Exists   bool   `json:"exists"`
	RawLines int    `json:"raw_lines"`
	RawChars int    `json:"raw_chars"`
	Lines    int    `json:"lines"`
	Chars    int    `json:"chars"`
	// LineTruncated and CharTruncated say which limit cuts the index.
	LineTruncated bool   `json:"line_truncated"`
	CharTruncated bool   `json:"char_truncated"`
	Loaded        string `json:"loaded"`
	Warning       string `json:"warning,omitempty"`
}

func (s *Server) indexState(team bool) (*indexState, error) {
	file := memdir.EntrypointName
	if team {
		file = teamPrefix + memdir.EntrypointName
	}
	loaded, err := s.d.LoadIndex(team)
	if err != nil {
		return nil, err
	}
	st := &indexState{File: file, Exists: loaded.Exists, Loaded: loaded.Text}
	if !loaded.Exists {
		return st, nil
	}
	raw, err := s.readFile(file)
	if err != nil {
		return nil, err
	}
	m := memdir.MeasureIndex(string(raw))
	st.RawLines, st.RawChars = m.Lines, m.Chars
	st.Lines, st.Chars = min(m.Lines, memdir.MaxIndexLines), m.Chars
	st.LineTruncated, st.CharTruncated, st.Warning = m.LineTruncated, m.CharTruncated, m.Warning()
	return st, nil
}

// indexResponse is both indexes as written and loaded, and doctor's
// findings.
type indexResponse struct {
	Indexes  []*indexState    `json:"indexes"`
	Limits   indexLimits      `json:"limits"`
	Memories int              `json:"memories"`
	Findings []doctor.Finding `json:"findings"`
}

func (s *Server) apiIndex(r *http.Request) (*indexResponse, error) {
	priv, err := s.indexState(false)
	if err != nil {
		return nil, err
	}
	tm, err := s.indexState(true)
	if err != nil {
		return nil, err
	}
	rep, err := doctor.Check(r.Context(), s.d)
	if err != nil {
		return nil, err
	}
	return &indexResponse{Indexes: []*indexState{priv, tm}, Limits: limits, Memories: rep.Memories, Findings: nonNil(rep.Findings)}, nil
}

type fixRequest struct {
	// Kind and Path fix one finding; only unindexed memories can be fixed
	// alone. Without them every safe fix is applied.
	Kind    string `json:"kind,omitempty"`
	Path    string `json:"path,omitempty"`
	Compact bool   `json:"compact,omitempty"`
}

// fixResponse says what a fix did, its run, and (after every safe fix)
// how many findings remain.
type fixResponse struct {
	Actions   []string `json:"actions"`
	Run       string   `json:"run,omitempty"`
	Remaining *int     `json:"remaining,omitempty"`
}

func (s *Server) apiFix(r *http.Request) (*fixResponse, error) {
	var req fixRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ctx := r.Context()
	switch req.Kind {
	case "":
		res, err := doctor.Fix(ctx, s.d, &doctor.FixOptions{Compact: req.Compact})
		if err != nil {
			return nil, err
		}
		remaining := len(res.Remaining.Findings)
		return &fixResponse{Actions: nonNil(res.Actions), Run: res.RunID, Remaining: &remaining}, nil
	case string(doctor.FindUnindexed):
		rel, err := cleanRef(req.Path)
		if err != nil {
			return nil, err
		}
		if _, err := s.d.Get(ctx, rel); err != nil {
			return nil, err
		}
		var done []string
		run, err := s.d.Change(ctx, "doctor", nil, func(rec *memdir.Recorder) error {
			rec.SetSummary("doctor: index " + rel + " (memdir ui)")
			var err error
			done, err = s.d.IndexMissing(rec, []string{rel})
			return err
		})
		if err != nil {
			return nil, err
		}
		out := &fixResponse{Actions: nonNil(done)}
		if run != nil {
			out.Run = run.ID
			for i, p := range done {
				indexRel, _ := memdir.IndexFor(p)
				done[i] = "added a line for " + p + " to " + indexRel
			}
		}
		return out, nil
	}
	return nil, errorf(http.StatusBadRequest, "fix: finding kind %q cannot be fixed alone; send no kind to apply every safe fix", req.Kind)
}

// runItem is a journal run in the activity list.
type runItem struct {
	ID       string     `json:"id"`
	Kind     string     `json:"kind"`
	Start    time.Time  `json:"start"`
	End      time.Time  `json:"end,omitzero"`
	State    string     `json:"state"`
	Error    string     `json:"error,omitempty"`
	Summary  string     `json:"summary,omitempty"`
	Inside   bool       `json:"inside"` // the files are in the memory directory
	Files    []string   `json:"files"`
	Usage    *llm.Usage `json:"usage,omitempty"`
	Undoes   string     `json:"undoes,omitempty"`
	UndoneBy string     `json:"undone_by,omitempty"`
}

func (s *Server) item(run *memdir.JournalRun) runItem {
	it := runItem{
		ID: run.ID, Kind: run.Kind, Start: run.Start, End: run.End, State: string(run.State), Error: run.Error,
		Summary: run.Summary, Inside: run.Root == s.d.Path(), Usage: run.Usage, Undoes: run.Undoes, UndoneBy: run.UndoneBy,
		Files: []string{},
	}
	for _, f := range run.ChangedFiles() {
		it.Files = append(it.Files, f.Path)
	}
	return it
}

// activityResponse lists the journal's runs, newest first.
type activityResponse struct {
	Journal  string    `json:"journal"`
	Runs     []runItem `json:"runs"`
	Problems []string  `json:"problems"`
}

func (s *Server) apiActivity(r *http.Request) (*activityResponse, error) {
	runs, errs := s.d.Journal().Runs()
	items := make([]runItem, 0, len(runs))
	for _, run := range runs {
		items = append(items, s.item(run))
	}
	var problems []string
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	return &activityResponse{Journal: s.d.Journal().Dir(), Runs: items, Problems: nonNil(problems)}, nil
}

// fileDiff is how a run changed one file.
type fileDiff struct {
	Path      string `json:"path"`
	Status    string `json:"status"` // created, deleted, modified
	Patch     string `json:"patch,omitempty"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Note      string `json:"note,omitempty"`
	Available bool   `json:"available"`
}

// runDiff computes each changed file's diff: the content before is in the
// journal; the content after is too when a later run changed the file again,
// or it is the file as it is now when that still matches.
func (s *Server) runDiff(run *memdir.JournalRun) []fileDiff {
	j := s.d.Journal()
	var out []fileDiff
	for _, f := range run.ChangedFiles() {
		fd := fileDiff{Path: f.Path, Status: "modified"}
		switch {
		case f.Before == "":
			fd.Status = "created"
		case f.After == "":
			fd.Status = "deleted"
		}
		before, err := j.Blob(f.Before)
		if err != nil {
			fd.Note = "the content before this run is not in the journal: " + err.Error()
			out = append(out, fd)
			continue
		}
		after, err := j.Blob(f.After)
		if err != nil {
			after = nil
			if run.Root == s.d.Path() {
				if cur, rerr := s.readFile(f.Path); rerr == nil && sum(cur) == f.After {
					after, err = cur, nil
				}
			}
		}
		if err != nil {
			fd.Note = "the content this run wrote is neither kept in the journal nor on disk any more (the file changed since)"
			out = append(out, fd)
			continue
		}
		patch, added, removed, approx := unifiedDiff("a/"+f.Path, "b/"+f.Path, string(before), string(after))
		if approx {
			fd.Note = "too large to diff exactly: the diff may show more lines changed than were"
		}
		fd.Patch, fd.Added, fd.Removed, fd.Available = patch, added, removed, true
		out = append(out, fd)
	}
	return out
}

// runResponse is one journal run with the diff of each file it changed.
type runResponse struct {
	Run   runItem    `json:"run"`
	Root  string     `json:"root"`
	Diffs []fileDiff `json:"diffs"`
}

func (s *Server) apiRun(r *http.Request) (*runResponse, error) {
	id := r.URL.Query().Get("id")
	if !validRunID(id) {
		return nil, errorf(http.StatusBadRequest, "run %q is not a journal run id", id)
	}
	run, err := s.d.Journal().Run(id)
	if err != nil {
		return nil, err
	}
	return &runResponse{Run: s.item(run), Root: run.Root, Diffs: nonNil(s.runDiff(run))}, nil
}

// historyEntry is a run that changed a memory, with the memory's diff
// (null when the run's record of it is gone).
type historyEntry struct {
	Run  runItem   `json:"run"`
	Diff *fileDiff `json:"diff"`
}

// historyOf lists the runs that changed rel, newest first, with its diff.
func (s *Server) historyOf(rel string) ([]historyEntry, error) {
	runs, _ := s.d.Journal().Runs()
	out := []historyEntry{}
	for _, run := range runs {
		if run.Root != s.d.Path() {
			continue
		}
		touched := slices.ContainsFunc(run.ChangedFiles(), func(f memdir.JournalFile) bool { return f.Path == rel })
		if !touched {
			continue
		}
		var diff *fileDiff
		for _, fd := range s.runDiff(run) {
			if fd.Path == rel {
				diff = &fd
			}
		}
		out = append(out, historyEntry{Run: s.item(run), Diff: diff})
	}
	return out, nil
}

// captureModel records the selector's request and fails, so Recall falls
// back to lexical ranking: it shows what a model would be shown without
// calling one.
type captureModel struct{ req *llm.Request }

var errCaptured = errors.New("memdir ui: request captured for the preview")

func (c *captureModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	c.req = req
	return nil, errCaptured
}

// requestTokens estimates a request's input tokens as Claude Code's rough
// count does: characters divided by four, rounded up.
func requestTokens(req *llm.Request) int {
	n := (len([]rune(req.System)) + 3) / 4
	for _, m := range req.Messages {
		n += session.EstimateTokens(m)
	}
	return n
}

// previewResponse is what the UserPromptSubmit hook would do for a prompt:
// the recall, the text it injects (built by recall.Inject, as the hook's
// is), and what a selector call would cost with memdir's manifest and with
// Claude Code's.
type previewResponse struct {
	Result   *recall.Result `json:"result"`
	Injected string         `json:"injected"`
	// Included says, for each recalled memory, whether it is in Injected.
	Included []bool `json:"included"`
	MaxChars int    `json:"max_chars"`
	// Selector is absent when no selector call would be made; ClaudeCode
	// when the directory holds no memory.
	Selector   *manifestCost `json:"selector,omitempty"`
	ClaudeCode *manifestCost `json:"claude_code,omitempty"`
}

// manifestCost is a selector's manifest, its estimated input tokens, and
// how many memories it lists (of Total, for Claude Code's).
type manifestCost struct {
	Manifest string `json:"manifest"`
	Tokens   int    `json:"tokens"`
	Count    int    `json:"count"`
	Total    int    `json:"total,omitempty"`
}

// apiPreview shows what the hook would inject for a prompt. The text comes
// from recall.Inject, the hook's own builder, so the two cannot differ.
func (s *Server) apiPreview(r *http.Request) (*previewResponse, error) {
	var req struct {
		Prompt string   `json:"prompt"`
		Tools  []string `json:"tools,omitempty"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ctx := r.Context()
	opts := s.recallOptions()
	opts.RecentTools = req.Tools
	// A preview shows what the hook would inject; it surfaces nothing to an
	// agent. It also says how many memories a selector would be shown.
	opts.NoCount, opts.ShowManifest = true, true
	res, err := recall.Recall(ctx, s.d, req.Prompt, opts)
	if err != nil {
		return nil, err
	}
	inj := recall.Inject(s.d.Path(), res, nil)
	wordsForTerms(res)
	out := &previewResponse{Result: res, Injected: inj.Text, Included: inj.Included, MaxChars: recall.MaxContextChars}

	// The selector's manifest: what a model is shown for this prompt.
	capOpts := s.recallOptions()
	capOpts.NoCount = true
	capture := &captureModel{}
	capOpts.Model, capOpts.RecentTools = capture, req.Tools
	if _, err := recall.Recall(ctx, s.d, req.Prompt, capOpts); err != nil && !errors.Is(err, errCaptured) {
		return nil, err
	}
	if capture.req != nil {
		manifest := manifestOf(capture.req)
		out.Selector = &manifestCost{Manifest: manifest, Tokens: requestTokens(capture.req), Count: len(res.Shortlist)}
		if len(res.Shortlist) == 0 {
			out.Selector.Count = strings.Count(manifest, "\n- ")
		}
	}
	// Claude Code's: the 200 newest memories' manifest, whatever the prompt.
	scan, err := s.d.Scan(ctx, nil)
	if err != nil {
		return nil, err
	}
	if len(scan.Memories) > 0 {
		creq := recall.SelectorRequest(req.Prompt, scan.Memories, req.Tools)
		out.ClaudeCode = &manifestCost{Manifest: recall.Manifest(scan.Memories), Tokens: requestTokens(creq), Count: len(scan.Memories), Total: scan.Total}
	}
	return out, nil
}

// manifestOf returns the user message of a selector request.
func manifestOf(req *llm.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		for _, bl := range m.Content {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}
