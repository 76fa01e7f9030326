package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memdir/memdir"
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
	// file a pull, push or resolve is about to create, overwrite or
	// remove, before it does; an error stops the operation. memdir wires
	// it to its undo journal.
	BeforeWrite func(absPath string) error
	// Screen, when set, is asked before a pull writes a key's new content
	// (old is the local file's content, exists whether there is one). An
	// error keeps the local file as it is and reports the key skipped with
	// SkipHeld and the error's text; its base is not moved, so the next
	// pull asks again. memdir wires it to injection screening, which holds
	// a suspicious entry in the review queue.
	Screen func(absPath, old string, exists bool, content string) error
	// AfterWrite, when set, is called after a pull wrote a key's new
	// content (the server's, or a merge of it with the local edit) into
	// the team directory. The file is left byte for byte as written, so
	// the next pull and push find it equal to its base; memdir wires the
	// hook to a record of the write's provenance kept outside the
	// directory. An error stops the pull, as a failing BeforeWrite does.
	AfterWrite func(absPath, content string) error
	// Wrap, when set, runs each Pull, Push and Sync: it must call fn once
	// and return its error, and may record fn's one-line summary. memdir
	// wires it to the memory directory's lock and a journal run, so that a
	// pull or push that merges files can be undone.
	Wrap func(ctx context.Context, op string, fn func() (summary string, err error)) error
	// StateDir holds the sync state of the team directory: the content
	// each key had at the last pull or push, and the local versions of
	// conflicting keys. Empty means SyncStateDir(teamDir,
	// LookupEnv).
	StateDir string
	// LookupEnv finds MEMDIR_STATE_DIR, XDG_STATE_HOME and HOME for the
	// default StateDir; nil means os.LookupEnv.
	LookupEnv memdir.LookupEnvFunc
	// Scan finds secrets in a file before it is pushed; nil means
	// secrets.Scan.
	Scan func(content string) []secrets.Match
	// Now stamps conflicts; nil means time.Now.
	Now func() time.Time
	// Logger receives progress lines; nil discards.
	Logger *slog.Logger
	// Progress, when set, is told how a pull or push is getting on, for
	// a progress display: stage "downloading" while the server's entries
	// arrive, "bringing in entries" with the keys reconciled of those
	// received, "reading team/" while a push reads the local files, and
	// "pushing" with the keys sent of those to send. Calls come from the
	// goroutine running the pull or push.
	Progress func(stage string, done, total int)
}

