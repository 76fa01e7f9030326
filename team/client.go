package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/secrets"
)

// MaxConflictRetries is how many times a push refreshes the server's
// hashes and retries after a 412, as in Claude Code.
const MaxConflictRetries = 2

// ClientOptions configures a Client. A nil *ClientOptions means the
// defaults.
type ClientOptions struct {
	// BeforeWrite, when set, is called with the absolute path of every
	// file a pull is about to create or overwrite, before it does; an error
	// stops the pull. memdir wires it to its undo journal.
	BeforeWrite func(absPath string) error
	// Scan finds secrets in a file before it is pushed; nil means
	// secrets.Scan.
	Scan func(content string) []secrets.Match
	// Logger receives progress lines; nil discards.
	Logger *slog.Logger
}

// Client syncs one team directory with one repository's team memory,
// following Claude Code's rules: pull lets the server win per key, push
// uploads the local delta in batches with If-Match, and deletions never
// propagate. It remembers what it learned from the server (entry
// checksums, the ETag, the entry limit) between calls, like Claude Code's
// sync state. Its methods are safe to call from several goroutines; they
// run one at a time.
type Client struct {
	repos Repos
	repo  string
	dir   string
	opts  ClientOptions
	log   *slog.Logger

	mu sync.Mutex
	// serverSums are the server's entry checksums as last seen; nil means
	// unknown (the next push probes view=hashes first).
	serverSums map[string]string
	// etag is the server's checksum as last seen; "" when it has no data.
	etag string
	// current reports that the team directory holds every server entry
	// as of etag (a pull saw it, and only this client's pushes followed),
	// so a pull may send it as If-None-Match. A probe that finds someone
	// else's changes clears it: those keys arrive on the next pull.
	current bool
	// maxEntries is the server's limit, learned from a 413; 0 = unknown.
	maxEntries int
	// synced holds, per key, the checksum of the content this client last
	// pulled or pushed: the common base of the local file and the server.
	// A file still at its base that the server has changed is a stale
	// copy, not a local change, and a push must not send it.
	synced map[string]string
}

