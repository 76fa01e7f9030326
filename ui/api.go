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

func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("/", s.serveAsset)
	mux.Handle("/api/session", s.handle(http.MethodGet, s.apiSession))
	mux.Handle("/api/memories", s.handle(http.MethodGet, s.apiMemories))
	mux.Handle("/api/search", s.handle(http.MethodGet, s.apiSearch))
	mux.Handle("/api/memory", s.handle(http.MethodGet, s.apiMemory))
	mux.Handle("/api/memory/save", s.handle(http.MethodPost, s.apiSave))
	mux.Handle("/api/memory/create", s.handle(http.MethodPost, s.apiCreate))
	mux.Handle("/api/memory/rename", s.handle(http.MethodPost, s.apiRename))
	mux.Handle("/api/memory/move-to-team", s.handle(http.MethodPost, s.apiMoveToTeam))
	mux.Handle("/api/memory/delete", s.handle(http.MethodPost, s.apiDelete))
	mux.Handle("/api/undo", s.handle(http.MethodPost, s.apiUndo))
	mux.Handle("/api/index", s.handle(http.MethodGet, s.apiIndex))
	mux.Handle("/api/doctor/fix", s.handle(http.MethodPost, s.apiFix))
	mux.Handle("/api/activity", s.handle(http.MethodGet, s.apiActivity))
	mux.Handle("/api/run", s.handle(http.MethodGet, s.apiRun))
	mux.Handle("/api/recall/preview", s.handle(http.MethodPost, s.apiPreview))
	mux.Handle("/api/team", s.handle(http.MethodGet, s.apiTeam))
	mux.Handle("/api/team/history", s.handle(http.MethodGet, s.apiTeamHistory))
	mux.Handle("/api/checkpoints", s.handle(http.MethodGet, s.apiCheckpoints))
	mux.Handle("/api/checkpoints/diff", s.handle(http.MethodGet, s.apiCheckpointDiff))
	mux.Handle("/api/checkpoints/rewind", s.handle(http.MethodGet, s.apiCheckpointRewind))
	mux.Handle("/api/review", s.handle(http.MethodGet, s.apiReview))
	mux.Handle("/api/review/accept", s.handle(http.MethodPost, s.apiReviewDecide(true)))
	mux.Handle("/api/review/reject", s.handle(http.MethodPost, s.apiReviewDecide(false)))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
}

