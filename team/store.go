package team

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"
	"time"
)

// Repos reads and writes repositories' team memory. [Store]s implement it
// over a database and [Remote] over HTTP, so a [Client] can sync against
// either and one conformance suite (memdirtest.TestTeamRepos) checks both.
//
// Repository names passed in must already be normalised ([NormalizeRepo]).
type Repos interface {
	// Get returns the current data of repo, or an old version when
	// opts.Version is set. It fails with ErrNotFound when the repository
	// (or version) does not exist, and with ErrNotModified when
	// opts.IfNoneMatch equals its checksum.
	Get(ctx context.Context, repo string, opts *GetOptions) (*Data, error)
	// Put applies u as one new version and returns its metadata: Repo,
	// Version, LastModified and Checksum, with an empty Content (the PUT
	// response carries no more). It fails with ErrConflict when
	// u.IfMatch is set and differs from the current checksum (or the
	// repository does not exist), with a *TooManyEntriesError when the
	// result would exceed u.MaxEntries, and with a *KeyError for an invalid
	// key; nothing is written then.
	Put(ctx context.Context, repo string, u *Update) (*Data, error)
	// History lists the versions of repo, newest first. It fails with
	// ErrNotFound when the repository does not exist.
	History(ctx context.Context, repo string, opts *HistoryOptions) ([]VersionInfo, error)
}

// Tokens keeps the bearer tokens the server issues. Only the SHA-256 of a
// token is stored ([HashToken]).
type Tokens interface {
	// CreateToken stores t under hash. t.ID must be unique.
	CreateToken(ctx context.Context, t *Token, hash string) error
	// LookupToken returns the live token with this hash, or ErrNotFound
	// when there is none or it was revoked.
	LookupToken(ctx context.Context, hash string) (*Token, error)
	// RevokeToken revokes the token with this id. Revoking twice is not an
	// error; an unknown id is ErrNotFound.
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// ListTokens returns every token, revoked ones included, oldest first.
	ListTokens(ctx context.Context) ([]Token, error)
}

// Store is everything the [Handler] needs from a database.
type Store interface {
	Repos
	Tokens
	// EntryPage returns one page of the entries of repo as they were at
	// version: the entries whose keys sort after `after` ("" for the first
	// page) in the store's own key order, at most opts.Limit of them, and
	// fewer once their contents add up to opts.MaxBytes (a page holds at
	// least one entry while any is left). An empty page means there are no
	// more. Pages read one after the other form one consistent version even
	// while others write: a store reads them from the version, never from
	// whatever is current when the page is read. It fails with ErrNotFound
	// when the repository or the version does not exist.
	//
	// The Handler streams a full GET this way, so that its memory does not
	// grow with the repository: [Repos.Get] with HashesOnly for the
	// version, checksums and entry count, then EntryPage until it is
	// empty.
	EntryPage(ctx context.Context, repo string, version int64, after string, opts PageOptions) ([]Entry, error)
	// Ping reports whether the database answers (readiness).
	Ping(ctx context.Context) error
}

// Entry is one key and its content, as [Store.EntryPage] returns them.
type Entry struct {
	Key     string
	Content string
}

// PageOptions bounds a page of [Store.EntryPage].
type PageOptions struct {
	// Limit bounds the number of entries; 0 means DefaultPageEntries.
	Limit int
	// MaxBytes ends the page after the entry whose content brings the
	// total to at least this many bytes; 0 means DefaultPageBytes.
	MaxBytes int
}

// Page sizes of a streamed GET: a page holds at most about one MiB plus
// one entry (MaxEntryBytes), whatever the size of the repository.
const (
	DefaultPageEntries = 100
	DefaultPageBytes   = 1 << 20
)

// PageLimit returns the effective entry limit of o.
func (o PageOptions) PageLimit() int {
	if o.Limit <= 0 {
		return DefaultPageEntries
	}
	return o.Limit
}

// PageMaxBytes returns the effective byte bound of o.
func (o PageOptions) PageMaxBytes() int {
	if o.MaxBytes <= 0 {
		return DefaultPageBytes
	}
	return o.MaxBytes
}

// GetOptions selects what [Repos.Get] returns. A nil *GetOptions is the
// full current data.
type GetOptions struct {
	// HashesOnly leaves Content.Entries nil (the view=hashes form).
	HashesOnly bool
	// Version reads an old version; 0 means the current one.
	Version int64
	// IfNoneMatch makes the read conditional: ErrNotModified when the
	// checksum equals it.
	IfNoneMatch string
}

