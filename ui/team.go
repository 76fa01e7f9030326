package ui

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/memdir/memdir/team"
)

// teamResponse is the team page's status: why sync is not configured, or
// how team/ compares with the server (or why the server could not say).
type teamResponse struct {
	Configured bool         `json:"configured"`
	Reason     string       `json:"reason,omitempty"`
	Repo       string       `json:"repo,omitempty"`
	Server     string       `json:"server,omitempty"`
	Error      string       `json:"error,omitempty"`
	Status     *team.Status `json:"status,omitempty"`
}

func (s *Server) apiTeam(r *http.Request) (*teamResponse, error) {
	t := s.opts.Team
	if t == nil {
		reason := s.opts.TeamReason
		if reason == "" {
			reason = "no team memory server is configured"
		}
		return &teamResponse{Reason: reason}, nil
	}
	out := &teamResponse{Configured: true, Repo: t.Repo, Server: t.Server}
	st, err := t.Client.Status(r.Context())
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	out.Status = st
	return out, nil
}

// teamHistoryResponse is the server's versions that changed one key, or
// why there are none to show.
type teamHistoryResponse struct {
	Available bool   `json:"available"`
	Key       string `json:"key"`
	// Versions is absent when the history is not available.
	Versions []teamVersion `json:"versions,omitzero"`
	Reason   string        `json:"reason,omitempty"`
	// Scanned is how many of the server's versions were looked through.
	Scanned int `json:"scanned,omitempty"`
	// Authors says where the authors' names come from, or why only their
	// token ids are known.
	Authors string `json:"authors,omitempty"`
}

// teamVersion is a team.VersionInfo, one version on the server.
type teamVersion struct {
	Version      int64     `json:"version"`
	Checksum     string    `json:"checksum"`
	LastModified time.Time `json:"last_modified"`
	EntryCount   int       `json:"entry_count"`
	Changed      []string  `json:"changed"`
	Deleted      []string  `json:"deleted,omitempty"`
	// Author is the id of the token that wrote the version, AuthorName
	// that token's name when the page can learn it (see Team.Tokens).
	Author     string `json:"author,omitempty"`
	AuthorName string `json:"author_name,omitempty"`
}

// apiTeamHistory lists the server's versions that changed or deleted one
// key, newest first, from the protocol's view=history.
func (s *Server) apiTeamHistory(r *http.Request) (*teamHistoryResponse, error) {
	key := strings.TrimSpace(r.URL.Query().Get("key"))
	if err := team.ValidateKey(key); err != nil || key == "" {
		return nil, errorf(http.StatusBadRequest, "team history: %q is not a team memory key", key)
	}
	t := s.opts.Team
	if t == nil || t.Repos == nil {
		return &teamHistoryResponse{Key: key, Reason: "no team memory server is configured, so there is no server history"}, nil
	}
	versions, err := t.Repos.History(r.Context(), t.Repo, &team.HistoryOptions{Limit: team.MaxHistoryLimit})
	if errors.Is(err, team.ErrNotFound) {
		return &teamHistoryResponse{Available: true, Key: key, Versions: []teamVersion{}, Reason: "the server has no team memory for " + t.Repo}, nil
	}
	if err != nil {
		return &teamHistoryResponse{Key: key, Reason: "the server did not give its history: " + err.Error()}, nil
	}
	names, about := s.tokenNames(r.Context())
	out := []teamVersion{}
	for _, v := range versions {
		if slices.Contains(v.Changed, key) || slices.Contains(v.Deleted, key) {
			out = append(out, teamVersion{
				Version: v.Version, Checksum: v.Checksum, LastModified: v.LastModified, EntryCount: v.EntryCount,
				Changed: v.Changed, Deleted: v.Deleted, Author: v.Author, AuthorName: names[v.Author],
			})
		}
	}
	return &teamHistoryResponse{Available: true, Key: key, Versions: out, Scanned: len(versions), Authors: about}, nil
}

// tokenNames returns the names of the team server's tokens by id, and says
// where they come from or why there are none: the protocol's history gives
// a token's id only, and its name is in the server's token list.
func (s *Server) tokenNames(ctx context.Context) (map[string]string, string) {
	const where = "the server's history names each author by token id; the name is in the server's token list ('memdir serve token list' where the server runs)"
	tokens := s.opts.Team.Tokens
	if tokens == nil {
		tokens, _ = s.opts.Team.Repos.(TokenLister)
	}
	if tokens == nil {
		return nil, where
	}
	list, err := tokens.ListTokens(ctx)
	if err != nil {
		return nil, where + ", which could not be read: " + err.Error()
	}
	names := map[string]string{}
	for _, t := range list {
		if t.Name != "" {
			names[t.ID] = t.Name
		}
	}
	return names, "names from the server's token list"
}
