package team

import (
	"bytes"
	"encoding/json"
	"time"
)

// Wire limits. They match Claude Code's client so its pushes fit.
const (
	// MaxPutBodyBytes bounds a PUT body that carries more than one entry.
	// A body with a single entry may be larger, up to what MaxEntryBytes
	// allows, because the client sends an oversize entry in a batch of its
	// own.
	MaxPutBodyBytes = 200_000
	// MaxEntryBytes bounds one entry's content, in bytes of UTF-8.
	MaxEntryBytes = 250_000
	// DefaultMaxEntries is the server's default entry limit per repository.
	DefaultMaxEntries = 5_000
)

// APIPath is the path of the team memory resource.
const APIPath = "/api/claude_code/team_memory"

// Data is a repository's team memory as GET returns it, and as stores
// return it. In the hashes view Content.Entries is nil and omitted.
type Data struct {
	OrganizationID string    `json:"organizationId"`
	Repo           string    `json:"repo"`
	Version        int64     `json:"version"`
	LastModified   time.Time `json:"lastModified"`
	// Checksum is the repository checksum, [RepoChecksum] of the entries,
	// and the ETag.
	Checksum string  `json:"checksum"`
	Content  Content `json:"content"`
}

// Content holds the entries of a repository, keyed by their path relative
// to the team directory with "/" separators.
type Content struct {
	Entries        map[string]string `json:"entries,omitzero"`
	EntryChecksums map[string]string `json:"entryChecksums"`
}

// PutBody is the body of a PUT: an upsert of Entries. Deletes is a memdir
// extension: keys listed there are removed (a tombstone in the history).
// Claude Code never sends it, so for its clients deletions never propagate.
type PutBody struct {
	Entries map[string]string `json:"entries"`
	Deletes []string          `json:"deletes,omitempty"`
}

// PutResponse is the body of a successful PUT. Version is a memdir
// extension.
type PutResponse struct {
	Checksum     string    `json:"checksum"`
	LastModified time.Time `json:"lastModified"`
	Version      int64     `json:"version"`
}

// ErrorResponse is the body of every error status.
type ErrorResponse struct {
	Error ErrorInfo `json:"error"`
}

// ErrorInfo describes an error. Details is present for the errors a client
// acts on: too many entries (the spec's structured 413), secrets (422),
// sizes and keys.
type ErrorInfo struct {
	Type    string        `json:"type"`
	Message string        `json:"message"`
	Details *ErrorDetails `json:"details,omitempty"`
}

// ErrorDetails is the machine-readable part of an error.
type ErrorDetails struct {
	ErrorCode       string `json:"error_code"`
	MaxEntries      int    `json:"max_entries,omitempty"`
	ReceivedEntries int    `json:"received_entries,omitempty"`
	// Key names the entry: the key itself for a too-large entry, its
	// [KeyRef] (a prefix and a hash, never the whole key) for an invalid
	// key.
	Key     string          `json:"key,omitempty"`
	Secrets []SecretFinding `json:"secrets,omitempty"`
}

// Error codes in ErrorDetails.ErrorCode.
const (
	CodeTooManyEntries = "team_memory_too_many_entries"
	CodeSecretDetected = "team_memory_secret_detected"
	CodeBodyTooLarge   = "team_memory_body_too_large"
	CodeEntryTooLarge  = "team_memory_entry_too_large"
	CodeInvalidKey     = "team_memory_invalid_key"
)

// VersionInfo describes one version in a repository's history: what one
// PUT changed.
type VersionInfo struct {
	Version      int64     `json:"version"`
	Checksum     string    `json:"checksum"`
	LastModified time.Time `json:"lastModified"`
	// EntryCount is the number of entries after this version.
	EntryCount int `json:"entryCount"`
	// Changed lists the keys this version created or modified, sorted.
	Changed []string `json:"changed"`
	// Deleted lists the keys this version removed, sorted.
	Deleted []string `json:"deleted,omitempty"`
	// Author is the id of the token that wrote the version.
	Author string `json:"author,omitempty"`
}

// History is the body of GET ...&view=history, newest version first.
type History struct {
	Repo     string        `json:"repo"`
	Versions []VersionInfo `json:"versions"`
}

// marshalJSON encodes v the way JavaScript's JSON.stringify does (no HTML
// escaping), so that body sizes estimated by the client match what is sent.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