// Update is one PUT.
type Update struct {
	// Entries are upserted; keys not listed are kept.
	Entries map[string]string
	// Deletes are removed. A key may not be in both. Deleting a missing
	// key is a no-op.
	Deletes []string
	// IfMatch, when set, must equal the current checksum.
	IfMatch string
	// MaxEntries, when positive, bounds the number of entries after the
	// update. A repository already over the limit (because the limit was
	// lowered) may still be updated as long as the update does not grow it.
	MaxEntries int
	// Author is recorded in the history (the token id).
	Author string
	// Now is the version's time; zero means time.Now.
	Now time.Time
}

// HistoryOptions pages through [Repos.History]. A nil value is the newest
// DefaultHistoryLimit versions.
type HistoryOptions struct {
	// Before lists only versions older than this one; 0 means no bound.
	Before int64
	// Limit bounds the number of versions; 0 means DefaultHistoryLimit,
	// and at most MaxHistoryLimit are returned.
	Limit int
}

// History paging limits.
const (
	DefaultHistoryLimit = 100
	MaxHistoryLimit     = 1000
)

// HistoryLimit returns the effective limit of o.
func (o *HistoryOptions) HistoryLimit() int {
	if o == nil || o.Limit <= 0 {
		return DefaultHistoryLimit
	}
	return min(o.Limit, MaxHistoryLimit)
}

// HistoryBefore returns the effective Before bound of o, or 0.
func (o *HistoryOptions) HistoryBefore() int64 {
	if o == nil {
		return 0
	}
	return o.Before
}

// Token is a bearer token the server issued, without its secret.
type Token struct {
	ID        string     `json:"id"`
	Repo      string     `json:"repo"`
	ReadOnly  bool       `json:"read_only"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// tokenPrefix marks memdir tokens, so secret scanners and people can tell
// them apart.
const tokenPrefix = "mdt_"

// HashToken returns what a store keeps of a token: its SHA-256 in hex.
// Tokens are 256-bit random values, so a fast hash is enough.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// IssueToken creates a token for repo in s and returns its secret, which
// is shown once and never stored. readOnly tokens may only read.
func IssueToken(ctx context.Context, s Tokens, repo string, readOnly bool, name string, now time.Time) (string, *Token, error) {
	repo, err := NormalizeRepo(repo)
	if err != nil {
		return "", nil, err
	}
	var raw [32]byte
	var id [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, err
	}
	if _, err := rand.Read(id[:]); err != nil {
		return "", nil, err
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	t := &Token{
		ID:        "tok_" + hex.EncodeToString(id[:]),
		Repo:      repo,
		ReadOnly:  readOnly,
		Name:      name,
		CreatedAt: now.UTC().Truncate(time.Millisecond),
	}
	if err := s.CreateToken(ctx, t, HashToken(secret)); err != nil {
		return "", nil, fmt.Errorf("create token for %s: %w", repo, err)
	}
	return secret, t, nil
}

// Plan is the effect of an [Update] on a repository, computed by
// [PlanUpdate] before a store writes anything.
type Plan struct {
	// Checksums are the entry checksums after the update.
	Checksums map[string]string
	// Checksum is the repository checksum after the update.
	Checksum string
	// Changed lists the keys created or modified, sorted.
	Changed []string
	// Deleted lists the keys removed, sorted.
	Deleted []string
	// Time is the version's time, UTC, truncated to milliseconds so every
	// store round-trips it exactly.
	Time time.Time
}

// PlanUpdate validates u against the current entry checksums of a
// repository and computes the result. Stores call it inside their write
// transaction, after the If-Match check, so the domain rules live in one
// place: key and content validation ([ValidateEntries], which also
// refuses a key that is a directory of a stored one), the entry limit, and which keys really change (an
// upsert of identical content is not a change).
func PlanUpdate(current map[string]string, u *Update) (*Plan, error) {
	next := make(map[string]string, len(current)+len(u.Entries))
	maps.Copy(next, current)
	p := &Plan{Time: u.Now}
	if p.Time.IsZero() {
		p.Time = time.Now()
	}
	p.Time = p.Time.UTC().Truncate(time.Millisecond)
	if err := ValidateEntries(u.Entries, u.Deletes, current); err != nil {
		return nil, err
	}
	for k, content := range u.Entries {
		sum := EntryChecksum(content)
		if current[k] != sum {
			p.Changed = append(p.Changed, k)
		}
		next[k] = sum
	}
	for _, k := range u.Deletes {
		if _, ok := next[k]; ok {
			delete(next, k)
			p.Deleted = append(p.Deleted, k)
		}
	}
	if u.MaxEntries > 0 && len(next) > u.MaxEntries && len(next) > len(current) {
		return nil, &TooManyEntriesError{Max: u.MaxEntries, Received: len(next)}
	}
	sort.Strings(p.Changed)
	sort.Strings(p.Deleted)
	p.Checksums = next
	p.Checksum = RepoChecksum(next)
	return p, nil
}
