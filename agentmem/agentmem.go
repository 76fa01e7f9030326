package agentmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/locate"
)

// Snapshot file names, as Claude Code uses them.
const (
	SnapshotsDirName   = "agent-memory-snapshots"
	SnapshotMetaFile   = "snapshot.json"
	SnapshotMarkerFile = ".snapshot-synced.json"
)

// Def is an agent definition: a Markdown file with YAML frontmatter
// under .claude/agents/. Only the fields memory cares about are read.
type Def struct {
	// Name is the agent type (the frontmatter's name:).
	Name        string `json:"name"`
	Description string `json:"description"`
	// Scope is the frontmatter's memory: field, "" when the agent keeps no
	// memory (or the value is not user, project or local).
	Scope locate.AgentScope `json:"scope,omitempty"`
	// Source is "user" (<config>/agents) or "project" (<dir>/.claude/agents).
	Source string `json:"source"`
	Path   string `json:"path"`
}

// maxAgentFileBytes bounds an agent definition file.
const maxAgentFileBytes = 1 << 20

// LoadDefs reads the agent definitions Claude Code would load for the
// location: <config>/agents/**/*.md (user), then .claude/agents/**/*.md in
// every directory from the git root (the project root outside git) down to
// the project root. A later definition of the same name replaces an earlier
// one, so a project's agent overrides the user's. As in Claude Code, a file
// without a name is not an agent (it is likely documentation kept beside
// them) and is skipped silently; a file without a description, or with an
// unknown memory scope, is reported in the warnings. Plugin and built-in
// agents have no files here and are not listed. Agents are sorted by name.
func LoadDefs(l *locate.Location) (defs []Def, warnings []string, err error) {
	type dirSrc struct{ dir, source string }
	dirs := []dirSrc{{filepath.Join(l.ConfigHome, "agents"), "user"}}
	for _, p := range l.ProjectDirs() {
		dirs = append(dirs, dirSrc{filepath.Join(p, ".claude", "agents"), "project"})
	}
	byName := map[string]Def{}
	for _, ds := range dirs {
		var files []string
		werr := filepath.WalkDir(ds.dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p == ds.dir && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				warnings = append(warnings, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
			if e.IsDir() && p != ds.dir && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
				files = append(files, p)
			}
			return nil
		})
		if werr != nil {
			return nil, warnings, fmt.Errorf("read agent definitions in %s: %w", ds.dir, werr)
		}
		sort.Strings(files)
		for _, f := range files {
			def, warn, ok := readAgentDef(f, ds.source)
			if warn != "" {
				warnings = append(warnings, warn)
			}
			if ok {
				byName[def.Name] = def
			}
		}
	}
	for _, d := range byName {
		defs = append(defs, d)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs, warnings, nil
}

func readAgentDef(path, source string) (Def, string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return Def{}, fmt.Sprintf("%s: %v", path, err), false
	}
	if !fi.Mode().IsRegular() {
		return Def{}, "", false
	}
	if fi.Size() > maxAgentFileBytes {
		return Def{}, fmt.Sprintf("%s: %s is too large for an agent definition; skipped", path, memfile.FormatSize(int(fi.Size()))), false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Def{}, fmt.Sprintf("%s: %v", path, err), false
	}
	m, prob := memdir.ParseMemory(data)
	if m.Name == "" {
		if prob != nil && !prob.Recovered {
			return Def{}, fmt.Sprintf("%s: %v; not read as an agent", path, prob), false
		}
		return Def{}, "", false
	}
	if strings.TrimSpace(m.Description) == "" {
		return Def{}, fmt.Sprintf("%s: agent %q has no description, which Claude Code requires; skipped", path, m.Name), false
	}
	def := Def{Name: m.Name, Description: m.Description, Source: source, Path: path}
	warn := ""
	if raw := m.FrontmatterString("memory"); raw != "" {
		if s, err := locate.ParseAgentScope(raw); err == nil {
			def.Scope = s
		} else {
			warn = fmt.Sprintf("%s: agent %q has memory: %q, not user, project or local; Claude Code gives it no memory", path, m.Name, raw)
		}
	}
	return def, warn, true
}

// SnapshotDir returns <projectRoot>/.claude/agent-memory-snapshots/<agent>/.
// Unlike the memory directory, Claude Code names it with the agent type as
// written (a ':' is kept).
func SnapshotDir(projectRoot, agentType string) (string, error) {
	if agentType == "" || agentType == "." || agentType == ".." || strings.ContainsAny(agentType, "/\\\x00") {
		return "", fmt.Errorf("agent type %q cannot name a directory: %w", agentType, memdir.ErrInvalid)
	}
	return filepath.Join(projectRoot, ".claude", SnapshotsDirName, agentType) + string(filepath.Separator), nil
}

// Action is what a snapshot calls for.
type Action string

// The actions, as Claude Code names them.
const (
	// ActionNone: no usable snapshot, or the memory is in step with it.
	ActionNone Action = "none"
	// ActionInitialize: the agent's directory has no .md file; copy the
	// snapshot in.
	ActionInitialize Action = "initialize"
	// ActionPromptUpdate: the snapshot is newer than the last sync (or
	// the directory was never synced); ask before replacing local memory.
	ActionPromptUpdate Action = "prompt-update"
)