// NewClient returns a Client that syncs teamDir with repo through repos.
func NewClient(repos Repos, repo, teamDir string, opts *ClientOptions) (*Client, error) {
	if repo == "" {
		return nil, ErrNoRepo
	}
	repo, err := NormalizeRepo(repo)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(teamDir)
	if err != nil {
		return nil, fmt.Errorf("team directory %s: %w", teamDir, err)
	}
	c := &Client{repos: repos, repo: repo, dir: dir, synced: map[string]string{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Scan == nil {
		c.opts.Scan = secrets.Scan
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Skip reasons, in Skip.Reason.
const (
	SkipInvalidKey = "invalid_key" // unsafe or malformed key (path traversal, backslash, ...)
	SkipTooLarge   = "too_large"   // over MaxEntryBytes
	SkipSecret     = "secret"      // the file holds a potential secret
	SkipNotText    = "not_text"    // invalid UTF-8 or a NUL byte
	SkipNotRegular = "not_regular" // a symlink, directory or device where a file was expected
	SkipUnreadable = "unreadable"  // the file could not be read
	SkipOverLimit  = "over_limit"  // beyond the server's entry limit (learned from a 413)
)

// Skip is an entry a pull or push left alone, and why. For secrets it
// names the rule, never the value.
type Skip struct {
	Key    string `json:"key"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	RuleID string `json:"ruleId,omitempty"`
	Label  string `json:"label,omitempty"`
}

// PullResult reports a pull.
type PullResult struct {
	// NotModified: the server answered 304; nothing was read or written.
	NotModified bool `json:"notModified"`
	// Empty: the server has no team memory for the repository (404).
	Empty    bool   `json:"empty"`
	Version  int64  `json:"version,omitempty"`
	Checksum string `json:"checksum,omitempty"`
	// Written lists the keys created or overwritten, sorted.
	Written []string `json:"written"`
	// Unchanged counts entries whose local content was already identical
	// (their files, mtimes included, are untouched).
	Unchanged int    `json:"unchanged"`
	Skipped   []Skip `json:"skipped"`
}

// PushResult reports a push.
type PushResult struct {
	// Pushed lists the keys uploaded, sorted.
	Pushed []string `json:"pushed"`
	// Unchanged counts local entries the server already had.
	Unchanged int    `json:"unchanged"`
	Skipped   []Skip `json:"skipped"`
	// Stale lists keys not sent because the local file is the copy this
	// client last synced and the server has a newer one from a teammate;
	// the next pull brings it.
	Stale []string `json:"stale,omitempty"`
	// Requests is the number of PUTs that succeeded.
	Requests int `json:"requests"`
	// Conflicts is the number of 412s resolved by refreshing the hashes.
	Conflicts int    `json:"conflicts"`
	Version   int64  `json:"version,omitempty"`
	Checksum  string `json:"checksum,omitempty"`
}

// SyncResult reports a sync: a pull, then a push.
type SyncResult struct {
	Pull *PullResult `json:"pull"`
	Push *PushResult `json:"push"`
}

// Status compares the team directory with the server without changing
// either.
type Status struct {
	Repo    string `json:"repo"`
	TeamDir string `json:"teamDir"`
	// ServerEmpty: the server has no team memory for the repository.
	ServerEmpty bool   `json:"serverEmpty"`
	Version     int64  `json:"version,omitempty"`
	Checksum    string `json:"checksum,omitempty"`
	// LocalOnly: files a push would upload as new keys.
	LocalOnly []string `json:"localOnly"`
	// Modified: keys whose local content differs from the server's; a push
	// uploads the local one, a pull overwrites it with the server's.
	Modified []string `json:"modified"`
	// ServerOnly: keys a pull would create locally.
	ServerOnly []string `json:"serverOnly"`
	InSync     int      `json:"inSync"`
	Skipped    []Skip   `json:"skipped"`
}

// Pull fetches the repository and writes each entry into the team
// directory. The server wins per key; local files the server does not have
// are left alone. Each key must pass [ValidateKeyPath] before anything is
// written; entries over MaxEntryBytes are skipped; identical content is not
// rewritten, so mtimes survive. Writes are atomic (files 0600, directories
// 0700). With useETag the request is conditional on the checksum of the
// last pull or push, and a 304 changes nothing.
//
// The result lists what was written even when an error stops the pull
// part way.
func (c *Client) Pull(ctx context.Context, useETag bool) (*PullResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pull(ctx, useETag)
}

func (c *Client) pull(ctx context.Context, useETag bool) (*PullResult, error) {
	res := &PullResult{Written: []string{}}
	opts := &GetOptions{}
	if useETag && c.current {
		opts.IfNoneMatch = c.etag
	}
	d, err := c.repos.Get(ctx, c.repo, opts)
	switch {
	case errors.Is(err, ErrNotModified):
		res.NotModified = true
		res.Checksum = c.etag
		return res, nil
	case errors.Is(err, ErrNotFound):
		res.Empty = true
		c.serverSums, c.etag, c.current = map[string]string{}, "", true
		return res, nil
	case err != nil:
		return res, fmt.Errorf("pull %s: %w", c.repo, err)
	}
	c.serverSums, c.etag, c.current = d.Content.EntryChecksums, d.Checksum, false
	if c.serverSums == nil {
		c.serverSums = map[string]string{}
		for k, v := range d.Content.Entries {
			c.serverSums[k] = EntryChecksum(v)
		}
	}
	res.Version, res.Checksum = d.Version, d.Checksum
	for _, key := range sortedKeys(d.Content.Entries) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		outcome, skip, err := c.writeEntry(key, d.Content.Entries[key])
		if err != nil {
			return res, err
		}
		switch outcome {
		case written:
			res.Written = append(res.Written, key)
		case unchanged:
			res.Unchanged++
		case skipped:
			res.Skipped = append(res.Skipped, *skip)
		}
		if outcome != skipped {
			c.synced[key] = EntryChecksum(d.Content.Entries[key])
		}
	}
	c.current = true
	return res, nil
}

type outcome int

const (
	written outcome = iota
	unchanged
	skipped
)

// writeEntry writes one pulled entry unless it must be skipped or is
// already there. An error stops the pull.
func (c *Client) writeEntry(key, content string) (outcome, *Skip, error) {
	abs, err := ValidateKeyPath(c.dir, key)
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			return skipped, &Skip{Key: key, Reason: SkipInvalidKey, Detail: ke.Reason}, nil
		}
		return 0, nil, err
	}
	if len(content) > MaxEntryBytes {
		return skipped, &Skip{Key: key, Path: abs, Reason: SkipTooLarge, Detail: fmt.Sprintf("%d bytes", len(content))}, nil
	}
	fi, err := os.Lstat(abs)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		// Replacing a directory or a symlink (even one that stays inside
		// the team directory) would change more than this key.
		return skipped, &Skip{Key: key, Path: abs, Reason: SkipNotRegular, Detail: "local path is a " + kindOf(fi.Mode())}, nil
	case err == nil:
		old, err := os.ReadFile(abs)
		if err != nil {
			return 0, nil, fmt.Errorf("pull %s: read %s: %w", c.repo, abs, err)
		}
		if bytes.Equal(old, []byte(content)) {
			return unchanged, nil, nil
		}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
	default:
		return 0, nil, fmt.Errorf("pull %s: %w", c.repo, err)
	}
	if c.opts.BeforeWrite != nil {
		if err := c.opts.BeforeWrite(abs); err != nil {
			return 0, nil, fmt.Errorf("pull %s: before writing %s: %w", c.repo, abs, err)
		}
	}
	if err := atomicfile.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return 0, nil, fmt.Errorf("pull %s: key %q: %w", c.repo, key, err)
	}
	if err := atomicfile.WriteFile(abs, []byte(content), 0o600); err != nil {
		return 0, nil, fmt.Errorf("pull %s: key %q: %w", c.repo, key, err)
	}
	c.log.Info("pulled", "repo", c.repo, "key", key)
	return written, nil, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	default:
		return "special file"
	}
}

// Push uploads the local files whose content differs from the server's, in
// batches of at most MaxPutBodyBytes (by the size estimate Claude Code
// uses; an oversize entry goes alone), each PUT conditional on the
// checksum the previous one returned. On a 412 it refreshes the server's
// hashes, recomputes the delta (keys a teammate pushed with identical
// content drop out; for keys that differ the local content wins) and
// retries, at most MaxConflictRetries times.
//
// One refinement over Claude Code: "local wins" applies to keys changed
// locally. A file still holding the content this client last pulled or
// pushed, where the server now has a teammate's newer version, is a stale
// copy: it is not sent (Claude Code would overwrite the teammate's
// acknowledged write with it) and is listed in PushResult.Stale for the next
// pull to refresh. A client that has not synced a key yet (a fresh process
// pushing before any pull) cannot tell, and sends it, as Claude Code does. It learns the server's entry
// limit from a 413 and, from then on, pushes only the alphabetically first
// that many keys.
//
// Files are skipped, and reported, when they are over MaxEntryBytes, hold a
// potential secret, are not UTF-8 text, are not regular files (symlinks
// included) or have a key the server would refuse. Batches that succeeded
// before an error stay committed; the result lists them.
func (c *Client) Push(ctx context.Context) (*PushResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.push(ctx)
}

func (c *Client) push(ctx context.Context) (*PushResult, error) {
	res := &PushResult{Pushed: []string{}}
	if c.serverSums == nil {
		if _, err := c.probe(ctx); err != nil {
			return res, err
		}
	}
	local, skips, err := c.readLocal()
	res.Skipped = skips
	if err != nil {
		return res, err
	}
	keys := sortedKeys(local)
	if c.maxEntries > 0 && len(keys) > c.maxEntries {
		for _, k := range keys[c.maxEntries:] {
			res.Skipped = append(res.Skipped, Skip{Key: k, Reason: SkipOverLimit, Detail: fmt.Sprintf("the server allows %d entries", c.maxEntries)})
		}
		keys = keys[:c.maxEntries]
	}
	sums := make(map[string]string, len(keys))
	for _, k := range keys {
		sums[k] = EntryChecksum(local[k])
	}
	pushed := map[string]bool{}
	defer func() {
		for k := range pushed {
			res.Pushed = append(res.Pushed, k)
		}
		sort.Strings(res.Pushed)
		res.Unchanged = len(keys) - len(res.Pushed) - len(res.Stale)
	}()
	for attempt := 0; ; attempt++ {
		var delta []string
		res.Stale = nil
		for _, k := range keys {
			server := c.serverSums[k]
			switch base, known := c.synced[k]; {
			case server == sums[k]:
			case known && base == sums[k] && server != base:
				res.Stale = append(res.Stale, k)
			default:
				delta = append(delta, k)
			}
		}
		err := c.sendBatches(ctx, delta, local, sums, res, pushed)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, ErrConflict) {
			var tm *TooManyEntriesError
			if errors.As(err, &tm) && tm.Max > 0 {
				c.maxEntries = tm.Max
			}
			return res, fmt.Errorf("push %s: %w", c.repo, err)
		}
		if attempt >= MaxConflictRetries {
			return res, fmt.Errorf("push %s: still conflicting after %d retries; try again: %w", c.repo, MaxConflictRetries, err)
		}
		res.Conflicts++
		c.log.Info("push conflict; refreshing hashes", "repo", c.repo, "retry", attempt+1)
		if _, err := c.probe(ctx); err != nil {
			return res, err
		}
	}
}

// sendBatches PUTs delta in batches, updating the client's view of the
// server after each success.
func (c *Client) sendBatches(ctx context.Context, delta []string, local, sums map[string]string, res *PushResult, pushed map[string]bool) error {
	for _, batch := range batches(delta, local) {
		entries := make(map[string]string, len(batch))
		for _, k := range batch {
			entries[k] = local[k]
		}
		// The server's rules, checked here so that nothing it must refuse
		// is sent (a key under one of its file keys, say).
		if err := ValidateEntries(entries, nil, c.serverSums); err != nil {
			return err
		}
		d, err := c.repos.Put(ctx, c.repo, &Update{Entries: entries, IfMatch: c.etag})
		if err != nil {
			return err
		}
		c.etag = d.Checksum
		for _, k := range batch {
			c.serverSums[k] = sums[k]
			c.synced[k] = sums[k]
			pushed[k] = true
		}
		res.Requests++
		res.Version, res.Checksum = d.Version, d.Checksum
		c.log.Info("pushed", "repo", c.repo, "entries", len(batch), "version", d.Version)
	}
	return nil
}

// probe refreshes the server's entry checksums and checksum from
// view=hashes. It returns nil data when the server has none.
func (c *Client) probe(ctx context.Context) (*Data, error) {
	d, err := c.repos.Get(ctx, c.repo, &GetOptions{HashesOnly: true})
	switch {
	case errors.Is(err, ErrNotFound):
		c.current = c.current && c.etag == ""
		c.serverSums, c.etag = map[string]string{}, ""
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the server's hashes of %s: %w", c.repo, err)
	}
	c.current = c.current && c.etag == d.Checksum
	c.serverSums, c.etag = d.Content.EntryChecksums, d.Checksum
	if c.serverSums == nil {
		c.serverSums = map[string]string{}
	}
	return d, nil
}

// batches splits keys greedily, in order, so that each PUT body stays
// within MaxPutBodyBytes by Claude Code's estimate:
// len('{"entries":{}}') + sum(len(json(key)) + len(json(value)) + 2).
// An entry too large for any batch goes alone.
func batches(keys []string, local map[string]string) [][]string {
	const base = len(`{"entries":{}}`)
	var out [][]string
	var cur []string
	size := base
	for _, k := range keys {
		n := jsonLen(k) + jsonLen(local[k]) + 2
		if len(cur) > 0 && size+n > MaxPutBodyBytes {
			out = append(out, cur)
			cur, size = nil, base
		}
		cur = append(cur, k)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func jsonLen(s string) int {
	b, _ := marshalJSON(s)
	return len(b)
}

// readLocal walks the team directory and returns the content of every
// file that may be pushed, keyed by its slash path, and what it skipped.
// A missing team directory is empty; unreadable directories are passed
// over, as in Claude Code.
func (c *Client) readLocal() (map[string]string, []Skip, error) {
	out := map[string]string{}
	var skips []Skip
	root := c.dir
	// The team directory itself may be a symlink (a dotfiles setup);
	// WalkDir would not descend into it.
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return nil, nil, fmt.Errorf("team directory %s: %w", c.dir, err)
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				if p == root && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("read team directory %s: %w", c.dir, err)
				}
				return nil
			}
			return err
		}
		if p == root || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if isTempFile(d.Name()) {
			return nil
		}
		if !d.Type().IsRegular() {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipNotRegular, Detail: kindOf(d.Type())})
			return nil
		}
		if err := ValidateKey(key); err != nil {
			var ke *KeyError
			errors.As(err, &ke)
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipInvalidKey, Detail: ke.Reason})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipUnreadable, Detail: err.Error()})
			return nil
		}
		if info.Size() > MaxEntryBytes {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipTooLarge, Detail: fmt.Sprintf("%d bytes", info.Size())})
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipUnreadable, Detail: err.Error()})
			return nil
		}
		if len(b) > MaxEntryBytes { // grew since Info
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipTooLarge, Detail: fmt.Sprintf("%d bytes", len(b))})
			return nil
		}
		content := string(b)
		if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipNotText})
			return nil
		}
		if ms := c.opts.Scan(content); len(ms) > 0 {
			skips = append(skips, Skip{Key: key, Path: p, Reason: SkipSecret, RuleID: ms[0].RuleID, Label: ms[0].Label})
			return nil
		}
		out[key] = content
		return nil
	})
	if err != nil {
		return nil, skips, err
	}
	dropSecretIndexLines(out, skips)
	return out, skips, nil
}

// isTempFile reports the temporary files atomicfile.WriteFile creates
// (".name.tmp-*") while it writes; pushing one would upload half a write.
func isTempFile(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// Sync pulls (without the ETag, so every key is checked) and then pushes,
// as Claude Code's syncTeamMemory does.
func (c *Client) Sync(ctx context.Context) (*SyncResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res := &SyncResult{}
	var err error
	if res.Pull, err = c.pull(ctx, false); err != nil {
		return res, err
	}
	res.Push, err = c.push(ctx)
	return res, err
}

// Status compares the team directory with the server's hashes.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &Status{Repo: c.repo, TeamDir: c.dir, LocalOnly: []string{}, Modified: []string{}, ServerOnly: []string{}}
	d, err := c.probe(ctx)
	if err != nil {
		return nil, err
	}
	st.ServerEmpty = d == nil
	if d != nil {
		st.Version, st.Checksum = d.Version, d.Checksum
	}
	local, skips, err := c.readLocal()
	if err != nil {
		return nil, err
	}
	st.Skipped = skips
	skipped := map[string]bool{}
	for _, s := range skips {
		skipped[s.Key] = true
	}
	for _, k := range sortedKeys(local) {
		server, ok := c.serverSums[k]
		switch {
		case !ok:
			st.LocalOnly = append(st.LocalOnly, k)
		case server != EntryChecksum(local[k]):
			st.Modified = append(st.Modified, k)
		default:
			st.InSync++
		}
	}
	for _, k := range sortedKeys(c.serverSums) {
		if _, ok := local[k]; !ok && !skipped[k] {
			st.ServerOnly = append(st.ServerOnly, k)
		}
	}
	return st, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
