package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/locate"
)

// Session is what the UserPromptSubmit hook remembers about one Claude Code
// session between prompts: the memories it has put in context, so none is
// injected twice, and their bytes, counted against the session's budget.
type Session struct {
	ID string `json:"session_id"`
	// Surfaced are absolute paths of the memories injected so far, in
	// the order they were.
	Surfaced []string `json:"surfaced"`
	// Bytes is the size of the memory content injected so far.
	Bytes int `json:"bytes"`
	// Prompts counts the prompts that injected something.
	Prompts int       `json:"prompts"`
	Updated time.Time `json:"updated"`
}

// SessionStore keeps one small JSON file per session in a directory
// (memdir's state directory, hooks/sessions/). Files are replaced
// atomically (not synced: see Add), and updates are merged under an
// flock on the directory, so concurrent hooks of one session, in any
// number of processes on one machine, never lose a surfaced memory. On network filesystems flock may
// not exclude, and a concurrent update may then be lost; the worst outcome
// is a memory shown twice.
type SessionStore struct {
	dir string
}

// NewSessionStore returns the store in dir, which is created on first write.
func NewSessionStore(dir string) *SessionStore { return &SessionStore{dir: dir} }

// DefaultSessionDir is hooks/sessions under memdir's state directory.
func DefaultSessionDir(lookup memdir.LookupEnvFunc) (string, error) {
	state, err := locate.StateDir(lookup)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "hooks", "sessions"), nil
}

// DefaultLogDir is hooks/logs under memdir's state directory: the output
// of background extraction and consolidation started by the hooks, one
// file per session.
func DefaultLogDir(lookup memdir.LookupEnvFunc) (string, error) {
	state, err := locate.StateDir(lookup)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "hooks", "logs"), nil
}

// Path returns the file holding session id.
func (s *SessionStore) Path(id string) string { return filepath.Join(s.dir, id+".json") }

// Load returns the session's state; a session never seen is empty. A file
// that cannot be read or parsed is an error naming it.
func (s *SessionStore) Load(id string) (*Session, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", err, memdir.ErrInvalid)
	}
	sess, err := s.read(id)
	if errors.Is(err, fs.ErrNotExist) {
		return &Session{ID: id, Surfaced: []string{}}, nil
	}
	return sess, err
}

func (s *SessionStore) read(id string) (*Session, error) {
	p := s.Path(id)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var sess Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return nil, fmt.Errorf("session state %s is not valid JSON (%v); remove it to start the session's recall afresh: %w", p, err, memdir.ErrInvalid)
	}
	if sess.ID != id {
		return nil, fmt.Errorf("session state %s belongs to session %q, not %q; remove it: %w", p, sess.ID, id, memdir.ErrInvalid)
	}
	if sess.Surfaced == nil {
		sess.Surfaced = []string{}
	}
	return &sess, nil
}

// Add records memories injected into session id and their bytes, merging
// with whatever other processes recorded since Load. A file that cannot be
// parsed is kept beside the new one as <file>.corrupt rather than lost.
func (s *SessionStore) Add(ctx context.Context, id string, surfaced []string, bytes int, now time.Time) (*Session, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, fmt.Errorf("%w: %w", err, memdir.ErrInvalid)
	}
	if err := atomicfile.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session state: %w", err)
	}
	lock, err := flock.Acquire(ctx, s.dir)
	if err != nil {
		return nil, fmt.Errorf("session state: %w", err)
	}
	defer lock.Unlock()
	sess, err := s.read(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		sess = &Session{ID: id, Surfaced: []string{}}
	case errors.Is(err, memdir.ErrInvalid):
		if rerr := os.Rename(s.Path(id), s.Path(id)+".corrupt"); rerr != nil {
			return nil, fmt.Errorf("%w (and it cannot be moved aside: %v)", err, rerr)
		}
		sess = &Session{ID: id, Surfaced: []string{}}
	case err != nil:
		return nil, fmt.Errorf("session state: %w", err)
	}
	for _, p := range surfaced {
		if !slices.Contains(sess.Surfaced, p) {
			sess.Surfaced = append(sess.Surfaced, p)
		}
	}
	sess.Bytes += bytes
	if len(surfaced) > 0 {
		sess.Prompts++
	}
	sess.Updated = now.UTC()
	data, err := json.MarshalIndent(sess, "", "  ")
	if err != nil {
		return nil, err
	}
	// Replaced atomically but not synced: the state is advisory (its loss
	// in a power failure at worst shows a memory twice), and every prompt
	// writes it, where two fsyncs (the file and its directory) are
	// F_FULLFSYNC on macOS, milliseconds each. A file torn by a power
	// failure is moved aside as <file>.corrupt above.
	if err := atomicfile.ReplaceNoSync(s.Path(id), append(data, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("session state: %w", err)
	}
	return sess, nil
}

// Prune removes the regular files directly in dir last modified before
// cutoff (session state and logs of sessions long over), and returns how
// many it removed. A missing directory has nothing to prune. Only names
// ending in one of suffixes are considered.
func Prune(dir string, cutoff time.Time, suffixes ...string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", dir, err)
	}
	n := 0
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() || !slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(e.Name(), s) }) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
