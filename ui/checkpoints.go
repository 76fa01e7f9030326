package ui

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/session"
)

// The checkpoints page: the file-history sessions of the project, a diff
// since a snapshot, and a rewind's dry run. checkpoint's own types keep
// Claude Code's file-history spelling (messageId); the page reads the
// views below, in snake_case.

// checkpointsResponse lists the project's sessions, the most recently
// snapshotted first.
type checkpointsResponse struct {
	Sessions []checkpointSession `json:"sessions"`
	// Project and Dir are absent when no checkpoints are configured.
	Project string `json:"project,omitempty"`
	Dir     string `json:"dir,omitempty"`
}

// checkpointSession is one session and its snapshots, oldest first.
type checkpointSession struct {
	ID        string         `json:"id"`
	Cwd       string         `json:"cwd"`
	Snapshots []snapshotView `json:"snapshots"`
	Error     string         `json:"error,omitempty"`
}

// snapshotView is a checkpoint.Snapshot.
type snapshotView struct {
	MessageID string    `json:"message_id"`
	Sequence  int       `json:"sequence"`
	Time      time.Time `json:"timestamp"`
	// TrackedFileBackups maps each tracking path to its backup.
	TrackedFileBackups map[string]backupView `json:"tracked_file_backups"`
}

// backupView is a checkpoint.Backup; BackupFileName is null for a file
// that did not exist at the snapshot.
type backupView struct {
	BackupFileName *string   `json:"backup_file_name"`
	Version        int       `json:"version"`
	BackupTime     time.Time `json:"backup_time"`
}

func newSnapshotViews(snaps []checkpoint.Snapshot) []snapshotView {
	out := make([]snapshotView, 0, len(snaps))
	for _, sn := range snaps {
		v := snapshotView{MessageID: sn.MessageID, Sequence: sn.Sequence, Time: sn.Time, TrackedFileBackups: map[string]backupView{}}
		for path, b := range sn.Files {
			bv := backupView{Version: b.Version, BackupTime: b.Time.UTC()}
			if b.Exists() {
				bv.BackupFileName = &b.Name
			}
			v.TrackedFileBackups[path] = bv
		}
		out = append(out, v)
	}
	return out
}

// fileError is a checkpoint.FileError: a tracked file left alone, and why.
type fileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func newFileErrors(errs []*checkpoint.FileError) []fileError {
	if errs == nil {
		return nil
	}
	out := make([]fileError, 0, len(errs))
	for _, e := range errs {
		out = append(out, fileError{Path: e.Path, Error: e.Err.Error()})
	}
	return out
}

// sessions returns the file-history sessions whose original working
// directory lies inside the project, by id.
func (s *Server) sessions(r *http.Request) (map[string]*checkpoint.History, error) {
	c := s.opts.Checkpoints
	out := map[string]*checkpoint.History{}
	if c == nil || c.ConfigHome == "" || c.Project == "" {
		return out, nil
	}
	entries, err := os.ReadDir(filepath.Join(c.ConfigHome, "file-history"))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	project := filepath.Clean(c.Project)
	for _, e := range entries {
		if !e.IsDir() || session.CheckID(e.Name()) != nil {
			continue
		}
		h, err := checkpoint.New(c.ConfigHome, e.Name(), nil)
		if err != nil {
			continue
		}
		cwd, err := h.OriginalCwd(r.Context())
		if err != nil || cwd == "" {
			continue
		}
		cwd = filepath.Clean(cwd)
		if cwd == project || strings.HasPrefix(cwd, project+string(filepath.Separator)) {
			out[e.Name()] = h
		}
	}
	return out, nil
}

func (s *Server) apiCheckpoints(r *http.Request) (*checkpointsResponse, error) {
	hs, err := s.sessions(r)
	if err != nil {
		return nil, err
	}
	out := []checkpointSession{}
	for id, h := range hs {
		cwd, _ := h.OriginalCwd(r.Context())
		snaps, err := h.Snapshots(r.Context())
		ss := checkpointSession{ID: id, Cwd: cwd, Snapshots: newSnapshotViews(snaps)}
		if err != nil {
			ss.Error = err.Error()
		}
		out = append(out, ss)
	}
	sort.Slice(out, func(i, j int) bool {
		li, lj := lastTime(out[i].Snapshots), lastTime(out[j].Snapshots)
		if !li.Equal(lj) {
			return li.After(lj)
		}
		return out[i].ID < out[j].ID
	})
	res := &checkpointsResponse{Sessions: out}
	if c := s.opts.Checkpoints; c != nil {
		res.Project, res.Dir = c.Project, filepath.Join(c.ConfigHome, "file-history")
	}
	return res, nil
}

