package team

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
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/statedir"
)

// The sync state of one team directory and repository, kept outside the
// team directory (docs/format.md, "Team sync state"):
//
//	<state>/<owner>/<name>/state.json        bases and conflicts
//	<state>/<owner>/<name>/blobs/ab/<hex>    contents, by SHA-256
//	<state>/<owner>/<name>/conflicts/<key>   your version of a conflicting key
//
// Every call of a Client that reads or changes it holds an flock on the
// <owner>/<name> directory, so several processes (a watch and a manual
// push) may share one team directory.

const syncStateFormat = 1

// syncState is what a client and the server last agreed on.
type syncState struct {
	dir string

	Format int    `json:"format"`
	Repo   string `json:"repo"`
	// Bases maps a key to the checksum of its content at the last
	// successful pull or push (the base of a three-way merge).
	Bases map[string]string `json:"bases"`
	// Conflicts maps a key to the conflict recorded on it.
	Conflicts map[string]conflictRecord `json:"conflicts,omitempty"`
}

type conflictRecord struct {
	// Base is the checksum of the common base, "" when there was none
	// (the key had never been synced by this client).
	Base string `json:"base,omitempty"`
	// Theirs is the checksum of the server's version, written into team/.
	Theirs string `json:"theirs"`
	// Ours is the checksum of the local version, saved under conflicts/.
	Ours string    `json:"ours"`
	At   time.Time `json:"at"`
}

// openSyncState locks and reads the state of repo under root, creating the
// directory when needed. The caller must call the returned unlock.
func openSyncState(ctx context.Context, root, repo string) (*syncState, func(), error) {
	owner, name, _ := strings.Cut(repo, "/")
	dir := filepath.Join(root, owner, name)
	if err := atomicfile.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("team sync state %s: %w", dir, err)
	}
	lock, err := flock.Acquire(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	unlock := func() { lock.Unlock() }
	st := &syncState{dir: dir, Format: syncStateFormat, Repo: repo, Bases: map[string]string{}, Conflicts: map[string]conflictRecord{}}
	data, err := os.ReadFile(st.statePath())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, unlock, nil
	case err != nil:
		unlock()
		return nil, nil, fmt.Errorf("team sync state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil || st.Format != syncStateFormat || st.Repo != repo {
		unlock()
		if err == nil {
			err = fmt.Errorf("format %d for repository %q, want format %d for %q", st.Format, st.Repo, syncStateFormat, repo)
		}
		return nil, nil, fmt.Errorf("team sync state %s is unreadable (%v); it only speeds up and guards sync: move it away and the next pull starts over safely", st.statePath(), err)
	}
	if st.Bases == nil {
		st.Bases = map[string]string{}
	}
	if st.Conflicts == nil {
		st.Conflicts = map[string]conflictRecord{}
	}
	return st, unlock, nil
}

func (st *syncState) statePath() string { return filepath.Join(st.dir, "state.json") }

func (st *syncState) blobPath(sum string) string {
	h := strings.TrimPrefix(sum, "sha256:")
	if len(h) < 3 {
		h = "00" + h
	}
	return filepath.Join(st.dir, "blobs", h[:2], h)
}

// copyPath is where the local version of a conflicting key is kept.
func (st *syncState) copyPath(key string) string {
	return filepath.Join(st.dir, "conflicts", filepath.FromSlash(key))
}

// putBlob stores content and returns its checksum.
func (st *syncState) putBlob(content string) (string, error) {
	sum := EntryChecksum(content)
	p := st.blobPath(sum)
	if _, err := os.Stat(p); err == nil {
		return sum, nil
	}
	if err := atomicfile.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("team sync state: %w", err)
	}
	if err := atomicfile.WriteFile(p, []byte(content), 0o600); err != nil {
		return "", fmt.Errorf("team sync state: %w", err)
	}
	return sum, nil
}

// blob returns the content stored under sum; ok is false when it is
// missing or damaged (the key then has no usable base).
func (st *syncState) blob(sum string) (string, bool) {
	if sum == "" {
		return "", false
	}
	b, err := os.ReadFile(st.blobPath(sum))
	if err != nil || EntryChecksum(string(b)) != sum {
		return "", false
	}
	return string(b), true
}

// base returns the base content of key.
func (st *syncState) base(key string) (string, bool) {
	return st.blob(st.Bases[key])
}

// setBase records content as the base of key.
func (st *syncState) setBase(key, content string) error {
	sum, err := st.putBlob(content)
	if err != nil {
		return err
	}
	st.Bases[key] = sum
	return nil
}

// save writes state.json atomically, then removes the blobs nothing refers
// to any more.
func (st *syncState) save() error {
	for k, r := range st.Conflicts {
		// A conflict whose key was synced since is history: forget it.
		if st.Bases[k] != r.Theirs {
			delete(st.Conflicts, k)
		}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(st.statePath(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("team sync state: %w", err)
	}
	keep := map[string]bool{}
	for _, s := range st.Bases {
		keep[filepath.Base(st.blobPath(s))] = true
	}
	for _, r := range st.Conflicts {
		keep[filepath.Base(st.blobPath(r.Base))] = true
	}
	blobs := filepath.Join(st.dir, "blobs")
	filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !keep[d.Name()] && !isTempFile(d.Name()) {
			os.Remove(p)
		}
		return nil
	})
	return nil
}

// SyncStateDir returns where team sync keeps its state for one team
// directory (the content each key had at the last pull or push, and the
// local versions of conflicting keys): <state dir>/team-sync/<sanitised
// dir>, outside the memory directory so that neither Claude Code nor a push
// ever reads it.
func SyncStateDir(teamDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statedir.For(lookup, "team-sync", teamDir, "")
}

// SyncRecord is what the sync state of a team directory says about one
// repository it was synced with.
type SyncRecord struct {
	Repo string
	// At is when the state was last written: the end of the last pull
	// or push (each writes it, whatever it changed).
	At time.Time
	// Keys counts the keys with a base: those synced at least once.
	Keys int
	// Conflicts counts the open conflicts.
	Conflicts int
}

// SyncRecords reads the sync state of teamDir for every repository it was
// synced with, sorted by repository, for a report (memdir status). It
// takes no lock and writes nothing: the state file is replaced
// atomically, so it is read whole, as of one pull or push. A state that
// does not parse is left out; none at all is an empty list.
func SyncRecords(teamDir string, lookup memdir.LookupEnvFunc) ([]SyncRecord, error) {
	root, err := SyncStateDir(teamDir, lookup)
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "state.json"))
	if err != nil {
		return nil, err
	}
	out := []SyncRecord{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var st syncState
		if json.Unmarshal(data, &st) != nil || st.Format != syncStateFormat || st.Repo == "" {
			continue
		}
		out = append(out, SyncRecord{Repo: st.Repo, At: fi.ModTime(), Keys: len(st.Bases), Conflicts: len(st.Conflicts)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo < out[j].Repo })
	return out, nil
}