// Client syncs one team directory with one repository's team memory. It
// speaks Claude Code's protocol (pull per key, push of the local delta in
// batches with If-Match) but merges instead of letting one side win: it
// keeps, outside the team directory, the content each key had at the last
// successful pull or push (its base), and
//   - push sends only keys changed locally since their base;
//   - pull and push never overwrite a key both sides changed: the two
//     edits are merged line by line when they do not overlap, and
//     otherwise the server's version goes into the team directory and the
//     local one is saved as a [Conflict] for [Client.Resolve];
//   - the team MEMORY.md is merged by link target ([MergeIndex]), so
//     concurrent pushes never drop a line; it conflicts only when both
//     sides changed the same pointer line ([MergeIndexConflicts]).
//
// Deletions never propagate. Its methods are safe to call from several
// goroutines (they run one at a time) and from several processes sharing
// a team directory (the sync state is locked).
type Client struct {
	repos    Repos
	repo     string
	dir      string
	stateDir string
	opts     ClientOptions
	log      *slog.Logger

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
	c := &Client{repos: repos, repo: repo, dir: dir}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Scan == nil {
		c.opts.Scan = secrets.Scan
	}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	if c.opts.LookupEnv == nil {
		c.opts.LookupEnv = os.LookupEnv
	}
	c.stateDir = c.opts.StateDir
	if c.stateDir == "" {
		if c.stateDir, err = SyncStateDir(dir, c.opts.LookupEnv); err != nil {
			return nil, fmt.Errorf("team sync state of %s: %w", dir, err)
		}
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// StateDir returns the directory holding the client's sync state.
func (c *Client) StateDir() string { return c.stateDir }

// ConflictDir returns the directory where the local versions of
// conflicting keys are kept, each at its key's path.
func (c *Client) ConflictDir() string {
	owner, name, _ := strings.Cut(c.repo, "/")
	return filepath.Join(c.stateDir, owner, name, "conflicts")
}

// Skip reasons, in Skip.Reason.
const (
	SkipInvalidKey = "invalid_key" // unsafe or malformed key (path traversal, backslash, ...)
	SkipTooLarge   = "too_large"   // over MaxEntryBytes
	SkipSecret     = "secret"      // the file holds a potential secret
	SkipNotText    = "not_text"    // invalid UTF-8 or a NUL byte
	SkipNotRegular = "not_regular" // a symlink, directory or device where a file was expected
	SkipUnreadable = "unreadable"  // the file could not be read
	SkipHeld       = "held"        // screening held a pulled key's content for review ('memdir review')
	SkipUnwritable = "unwritable"  // a pulled key could not be written (name too long, a file where a directory must be, ...)
	SkipOverLimit  = "over_limit"  // beyond the server's entry limit (learned from a 413)
)

// Skip is an entry a pull or push left alone, and why. For secrets it
// names the rule, never the value.
type Skip struct {
	Key    string `json:"key"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	RuleID string `json:"rule_id,omitempty"`
	Label  string `json:"label,omitempty"`
}

// Conflict is a key both sides changed in overlapping ways. The team
// directory holds the server's version (so nothing unmerged is pushed) and
// LocalCopy the local one, until [Client.Resolve].
type Conflict struct {
	Key string `json:"key"`
	// Path is the key's file in the team directory: the server's version.
	Path string `json:"path"`
	// LocalCopy is the file holding the local version, outside the team
	// directory.
	LocalCopy string `json:"local_copy"`
	// NoBase: this client had never synced the key, so the two versions
	// could not be merged (a team directory synced by an older memdir).
	NoBase bool      `json:"no_base,omitempty"`
	At     time.Time `json:"at"`
}

// PullResult reports a pull.
type PullResult struct {
	// NotModified: the server answered 304; nothing was read or written.
	NotModified bool `json:"not_modified"`
	// Empty: the server has no team memory for the repository (404).
	Empty    bool   `json:"empty"`
	Version  int64  `json:"version,omitempty"`
	Checksum string `json:"checksum,omitempty"`
	// Written lists the keys created or overwritten with the server's
	// version, sorted (conflicting keys included).
	Written []string `json:"written"`
	// Merged lists the keys whose local and server edits were merged into
	// the local file; a push uploads the result.
	Merged []string `json:"merged"`
	// Kept lists the keys changed only locally since the last sync: left
	// as they are for a push to upload.
	Kept []string `json:"kept"`
	// Conflicts lists the keys both sides changed in overlapping ways.
	Conflicts []Conflict `json:"conflicts"`
	// Unchanged counts entries whose local content was already identical
	// (their files, mtimes included, are untouched).
	Unchanged int    `json:"unchanged"`
	Skipped   []Skip `json:"skipped"`
}

// PushResult reports a push.
type PushResult struct {
	// Pushed lists the keys uploaded, sorted.
	Pushed []string `json:"pushed"`
	// Unchanged counts local entries the server already had, or that have
	// not changed locally since the last sync.
	Unchanged int    `json:"unchanged"`
	Skipped   []Skip `json:"skipped"`
	// Stale lists keys not sent because the local file has not changed
	// since the last sync and the server has a teammate's newer version
	// (the next pull brings it), or because both sides changed them and
	// the server's version could not be brought in (see Skipped).
	Stale []string `json:"stale,omitempty"`
	// When both sides had changed some key, the push first brought the
	// server's entries in, as a pull does: Pulled lists the keys it
	// wrote with the server's version, Merged the keys it merged (and
	// then uploaded), Conflicts those it could not merge (not uploaded).
	Pulled    []string   `json:"pulled,omitempty"`
	Merged    []string   `json:"merged,omitempty"`
	Conflicts []Conflict `json:"conflicts"`
	// Requests is the number of PUTs that succeeded.
	Requests int `json:"requests"`
	// Retries is the number of 412s (another writer got in first) the
	// push recovered from by refreshing and merging again.
	Retries  int    `json:"retries"`
	Version  int64  `json:"version,omitempty"`
	Checksum string `json:"checksum,omitempty"`
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
	TeamDir string `json:"team_dir"`
	// ServerEmpty: the server has no team memory for the repository.
	ServerEmpty bool   `json:"server_empty"`
	Version     int64  `json:"version,omitempty"`
	Checksum    string `json:"checksum,omitempty"`
	// LocalOnly: files a push would upload as new keys.
	LocalOnly []string `json:"local_only"`
	// Modified: keys changed locally since the last sync, and not on the
	// server: a push uploads them.
	Modified []string `json:"modified"`
	// ServerChanged: keys a teammate changed on the server and that have
	// not changed here: a pull brings them.
	ServerChanged []string `json:"server_changed"`
	// BothChanged: keys changed on both sides since the last sync (or
	// never synced by this client and different): the next pull or push
	// merges them, or records a conflict.
	BothChanged []string `json:"both_changed"`
	// ServerOnly: keys a pull would create locally.
	ServerOnly []string `json:"server_only"`
	// Conflicts: unresolved conflicts ('memdir sync resolve').
	Conflicts []Conflict `json:"conflicts"`
	InSync    int        `json:"in_sync"`
	Skipped   []Skip     `json:"skipped"`
}

// wrap runs fn through ClientOptions.Wrap.
func (c *Client) wrap(ctx context.Context, op string, fn func() (string, error)) error {
	if c.opts.Wrap == nil {
		_, err := fn()
		return err
	}
	called := false
	err := c.opts.Wrap(ctx, op, func() (string, error) { called = true; return fn() })
	if err == nil && !called {
		return fmt.Errorf("internal error: ClientOptions.Wrap did not run the %s", op)
	}
	return err
}

// Pull fetches the repository and brings each entry into the team
// directory, key by key, against the key's base:
//   - a key missing locally, or unchanged locally since the base, gets the
//     server's version;
//   - a key changed only locally is kept (a push uploads it);
//   - a key changed on both sides is merged when the edits do not overlap,
//     and is otherwise a conflict: the server's version is written, the
//     local one saved (PullResult.Conflicts);
//   - the team MEMORY.md is merged by link target ([MergeIndex]); when
//     both sides changed one of its pointer lines to different texts it
//     is a conflict like any other key.
//
// Local files the server does not have are left alone. Each key must pass
// [ValidateKeyPath] and have no hidden component ([HiddenComponent]: no
// .git/config planted by a teammate); entries that fail, entries over
// MaxEntryBytes, with a path segment over MaxSegmentBytes, or that cannot
// be written (a file where a directory is needed) are skipped and
// reported, and the pull goes on with the others.
// Identical content is not rewritten, so mtimes survive. Writes are atomic
// (files 0600, directories 0700). With useETag the request is conditional
// on the checksum of the last pull or push, and a 304 changes nothing.
//
// The result lists what was written even when an error stops the pull
// part way.
func (c *Client) Pull(ctx context.Context, useETag bool) (*PullResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var res *PullResult
	err := c.wrap(ctx, "sync-pull", func() (string, error) {
		var err error
		res, err = c.pull(ctx, useETag)
		return pullSummary(c.repo, res), err
	})
	return res, err
}

func pullSummary(repo string, r *PullResult) string {
	if r == nil {
		return "sync pull " + repo
	}
	return fmt.Sprintf("sync pull %s: %d written, %d merged, %d conflicts", repo, len(r.Written), len(r.Merged), len(r.Conflicts))
}

func (c *Client) pull(ctx context.Context, useETag bool) (*PullResult, error) {
	res := newPullResult()
	opts := &GetOptions{}
	if useETag && c.current {
		opts.IfNoneMatch = c.etag
	}
	st, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return res, err
	}
	defer unlock()
	c.progress("downloading", 0, 0)
	d, src, done, err := c.fetchEntries(ctx, st, opts)
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
	defer done()
	c.learn(d)
	res.Version, res.Checksum = d.Version, d.Checksum
	err = c.reconcileAll(ctx, st, src, res)
	if serr := st.save(); err == nil {
		err = serr
	}
	if err == nil {
		c.current = true
	}
	return res, err
}

func newPullResult() *PullResult {
	return &PullResult{Written: []string{}, Merged: []string{}, Kept: []string{}, Conflicts: []Conflict{}, Skipped: []Skip{}}
}

// learn takes the server's checksums from a full GET.
func (c *Client) learn(d *Data) {
	c.serverSums, c.etag, c.current = d.Content.EntryChecksums, d.Checksum, false
	if c.serverSums == nil {
		c.serverSums = map[string]string{}
		for k, v := range d.Content.Entries {
			c.serverSums[k] = EntryChecksum(v)
		}
	}
}

// reconcileAll brings every server entry of src into the team directory,
// reading one at a time. The team index goes last, so that it can see
// which files exist.
func (c *Client) reconcileAll(ctx context.Context, st *syncState, src *entrySource, res *PullResult) error {
	defer sortPullResult(res)
	for i, key := range src.keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.progress("bringing in entries", i, len(src.keys))
		server, err := src.content(key)
		if err != nil {
			return fmt.Errorf("pull %s: %w", c.repo, err)
		}
		if err := c.reconcile(st, key, server, src.has, res); err != nil {
			return err
		}
	}
	c.progress("bringing in entries", len(src.keys), len(src.keys))
	return nil
}

// progress reports to ClientOptions.Progress, if set.
func (c *Client) progress(stage string, done, total int) {
	if c.opts.Progress != nil {
		c.opts.Progress(stage, done, total)
	}
}

func sortPullResult(res *PullResult) {
	sort.Strings(res.Written)
	sort.Strings(res.Merged)
	sort.Strings(res.Kept)
	sort.Slice(res.Conflicts, func(i, j int) bool { return res.Conflicts[i].Key < res.Conflicts[j].Key })
}

// pulledEntry is one server entry a pull brings in, with what the team
// directory and the sync state hold for its key.
type pulledEntry struct {
	key, abs string
	server   string
	local    string // the team file's content; "" when !exists
	exists   bool
	base     string // the base content; "" when !hasBase
	hasBase  bool
}

// reconcile brings one server entry into the team directory against its
// base. serverHas reports whether the server holds a key (for the
// index). Problems with the key are reported as skips; only a failing
// BeforeWrite, AfterWrite or sync state stops the pull.
func (c *Client) reconcile(st *syncState, key, server string, serverHas func(string) bool, res *PullResult) error {
	skip := func(s Skip) error { res.Skipped = append(res.Skipped, s); return nil }
	abs, err := ValidateKeyPath(c.dir, key)
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			return skip(Skip{Key: key, Reason: SkipInvalidKey, Detail: ke.Reason})
		}
		return err
	}
	if err := checkVisible(key); err != nil {
		// A teammate could otherwise plant .git/config (and its
		// core.fsmonitor command) in everyone's team directory.
		return skip(Skip{Key: key, Reason: SkipInvalidKey, Detail: err.(*KeyError).Reason})
	}
	if seg := longSegment(key); seg != "" {
		return skip(Skip{Key: key, Path: abs, Reason: SkipInvalidKey, Detail: fmt.Sprintf("a path segment is %d bytes, over the %d-byte limit of file names", len(seg), MaxSegmentBytes)})
	}
	if len(server) > MaxEntryBytes {
		return skip(Skip{Key: key, Path: abs, Reason: SkipTooLarge, Detail: fmt.Sprintf("%d bytes", len(server))})
	}
	local, exists, err := readLocalFile(abs)
	if err != nil {
		var nr *notRegularError
		if errors.As(err, &nr) {
			// Replacing a directory or a symlink (even one that stays
			// inside the team directory) would change more than this key.
			return skip(Skip{Key: key, Path: abs, Reason: SkipNotRegular, Detail: "local path is a " + nr.kind})
		}
		return skip(Skip{Key: key, Path: abs, Reason: SkipUnreadable, Detail: err.Error()})
	}
	e := &pulledEntry{key: key, abs: abs, server: server, local: local, exists: exists}
	e.base, e.hasBase = st.base(key)
	agreed := func() error { return st.setBase(key, server) }
	switch {
	case !exists:
		if ok, err := c.writePulled(e, server, res); !ok {
			return err
		}
		res.Written = append(res.Written, key)
		return agreed()
	case local == server:
		res.Unchanged++
		return agreed()
	case key == IndexKey:
		merged, conflicts := MergeIndexConflicts(e.base, local, server, c.localHas, serverHas)
		if len(conflicts) > 0 {
			// Both changed a pointer line: the merge would keep only the
			// server's text of it.
			return c.keepConflict(st, e, res)
		}
		if merged == local {
			res.Kept = append(res.Kept, key)
		} else {
			if ok, err := c.writePulled(e, merged, res); !ok {
				return err
			}
			if merged == server {
				res.Written = append(res.Written, key)
			} else {
				res.Merged = append(res.Merged, key)
			}
		}
		return agreed()
	case e.hasBase && local == e.base:
		if ok, err := c.writePulled(e, server, res); !ok {
			return err
		}
		res.Written = append(res.Written, key)
		if r, open := st.Conflicts[key]; open && r.Theirs == st.Bases[key] {
			// A conflict still open stays open against the newer version.
			r.Theirs = EntryChecksum(server)
			st.Conflicts[key] = r
		}
		return agreed()
	case e.hasBase && server == e.base:
		res.Kept = append(res.Kept, key)
		return nil
	}
	if e.hasBase {
		if m := Merge3(e.base, local, server); m.Conflicts == 0 {
			if ok, err := c.writePulled(e, m.Text, res); !ok {
				return err
			}
			res.Merged = append(res.Merged, key)
			return agreed()
		}
	}
	return c.keepConflict(st, e, res)
}

// writePulled writes content into e's team file, screening it first. ok
// is false when it did not: err is nil when the key was skipped (and
// reported in res), else the error that stops the pull.
func (c *Client) writePulled(e *pulledEntry, content string, res *PullResult) (ok bool, err error) {
	if c.opts.Screen != nil {
		if err := c.opts.Screen(e.abs, e.local, e.exists, content); err != nil {
			res.Skipped = append(res.Skipped, Skip{Key: e.key, Path: e.abs, Reason: SkipHeld, Detail: err.Error()})
			return false, nil
		}
	}
	if err := c.writeTeamFile(e.abs, content); err != nil {
		var we *writeError
		if errors.As(err, &we) {
			res.Skipped = append(res.Skipped, Skip{Key: e.key, Path: e.abs, Reason: SkipUnwritable, Detail: we.Err.Error()})
			return false, nil
		}
		return false, err
	}
	if c.opts.AfterWrite != nil {
		if err := c.opts.AfterWrite(e.abs, content); err != nil {
			return false, fmt.Errorf("%s: after writing %s: %w", c.repo, e.abs, err)
		}
	}
	return true, nil
}

// keepConflict records a conflict on e: the local version is saved
// outside the team directory, then the server's is put in.
func (c *Client) keepConflict(st *syncState, e *pulledEntry, res *PullResult) error {
	cp := st.copyPath(e.key)
	err := atomicfile.MkdirAll(filepath.Dir(cp), 0o700)
	if err == nil {
		err = atomicfile.WriteFile(cp, []byte(e.local), 0o600)
	}
	if err != nil {
		// Without a safe copy the local version stays where it is.
		res.Skipped = append(res.Skipped, Skip{Key: e.key, Path: e.abs, Reason: SkipUnwritable, Detail: "changed on both sides and your version could not be saved aside: " + err.Error()})
		return nil
	}
	if ok, err := c.writePulled(e, e.server, res); !ok {
		return err
	}
	rec := conflictRecord{Theirs: EntryChecksum(e.server), Ours: EntryChecksum(e.local), At: c.opts.Now().UTC()}
	if e.hasBase {
		rec.Base = EntryChecksum(e.base)
	}
	st.Conflicts[e.key] = rec
	res.Written = append(res.Written, e.key)
	res.Conflicts = append(res.Conflicts, c.conflictOf(st, e.key, rec))
	c.log.Warn("conflict", "repo", c.repo, "key", e.key, "yours", cp)
	return st.setBase(e.key, e.server)
}

func (c *Client) conflictOf(st *syncState, key string, r conflictRecord) Conflict {
	return Conflict{Key: key, Path: filepath.Join(c.dir, filepath.FromSlash(key)), LocalCopy: st.copyPath(key), NoBase: r.Base == "", At: r.At}
}

// localHas reports whether the team directory holds file.
func (c *Client) localHas(file string) bool {
	if !filepath.IsLocal(filepath.FromSlash(file)) {
		return false
	}
	_, err := os.Lstat(filepath.Join(c.dir, filepath.FromSlash(file)))
	return err == nil
}

// longSegment returns the first segment of key over MaxSegmentBytes.
func longSegment(key string) string {
	for s := range strings.SplitSeq(key, "/") {
		if len(s) > MaxSegmentBytes {
			return s
		}
	}
	return ""
}

type notRegularError struct{ kind string }

func (e *notRegularError) Error() string { return "not a regular file: " + e.kind }

// readLocalFile reads a team file; exists is false when it (or a parent)
// is missing.
func readLocalFile(abs string) (content string, exists bool, err error) {
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", false, nil
	case err != nil:
		return "", false, err
	case !fi.Mode().IsRegular():
		return "", false, &notRegularError{kindOf(fi.Mode())}
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// writeError is a failure to write one key's file: the key is skipped.
type writeError struct{ Err error }

func (e *writeError) Error() string { return e.Err.Error() }

// writeTeamFile journals and writes one file of the team directory.
func (c *Client) writeTeamFile(abs, content string) error {
	// A file where a directory must be (keys "sub" and "sub/x.md") is a
	// problem of this key alone: report it before journaling anything.
	for p := filepath.Dir(abs); len(p) > len(c.dir); p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(c.dir, p)
			return &writeError{fmt.Errorf("%s is a %s, not a directory", filepath.ToSlash(rel), map[bool]string{true: "symlink", false: "file"}[fi.Mode()&fs.ModeSymlink != 0])}
		}
	}
	if c.opts.BeforeWrite != nil {
		if err := c.opts.BeforeWrite(abs); err != nil {
			return fmt.Errorf("%s: before writing %s: %w", c.repo, abs, err)
		}
	}
	if err := atomicfile.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return &writeError{err}
	}
	if err := atomicfile.WriteFile(abs, []byte(content), 0o600); err != nil {
		return &writeError{err}
	}
	c.log.Info("wrote", "repo", c.repo, "path", abs)
	return nil
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

// Push uploads the local files changed since their base, in batches of at
// most MaxPutBodyBytes (by the size estimate Claude Code uses; an oversize
// entry goes alone), each PUT conditional on the checksum the previous one
// returned. For each local file, against its base and the server's
// checksum:
//   - identical to the server's: nothing to send;
//   - unchanged since the base while the server moved on: not sent, listed
//     in PushResult.Stale for the next pull (Claude Code would overwrite the
//     teammate's write with it);
//   - changed locally, and the server still at the base (or without the
//     key): sent;
//   - changed on both sides, or never synced and different (a team
//     directory synced by an older memdir): the push first fetches the
//     server's entries and brings them in as [Client.Pull] does (merging,
//     or recording a conflict that is then not sent), and sends the result.
//
// On a 412 it refreshes the server's hashes and starts over, at most
// MaxConflictRetries times, so a teammate's write that got in first is
// merged, never overwritten. It learns the server's entry limit from a 413
// and, from then on, pushes only the alphabetically first that many keys.
//
// Files are skipped, and reported, when they are over MaxEntryBytes, hold a
// potential secret, are not UTF-8 text, are not regular files (symlinks
// included) or have a key the server would refuse. Batches that succeeded
// before an error stay committed; the result lists them.
func (c *Client) Push(ctx context.Context) (*PushResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var res *PushResult
	err := c.wrap(ctx, "sync-push", func() (string, error) {
		var err error
		res, err = c.push(ctx)
		return pushSummary(c.repo, res), err
	})
	return res, err
}

func pushSummary(repo string, r *PushResult) string {
	if r == nil {
		return "sync push " + repo
	}
	return fmt.Sprintf("sync push %s: %d pushed, %d pulled, %d merged, %d conflicts", repo, len(r.Pushed), len(r.Pulled), len(r.Merged), len(r.Conflicts))
}

func (c *Client) push(ctx context.Context) (*PushResult, error) {
	res := &PushResult{Pushed: []string{}, Conflicts: []Conflict{}}
	st, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return res, err
	}
	defer unlock()
	err = c.pushLocked(ctx, st, res)
	if serr := st.save(); err == nil {
		err = serr
	}
	sort.Strings(res.Pushed)
	return res, err
}

func (c *Client) pushLocked(ctx context.Context, st *syncState, res *PushResult) error {
	if c.serverSums == nil {
		if _, err := c.probe(ctx); err != nil {
			return err
		}
	}
	pushed := map[string]bool{}
	defer func() {
		for k := range pushed {
			res.Pushed = append(res.Pushed, k)
		}
	}()
	reconciledAt := "-"  // the etag whose entries were last brought in
	var pullSkips []Skip // what bringing the server's entries in skipped
	for attempt := 0; ; {
		c.progress("reading team/", 0, 0)
		local, skips, err := c.readLocal()
		res.Skipped = append(skips, pullSkips...)
		if err != nil {
			return err
		}
		keys := sortedKeys(local)
		if c.maxEntries > 0 && len(keys) > c.maxEntries {
			for _, k := range keys[c.maxEntries:] {
				res.Skipped = append(res.Skipped, Skip{Key: k, Reason: SkipOverLimit, Detail: fmt.Sprintf("the server allows %d entries", c.maxEntries)})
			}
			keys = keys[:c.maxEntries]
		}
		sums := make(map[string]string, len(keys))
		var delta, both []string
		res.Stale, res.Unchanged = nil, 0
		for _, k := range keys {
			sums[k] = EntryChecksum(local[k])
			server, onServer := c.serverSums[k]
			base, hasBase := st.Bases[k]
			switch {
			case onServer && server == sums[k]:
				if base != server {
					if err := st.setBase(k, local[k]); err != nil {
						return err
					}
				}
				res.Unchanged++
			case hasBase && base == sums[k] && onServer:
				res.Stale = append(res.Stale, k)
			case !onServer, hasBase && server == base:
				delta = append(delta, k)
			default:
				both = append(both, k)
			}
		}
		if len(both) > 0 && reconciledAt != c.etag {
			// Both sides changed some key: bring the server's entries in
			// (merging), then look again.
			c.progress("downloading", 0, 0)
			d, src, done, err := c.fetchEntries(ctx, st, nil)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("push %s: read the server's entries to merge: %w", c.repo, err)
			}
			if d != nil {
				c.learn(d)
				pr := newPullResult()
				err := c.reconcileAll(ctx, st, src, pr)
				done()
				res.Pulled = appendNew(res.Pulled, pr.Written...)
				res.Merged = appendNew(res.Merged, pr.Merged...)
				res.Conflicts = append(res.Conflicts, pr.Conflicts...)
				pullSkips = pr.Skipped
				if err != nil {
					return err
				}
			} else {
				c.serverSums, c.etag = map[string]string{}, ""
			}
			reconciledAt = c.etag
			continue
		}
		// Keys still changed on both sides could not be brought in (they
		// were skipped and reported): leave them for now.
		res.Stale = append(res.Stale, both...)
		if err := c.keepIndexLines(st, delta, local, sums); err != nil {
			return err
		}
		err = c.sendBatches(ctx, st, delta, local, sums, res, pushed)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			var tm *TooManyEntriesError
			if errors.As(err, &tm) && tm.Max > 0 {
				c.maxEntries = tm.Max
			}
			return fmt.Errorf("push %s: %w", c.repo, err)
		}
		if attempt >= MaxConflictRetries {
			return fmt.Errorf("push %s: still conflicting after %d retries; try again: %w", c.repo, MaxConflictRetries, err)
		}
		attempt++
		res.Retries++
		c.log.Info("push conflict; refreshing hashes", "repo", c.repo, "retry", attempt)
		if _, err := c.probe(ctx); err != nil {
			return err
		}
	}
}

// keepIndexLines applies the MEMORY.md rule to an index about to be sent
// over an unchanged server copy: a line the base had goes away only with
// its file. (An index restored by 'memdir undo', or edited by hand, would
// otherwise drop teammates' lines on the server.) The merged index is
// written locally first, journaled, and sent instead.
func (c *Client) keepIndexLines(st *syncState, delta []string, local, sums map[string]string) error {
	if !slices.Contains(delta, IndexKey) {
		return nil
	}
	base, ok := st.base(IndexKey)
	if !ok || c.serverSums[IndexKey] != st.Bases[IndexKey] {
		return nil
	}
	merged := MergeIndex(base, local[IndexKey], base, c.localHas, func(f string) bool { _, ok := c.serverSums[f]; return ok })
	if merged == local[IndexKey] {
		return nil
	}
	if err := c.writeTeamFile(filepath.Join(c.dir, IndexKey), merged); err != nil {
		return fmt.Errorf("push %s: %w", c.repo, err)
	}
	local[IndexKey], sums[IndexKey] = merged, EntryChecksum(merged)
	return nil
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	sort.Strings(list)
	return list
}

// sendBatches PUTs delta in batches, updating the client's view of the
// server and the bases after each success.
func (c *Client) sendBatches(ctx context.Context, st *syncState, delta []string, local, sums map[string]string, res *PushResult, pushed map[string]bool) error {
	sent := 0
	for _, batch := range batches(delta, local) {
		c.progress("pushing", sent, len(delta))
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
			if err := st.setBase(k, local[k]); err != nil {
				return err
			}
			pushed[k] = true
		}
		sent += len(batch)
		c.progress("pushing", sent, len(delta))
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
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if HiddenComponent(d.Name()) > 0 {
				// One report for the directory, not one per file (a .git
				// holds thousands).
				skips = append(skips, Skip{Key: key, Path: p, Reason: SkipInvalidKey, Detail: "a hidden directory: team memory holds no hidden files or directories"})
				return fs.SkipDir
			}
			return nil
		}
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
	err := c.wrap(ctx, "sync", func() (string, error) {
		var err error
		if res.Pull, err = c.pull(ctx, false); err != nil {
			return pullSummary(c.repo, res.Pull), err
		}
		res.Push, err = c.push(ctx)
		return pullSummary(c.repo, res.Pull) + "; " + pushSummary(c.repo, res.Push), err
	})
	return res, err
}

// Status compares the team directory with the server's hashes and the
// bases, and lists the open conflicts. It changes nothing.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &Status{Repo: c.repo, TeamDir: c.dir, LocalOnly: []string{}, Modified: []string{}, ServerChanged: []string{}, BothChanged: []string{}, ServerOnly: []string{}, Conflicts: []Conflict{}, Skipped: []Skip{}}
	d, err := c.probe(ctx)
	if err != nil {
		return nil, err
	}
	st.ServerEmpty = d == nil
	if d != nil {
		st.Version, st.Checksum = d.Version, d.Checksum
	}
	state, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	local, skips, err := c.readLocal()
	if err != nil {
		return nil, err
	}
	st.Skipped = append(make([]Skip, 0, len(skips)), skips...) // [] in JSON, not null
	skipped := map[string]bool{}
	for _, s := range skips {
		skipped[s.Key] = true
	}
	for _, k := range sortedKeys(local) {
		server, ok := c.serverSums[k]
		sum := EntryChecksum(local[k])
		base, hasBase := state.Bases[k]
		switch {
		case !ok:
			st.LocalOnly = append(st.LocalOnly, k)
		case server == sum:
			st.InSync++
		case hasBase && base == sum:
			st.ServerChanged = append(st.ServerChanged, k)
		case hasBase && base == server:
			st.Modified = append(st.Modified, k)
		default:
			st.BothChanged = append(st.BothChanged, k)
		}
	}
	for _, k := range sortedKeys(c.serverSums) {
		if _, ok := local[k]; ok || skipped[k] {
			continue
		}
		if err := checkVisible(k); err != nil {
			// Stored before the server refused such keys: a pull will
			// not write it.
			st.Skipped = append(st.Skipped, Skip{Key: k, Reason: SkipInvalidKey, Detail: err.(*KeyError).Reason})
			continue
		}
		st.ServerOnly = append(st.ServerOnly, k)
	}
	st.Conflicts = c.openConflicts(state)
	return st, nil
}

// openConflicts lists the conflicts still open: the team directory still
// holds the server's version the conflict left there, and the local copy
// is still there. Writing anything else into the team file (resolve
// --ours, an edit) closes one; undoing that reopens it.
func (c *Client) openConflicts(st *syncState) []Conflict {
	out := []Conflict{}
	for _, k := range sortedKeys(st.Conflicts) {
		r := st.Conflicts[k]
		if st.Bases[k] != r.Theirs {
			continue
		}
		if _, err := os.Lstat(st.copyPath(k)); err != nil {
			continue
		}
		cur, ok, err := readLocalFile(filepath.Join(c.dir, filepath.FromSlash(k)))
		if err != nil || !ok || EntryChecksum(cur) != r.Theirs {
			continue
		}
		out = append(out, c.conflictOf(st, k, r))
	}
	return out
}

// Conflicts lists the open conflicts without asking the server.
func (c *Client) Conflicts(ctx context.Context) ([]Conflict, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return c.openConflicts(st), nil
}

// ConflictTexts returns the three versions of an open conflict: the base
// ("" when there was none), yours (the local copy, as it is now: you may
// have edited it) and the server's (the team file).
func (c *Client) ConflictTexts(ctx context.Context, key string) (base, yours, theirs string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return "", "", "", err
	}
	defer unlock()
	cf, err := c.findConflict(st, key)
	if err != nil {
		return "", "", "", err
	}
	y, err := os.ReadFile(cf.LocalCopy)
	if err != nil {
		return "", "", "", fmt.Errorf("your version of %s: %w", key, err)
	}
	t, err := os.ReadFile(cf.Path)
	if err != nil {
		return "", "", "", fmt.Errorf("the server's version of %s: %w", key, err)
	}
	base, _ = st.blob(st.Conflicts[key].Base)
	return base, string(y), string(t), nil
}

// ErrNoConflict reports that the key has no open conflict.
var ErrNoConflict = fmt.Errorf("no open sync conflict on this key: %w", memdir.ErrNotFound)

func (c *Client) findConflict(st *syncState, key string) (*Conflict, error) {
	for _, cf := range c.openConflicts(st) {
		if cf.Key == key {
			return &cf, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", key, ErrNoConflict)
}

// Resolution says how [Client.Resolve] finishes a conflict.
type Resolution int

const (
	// ResolveOurs puts your version (the local copy, as it is now) into
	// the team directory; the next push uploads it.
	ResolveOurs Resolution = iota + 1
	// ResolveTheirs keeps the server's version in the team directory and
	// removes the local copy.
	ResolveTheirs
	// ResolveText puts the given text into the team directory; the next
	// push uploads it. It must hold no conflict markers.
	ResolveText
)

// Resolve finishes the open conflict on key. Every file it writes or
// removes is passed to BeforeWrite first: the team file for ResolveOurs
// and ResolveText, the local copy (under ConflictDir) for ResolveTheirs.
// It needs no server.
func (c *Client) Resolve(ctx context.Context, key string, how Resolution, text string) (*Conflict, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, unlock, err := openSyncState(ctx, c.stateDir, c.repo)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cf, err := c.findConflict(st, key)
	if err != nil {
		return nil, err
	}
	if how == ResolveOurs {
		b, err := os.ReadFile(cf.LocalCopy)
		if err != nil {
			return nil, fmt.Errorf("your version of %s: %w", key, err)
		}
		text, how = string(b), ResolveText
	}
	if how == ResolveText {
		if cur, _, _ := readLocalFile(cf.Path); cur == text {
			// The server's version after all: nothing to write.
			how = ResolveTheirs
		}
	}
	switch how {
	case ResolveText:
		if HasConflictMarkers(text) {
			return nil, fmt.Errorf("the new text of %s still holds conflict markers (%s ... %s): %w", key, MarkerOurs, MarkerTheirs, memdir.ErrInvalid)
		}
		if len(text) > MaxEntryBytes {
			return nil, fmt.Errorf("the new text of %s is %d bytes, over the %d-byte limit: %w", key, len(text), MaxEntryBytes, memdir.ErrInvalid)
		}
		if err := c.writeTeamFile(cf.Path, text); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", key, err)
		}
	case ResolveTheirs:
		if c.opts.BeforeWrite != nil {
			if err := c.opts.BeforeWrite(cf.LocalCopy); err != nil {
				return nil, fmt.Errorf("resolve %s: before removing %s: %w", key, cf.LocalCopy, err)
			}
		}
		if err := os.Remove(cf.LocalCopy); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", key, err)
		}
	default:
		return nil, fmt.Errorf("resolve %s: unknown resolution %d: %w", key, how, memdir.ErrInvalid)
	}
	return cf, st.save()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
