package ui

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/session"
	"github.com/memdir/memdir/team"
)

func (s *Server) apiTeam(r *http.Request) (any, error) {
	t := s.opts.Team
	if t == nil {
		reason := s.opts.TeamReason
		if reason == "" {
			reason = "no team memory server is configured"
		}
		return map[string]any{"configured": false, "reason": reason}, nil
	}
	out := map[string]any{"configured": true, "repo": t.Repo, "server": t.Server}
	st, err := t.Client.Status(r.Context())
	if err != nil {
		out["error"] = err.Error()
		return out, nil
	}
	st.LocalOnly, st.Modified, st.ServerOnly, st.Skipped = nonNil(st.LocalOnly), nonNil(st.Modified), nonNil(st.ServerOnly), nonNil(st.Skipped)
	out["status"] = st
	return out, nil
}

// apiTeamHistory lists the server's versions that changed or deleted one
// key, newest first, from the protocol's view=history.
func (s *Server) apiTeamHistory(r *http.Request) (any, error) {
	key := strings.TrimSpace(r.URL.Query().Get("key"))
	if err := team.ValidateKey(key); err != nil || key == "" {
		return nil, errorf(http.StatusBadRequest, "team history: %q is not a team memory key", key)
	}
	t := s.opts.Team
	if t == nil || t.Repos == nil {
		return map[string]any{"available": false, "key": key, "reason": "no team memory server is configured, so there is no server history"}, nil
	}
	versions, err := t.Repos.History(r.Context(), t.Repo, &team.HistoryOptions{Limit: team.MaxHistoryLimit})
	if errors.Is(err, team.ErrNotFound) {
		return map[string]any{"available": true, "key": key, "versions": []team.VersionInfo{}, "reason": "the server has no team memory for " + t.Repo}, nil
	}
	if err != nil {
		return map[string]any{"available": false, "key": key, "reason": "the server did not give its history: " + err.Error()}, nil
	}
	out := []team.VersionInfo{}
	for _, v := range versions {
		if slices.Contains(v.Changed, key) || slices.Contains(v.Deleted, key) {
			out = append(out, v)
		}
	}
	return map[string]any{"available": true, "key": key, "versions": out, "scanned": len(versions)}, nil
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

func (s *Server) apiCheckpoints(r *http.Request) (any, error) {
	hs, err := s.sessions(r)
	if err != nil {
		return nil, err
	}
	type session struct {
		ID        string                `json:"id"`
		Cwd       string                `json:"cwd"`
		Snapshots []checkpoint.Snapshot `json:"snapshots"`
		Error     string                `json:"error,omitempty"`
	}
	out := []session{}
	for id, h := range hs {
		cwd, _ := h.OriginalCwd(r.Context())
		snaps, err := h.Snapshots(r.Context())
		ss := session{ID: id, Cwd: cwd, Snapshots: nonNil(snaps)}
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
	res := map[string]any{"sessions": out}
	if c := s.opts.Checkpoints; c != nil {
		res["project"], res["dir"] = c.Project, filepath.Join(c.ConfigHome, "file-history")
	}
	return res, nil
}

func lastTime(snaps []checkpoint.Snapshot) time.Time {
	if len(snaps) > 0 {
		return snaps[len(snaps)-1].Time
	}
	return time.Time{}
}

// session finds the project's session a request names.
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

func (s *Server) apiCheckpointDiff(r *http.Request) (any, error) {
	h, msg, err := s.sessionOf(r)
	if err != nil {
		return nil, err
	}
	return h.Diff(r.Context(), msg)
}

// apiCheckpointRewind is a dry run only: the page shows what a rewind
// would change; rewinding itself is 'memdir checkpoint rewind'.
func (s *Server) apiCheckpointRewind(r *http.Request) (any, error) {
	h, msg, err := s.sessionOf(r)
	if err != nil {
		return nil, err
	}
	rep, err := h.Rewind(r.Context(), msg, &checkpoint.RewindOptions{DryRun: true})
	if rep == nil {
		return nil, err
	}
	out := map[string]any{"report": rep, "command": "memdir checkpoint rewind --session " + h.Session() + " --message " + msg}
	if err != nil {
		out["error"] = err.Error()
	}
	return out, nil
}