// Status is what Check found.
type Status struct {
	SnapshotDir string `json:"snapshot_dir"`
	MemoryDir   string `json:"memory_dir"`
	Action      Action `json:"action"`
	// HasSnapshot is true when snapshot.json exists and holds an updatedAt.
	HasSnapshot bool `json:"has_snapshot"`
	// UpdatedAt is the snapshot's timestamp; SyncedFrom the marker's, ""
	// when the directory was never synced.
	UpdatedAt  string `json:"updated_at,omitempty"`
	SyncedFrom string `json:"synced_from,omitempty"`
	// Files are the snapshot's files a sync copies (names in the snapshot
	// directory); Local are the memory directory's .md files a replace
	// removes first.
	Files []string `json:"files,omitempty"`
	Local []string `json:"local,omitempty"`
	// Note explains an action that is not what the files suggest (an
	// unreadable snapshot.json or timestamp).
	Note string `json:"note,omitempty"`
}

type snapshotMeta struct {
	UpdatedAt string `json:"updatedAt"`
}

type syncedMeta struct {
	SyncedFrom string `json:"syncedFrom"`
}

// Check decides what the snapshot in snapshotDir calls for in the
// agent memory directory memoryDir, as Claude Code's check does:
//
//   - none when snapshotDir has no snapshot.json with a non-empty string
//     updatedAt;
//   - initialize when memoryDir holds no .md file at its top level;
//   - prompt-update when memoryDir has no readable .snapshot-synced.json,
//     or updatedAt is later than its syncedFrom;
//   - none otherwise, including when either timestamp is not a date (a
//     JavaScript date comparison with an invalid date is false).
func Check(snapshotDir, memoryDir string) (*Status, error) {
	st := &Status{SnapshotDir: snapshotDir, MemoryDir: memoryDir, Action: ActionNone}
	data, err := os.ReadFile(filepath.Join(snapshotDir, SnapshotMetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		st.Note = fmt.Sprintf("%s: %v", filepath.Join(snapshotDir, SnapshotMetaFile), err)
		return st, nil
	}
	var meta snapshotMeta
	if err := json.Unmarshal(data, &meta); err != nil || meta.UpdatedAt == "" {
		st.Note = fmt.Sprintf("%s has no updatedAt timestamp, so Claude Code ignores the snapshot", filepath.Join(snapshotDir, SnapshotMetaFile))
		return st, nil
	}
	st.HasSnapshot, st.UpdatedAt = true, meta.UpdatedAt
	if st.Files, err = snapshotFiles(snapshotDir); err != nil {
		return nil, err
	}
	if st.Local, err = topLevelMarkdown(memoryDir); err != nil {
		return nil, err
	}
	if len(st.Local) == 0 {
		st.Action = ActionInitialize
		return st, nil
	}
	var synced syncedMeta
	if data, err := os.ReadFile(filepath.Join(memoryDir, SnapshotMarkerFile)); err == nil && json.Unmarshal(data, &synced) == nil && synced.SyncedFrom != "" {
		st.SyncedFrom = synced.SyncedFrom
	}
	if st.SyncedFrom == "" {
		st.Action = ActionPromptUpdate
		return st, nil
	}
	u, uok := parseJSDate(st.UpdatedAt)
	s, sok := parseJSDate(st.SyncedFrom)
	switch {
	case !uok:
		st.Note = fmt.Sprintf("updatedAt %q is not a date Claude Code can compare", st.UpdatedAt)
	case !sok:
		st.Note = fmt.Sprintf("syncedFrom %q in %s is not a date Claude Code can compare", st.SyncedFrom, SnapshotMarkerFile)
	case u.After(s):
		st.Action = ActionPromptUpdate
	}
	return st, nil
}

// parseJSDate reads the timestamp forms JavaScript's Date accepts and
// snapshot tools write: RFC 3339 with any fraction, a date alone (UTC), and
// a date and time without a zone (local time).
func parseJSDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// snapshotFiles lists what a sync copies: the regular files at the top of
// the snapshot directory except snapshot.json and a shipped sync marker.
// Symlinks and subdirectories are skipped, as Claude Code's copy skips
// anything that is not a plain file.
func snapshotFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != SnapshotMetaFile && e.Name() != SnapshotMarkerFile {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// topLevelMarkdown lists the regular .md files directly in dir; a missing
// directory has none.
func topLevelMarkdown(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read agent memory %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// SyncOptions adjust Sync.
type SyncOptions struct {
	// Replace allows a prompt-update: the directory's top-level .md files
	// are removed and the snapshot copied in. Without it a prompt-update
	// is an ErrExists error and nothing changes.
	Replace bool
	// Keep answers a prompt-update by recording the snapshot as seen and
	// leaving the memories alone (Claude Code's "keep mine").
	Keep bool
}

// SyncResult reports what Sync did.
type SyncResult struct {
	Status *Status `json:"status"`
	// Done is the action carried out: none, initialize, replace or keep.
	Done    string   `json:"done"`
	Copied  []string `json:"copied,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// RunID is the journal run that undoes the sync ("" when nothing changed).
	RunID string `json:"run_id,omitempty"`
}

// Sync applies what the snapshot in snapshotDir calls for to d (an agent's
// memory directory), deciding again under the directory's lock so a
// concurrent sync cannot interleave:
//
//   - initialize: copy the snapshot's files in and write the marker;
//   - prompt-update with Replace: remove the top-level .md files, copy the
//     snapshot's files in and write the marker; with Keep: write the marker
//     only; with neither: an [memdir.ErrExists] error saying what would be
//     replaced;
//   - none: nothing.
//
// Every file is checked before anything is written (regular, at most
// [memdir.MaxMemoryFileBytes]), so a bad snapshot changes nothing. Every
// removal and overwrite is journaled first in d's journal, so undoing the
// run restores the memories.
func Sync(ctx context.Context, d *memdir.Dir, snapshotDir string, opts *SyncOptions) (*SyncResult, error) {
	if opts == nil {
		opts = &SyncOptions{}
	}
	// Decide once without the lock, so that "nothing to do" creates no
	// directory, then again under it.
	if st, err := Check(snapshotDir, d.Path()); err != nil || st.Action == ActionNone {
		if err != nil {
			return nil, err
		}
		return &SyncResult{Status: st, Done: string(ActionNone)}, nil
	}
	var res *SyncResult
	err := d.WithLock(ctx, func() error {
		var err error
		res, err = syncLocked(d, snapshotDir, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// syncLocked is Sync once the directory's lock is held.
func syncLocked(d *memdir.Dir, snapshotDir string, opts *SyncOptions) (*SyncResult, error) {
	st, err := Check(snapshotDir, d.Path())
	if err != nil {
		return nil, err
	}
	res := &SyncResult{Status: st, Done: string(ActionNone)}
	var remove []string
	switch st.Action {
	case ActionNone:
		return res, nil
	case ActionInitialize:
		res.Done = "initialize"
	case ActionPromptUpdate:
		switch {
		case opts.Keep:
			res.Done = "keep"
		case opts.Replace:
			res.Done, remove = "replace", st.Local
		default:
			return nil, fmt.Errorf("the snapshot in %s (updatedAt %s) is newer than the last sync (%s): replacing would remove %d local %s (%s) and copy %d from the snapshot; confirm to replace, or keep the local memories: %w",
				snapshotDir, st.UpdatedAt, orNever(st.SyncedFrom), len(st.Local), pluralWord(len(st.Local), "memory file", "memory files"), strings.Join(st.Local, ", "), len(st.Files), memdir.ErrExists)
		}
	}
	copies := map[string][]byte{}
	if res.Done != "keep" {
		src, err := os.OpenRoot(snapshotDir)
		if err != nil {
			return nil, fmt.Errorf("read snapshot: %w", err)
		}
		defer src.Close()
		for _, name := range st.Files {
			data, _, err := memfile.ReadRooted(src, name, memdir.MaxMemoryFileBytes)
			if err != nil {
				return nil, fmt.Errorf("snapshot %s: %w; nothing was changed: %w", snapshotDir, err, memdir.ErrInvalid)
			}
			copies[name] = data
		}
	}
	marker, _ := json.Marshal(syncedMeta{SyncedFrom: st.UpdatedAt})

	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return nil, fmt.Errorf("memory directory %s: %w", d.Path(), err)
	}
	defer root.Close()
	ix, err := d.ReadIndex(false)
	if err != nil {
		return nil, err
	}
	rec, err := d.Journal().Begin("snapshot", d.Path())
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	rec.SetSummary(res.Done + " agent memory from " + snapshotDir)
	touched := append(append([]string{}, remove...), st.Files...)
	touched = append(touched, SnapshotMarkerFile)
	if res.Done == "keep" {
		touched = []string{SnapshotMarkerFile}
	}
	err = func() error {
		if err := rec.Before(touched...); err != nil {
			return err
		}
		// Keep each memory's index line with it, so an undo that
		// restores the memory restores its line too.
		for _, p := range touched {
			if p != memdir.EntrypointName && strings.HasSuffix(p, ".md") {
				rec.NoteIndexLines(p, entryLines(ix.Find(p)))
			}
		}
		for _, name := range remove {
			if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", d.Abs(name), err)
			}
			res.Removed = append(res.Removed, name)
		}
		for _, name := range st.Files {
			if res.Done == "keep" {
				break
			}
			if err := atomicfile.WriteFileIn(root, name, copies[name], 0o600); err != nil {
				return err
			}
			res.Copied = append(res.Copied, name)
		}
		return atomicfile.WriteFileIn(root, SnapshotMarkerFile, marker, 0o600)
	}()
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	if len(run.ChangedFiles()) > 0 {
		res.RunID = run.ID
	}
	return res, nil
}

// entryLines renders index entries as the lines the journal keeps.
func entryLines(es []memdir.IndexEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.String())
	}
	return out
}

func orNever(s string) string {
	if s == "" {
		return "never synced"
	}
	return s
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