func lastTime(snaps []snapshotView) time.Time {
	if len(snaps) > 0 {
		return snaps[len(snaps)-1].Time
	}
	return time.Time{}
}

// sessionOf finds the project's session a request names.
func (s *Server) sessionOf(r *http.Request) (*checkpoint.History, string, error) {
	id, msg := r.URL.Query().Get("session"), r.URL.Query().Get("message")
	if session.CheckID(id) != nil {
		return nil, "", errorf(http.StatusBadRequest, "session %q is not a session id", id)
	}
	if msg == "" {
		return nil, "", errorf(http.StatusBadRequest, "no message id given")
	}
	hs, err := s.sessions(r)
	if err != nil {
		return nil, "", err
	}
	h, ok := hs[id]
	if !ok {
		return nil, "", errorf(http.StatusNotFound, "session %s has no checkpoints for this project", id)
	}
	return h, msg, nil
}

// checkpointDiffResponse is a checkpoint.DiffReport: how the tracked files
// changed since a snapshot.
type checkpointDiffResponse struct {
	MessageID string                `json:"message_id"`
	Sequence  int                   `json:"sequence"`
	Files     []checkpoint.FileDiff `json:"files"`
	Unchanged int                   `json:"unchanged"`
	Skipped   []fileError           `json:"skipped,omitempty"`
}

func (s *Server) apiCheckpointDiff(r *http.Request) (*checkpointDiffResponse, error) {
	h, msg, err := s.sessionOf(r)
	if err != nil {
		return nil, err
	}
	rep, err := h.Diff(r.Context(), msg)
	if err != nil {
		return nil, err
	}
	return &checkpointDiffResponse{
		MessageID: rep.MessageID, Sequence: rep.Sequence, Files: rep.Files, Unchanged: rep.Unchanged,
		Skipped: newFileErrors(rep.Skipped),
	}, nil
}

// rewindResponse is a rewind's dry run, the command that would do it, and
// what stops it, if anything.
type rewindResponse struct {
	Report  *rewindReport `json:"report"`
	Command string        `json:"command"`
	Error   string        `json:"error,omitempty"`
}

// rewindReport is a checkpoint.RewindReport.
type rewindReport struct {
	MessageID     string                  `json:"message_id"`
	Sequence      int                     `json:"sequence"`
	DryRun        bool                    `json:"dry_run"`
	Changes       []checkpoint.FileChange `json:"changes"`
	Unchanged     int                     `json:"unchanged"`
	Skipped       []fileError             `json:"skipped,omitempty"`
	Failed        []fileError             `json:"failed,omitempty"`
	UndoMessageID string                  `json:"undo_message_id,omitempty"`
}

// apiCheckpointRewind is a dry run only: the page shows what a rewind
// would change; rewinding itself is 'memdir checkpoint rewind'.
func (s *Server) apiCheckpointRewind(r *http.Request) (*rewindResponse, error) {
	h, msg, err := s.sessionOf(r)
	if err != nil {
		return nil, err
	}
	rep, err := h.Rewind(r.Context(), msg, &checkpoint.RewindOptions{DryRun: true})
	if rep == nil {
		return nil, err
	}
	out := &rewindResponse{
		Report: &rewindReport{
			MessageID: rep.MessageID, Sequence: rep.Sequence, DryRun: rep.DryRun, Changes: rep.Changes,
			Unchanged: rep.Unchanged, Skipped: newFileErrors(rep.Skipped), Failed: newFileErrors(rep.Failed),
			UndoMessageID: rep.UndoMessageID,
		},
		Command: "memdir checkpoint rewind --session " + h.Session() + " --message " + msg,
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}