func (s *Server) apiSession(r *http.Request) (any, error) {
	out := map[string]any{
		"csrf": s.csrf, "dir": s.d.Path(), "version": s.opts.Version,
		"model": s.opts.Model != nil, "team": s.opts.Team != nil,
		"limits": map[string]int{"lines": memdir.MaxIndexLines, "chars": memdir.MaxIndexChars},
		"types":  memdir.Types,
	}
	if l := s.opts.Location; l != nil {
		out["enabled"], out["enabled_reason"], out["source"] = l.Enabled, l.EnabledReason, string(l.Source)
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
	Frontmatter bool      `json:"has_frontmatter"`
}

func (s *Server) apiMemories(r *http.Request) (any, error) {
	res, err := s.d.Scan(r.Context(), &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	idx := map[bool]*memdir.Index{}
	for _, team := range []bool{false, true} {
		if idx[team], err = s.d.ReadIndex(team); err != nil {
			return nil, err
		}
	}
	now := s.now()
	items := make([]memoryItem, 0, len(res.Memories))
	for _, h := range res.Memories {
		indexRel, link := memdir.IndexFor(h.Path)
		team := indexRel != memdir.EntrypointName
		items = append(items, memoryItem{
			Path: h.Path, Name: h.Name, Description: h.Description, Type: string(h.Type), RawType: h.RawType,
			Team: team, ModTime: h.ModTime, AgeDays: memdir.AgeDays(h.ModTime, now), Age: memdir.MemoryAge(h.ModTime, now),
			Size: h.Size, Indexed: len(idx[team].Find(link)) > 0, Frontmatter: h.HasFrontmatter,
		})
	}
	return map[string]any{"dir": s.d.Path(), "total": res.Total, "memories": items, "problems": nonNil(res.Problems)}, nil
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

func (s *Server) apiSearch(r *http.Request) (any, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return nil, errorf(http.StatusBadRequest, "search: the query q is empty")
	}
	opts := s.recallOptions()
	opts.AllowShortQueries = true
	opts.Max = 20
	return recall.Recall(r.Context(), s.d, q, opts)
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

func (s *Server) apiMemory(r *http.Request) (any, error) {
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
		lines = append(lines, ix.Lines()[e.Line-1])
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
	return map[string]any{
		"path": m.Path, "name": m.Name, "description": m.Description, "type": string(m.Type), "raw_type": m.RawType,
		"team": team, "metadata": m.Metadata(), "frontmatter": frontmatterText(data),
		"body": m.Body, "html": RenderMarkdown(m.Body), "content": string(data), "sha": sum(data),
		"mtime": m.ModTime, "age": memdir.MemoryAge(m.ModTime, now), "freshness": recall.FreshnessText(m.ModTime, now),
		"index_file": indexRel, "index_lines": nonNil(lines),
		"errors": nonNil(errs), "warnings": nonNil(warns), "history": history,
		"provenance": prov, "written_by": writtenBy,
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

// apiSave replaces a memory file with the edited content, under the
// directory lock, journaled, and refuses when the file changed since the
// page read it.
func (s *Server) apiSave(r *http.Request) (any, error) {
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
		e.extra = map[string]any{"errors": errs, "warnings": nonNil(warns)}
		return nil, e
	}
	m, _ := memdir.ParseMemory(content)
	ctx := r.Context()
	var unchanged map[string]any
	run, err := s.d.Change(ctx, "edit", nil, func(rec *memdir.Recorder) error {
		cur, err := s.readFile(rel)
		if err != nil {
			return fmt.Errorf("save %s: %w", rel, err)
		}
		if sum(cur) != req.SHA {
			e := errorf(http.StatusConflict, "%s changed on disk since you opened it; reload it to see the change, then edit again", rel)
			e.extra = map[string]any{"current_sha": sum(cur)}
			return e
		}
		if bytes.Equal(cur, content) {
			unchanged = map[string]any{"path": rel, "changed": false, "sha": sum(cur), "warnings": nonNil(warns)}
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
	out := map[string]any{"path": rel, "changed": true, "sha": sum(content), "warnings": nonNil(warns)}
	if run != nil {
		out["run"] = run.ID
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

func (s *Server) apiCreate(r *http.Request) (any, error) {
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
	return map[string]any{"path": res.Path, "run": res.RunID, "index_warning": res.Index.Warning()}, nil
}

type renameRequest struct {
	Path string `json:"path"`
	To   string `json:"to"`
}

func (s *Server) apiRename(r *http.Request) (any, error) {
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

func (s *Server) rename(ctx context.Context, from, to string) (any, error) {
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
	return map[string]any{"from": res.From, "to": res.To, "run": res.RunID}, nil
}

func (s *Server) apiMoveToTeam(r *http.Request) (any, error) {
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

func (s *Server) apiDelete(r *http.Request) (any, error) {
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
	return map[string]any{"path": res.Path, "index_lines": nonNil(res.IndexLines), "run": res.RunID}, nil
}

func (s *Server) apiUndo(r *http.Request) (any, error) {
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
	return map[string]any{"run": run.ID, "undoes": run.Undoes, "files": len(run.ChangedFiles())}, nil
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

func (s *Server) apiIndex(r *http.Request) (any, error) {
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
	return map[string]any{
		"indexes":  []*indexState{priv, tm},
		"limits":   map[string]int{"lines": memdir.MaxIndexLines, "chars": memdir.MaxIndexChars},
		"memories": rep.Memories, "findings": nonNil(rep.Findings),
	}, nil
}

type fixRequest struct {
	// Kind and Path fix one finding; only unindexed memories can be fixed
	// alone. Without them every safe fix is applied.
	Kind    string `json:"kind,omitempty"`
	Path    string `json:"path,omitempty"`
	Compact bool   `json:"compact,omitempty"`
}

func (s *Server) apiFix(r *http.Request) (any, error) {
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
		return map[string]any{"actions": nonNil(res.Actions), "run": res.RunID, "remaining": len(res.Remaining.Findings)}, nil
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
		out := map[string]any{"actions": nonNil(done)}
		if run != nil {
			out["run"] = run.ID
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

func (s *Server) apiActivity(r *http.Request) (any, error) {
	runs, errs := s.d.Journal().Runs()
	items := make([]runItem, 0, len(runs))
	for _, run := range runs {
		items = append(items, s.item(run))
	}
	var problems []string
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	return map[string]any{"journal": s.d.Journal().Dir(), "runs": items, "problems": nonNil(problems)}, nil
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

func (s *Server) apiRun(r *http.Request) (any, error) {
	id := r.URL.Query().Get("id")
	if !validRunID(id) {
		return nil, errorf(http.StatusBadRequest, "run %q is not a journal run id", id)
	}
	run, err := s.d.Journal().Run(id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run": s.item(run), "root": run.Root, "diffs": nonNil(s.runDiff(run))}, nil
}

// historyOf lists the runs that changed rel, newest first, with its diff.
func (s *Server) historyOf(rel string) ([]map[string]any, error) {
	runs, _ := s.d.Journal().Runs()
	out := []map[string]any{}
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
		out = append(out, map[string]any{"run": s.item(run), "diff": diff})
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

// injectedHeader must stay the header cmd/memdir/hook.go puts above the
// memories it recalls (a test compares the two).
func (s *Server) apiPreview(r *http.Request) (any, error) {
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
	out := map[string]any{"result": res, "injected": inj.Text, "included": inj.Included, "max_chars": recall.MaxContextChars}

	// The selector's manifest: what a model is shown for this prompt.
	capOpts := s.recallOptions()
	capOpts.NoCount = true
	capture := &captureModel{}
	capOpts.Model, capOpts.RecentTools = capture, req.Tools
	if _, err := recall.Recall(ctx, s.d, req.Prompt, capOpts); err != nil && !errors.Is(err, errCaptured) {
		return nil, err
	}
	if capture.req != nil {
		out["selector"] = map[string]any{"manifest": manifestOf(capture.req), "tokens": requestTokens(capture.req), "count": len(res.Shortlist)}
		if len(res.Shortlist) == 0 {
			out["selector"].(map[string]any)["count"] = strings.Count(manifestOf(capture.req), "\n- ")
		}
	}
	// Claude Code's: the 200 newest memories' manifest, whatever the prompt.
	scan, err := s.d.Scan(ctx, nil)
	if err != nil {
		return nil, err
	}
	if len(scan.Memories) > 0 {
		creq := recall.SelectorRequest(req.Prompt, scan.Memories, req.Tools)
		out["claude_code"] = map[string]any{"manifest": recall.Manifest(scan.Memories), "tokens": requestTokens(creq), "count": len(scan.Memories), "total": scan.Total}
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
