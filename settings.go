package memdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memdir/memdir/internal/jsonobj"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
)

// The settings keys behind Claude Code's /memory toggles.
const (
	KeyAutoMemoryEnabled = "autoMemoryEnabled"
	KeyAutoDreamEnabled  = "autoDreamEnabled"
)

// SettingValue is one boolean setting as Claude Code resolves it, and why.
type SettingValue struct {
	Key   string `json:"key"`
	Value bool   `json:"value"`
	// Source names what decided: "env", a settings source ("policy",
	// "flag", "local", "project", "user") or "default".
	Source string `json:"source"`
	// Path is the settings file that decided, "" for env and default.
	Path string `json:"path,omitempty"`
	// Reason says the same for a person.
	Reason string `json:"reason"`
}

// SettingsFileState is what one settings file holds of the memory keys.
type SettingsFileState struct {
	Source string   `json:"source"`
	Path   string   `json:"path"`
	Exists bool     `json:"exists"`
	Values Settings `json:"values"`
	// Error is why the file could not be read ("" when it could, or is absent).
	Error string `json:"error,omitempty"`
}

// MemorySettings are the /memory toggles as Claude Code resolves them.
type MemorySettings struct {
	AutoMemoryEnabled SettingValue `json:"autoMemoryEnabled"`
	AutoDreamEnabled  SettingValue `json:"autoDreamEnabled"`
	// UserSettings is the file the toggles are written to.
	UserSettings string `json:"user_settings"`
	// Files lists every settings file consulted, highest priority first.
	Files []SettingsFileState `json:"files"`
}

// ResolveMemorySettings evaluates autoMemoryEnabled and autoDreamEnabled the
// way Claude Code does. autoMemoryEnabled: the environment first
// (CLAUDE_CODE_DISABLE_AUTO_MEMORY, CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE),
// then the first settings file defining it in the order policy, flag,
// local, project, user, then on. autoDreamEnabled: the first settings file
// defining it, else a server-side flag memdir cannot see, which is off
// unless the server turns it on, so memdir reports off. Unreadable files are
// listed with their error and skipped, as Claude Code skips them.
func ResolveMemorySettings(opts *LocateOptions) (*MemorySettings, error) {
	if opts == nil {
		opts = &LocateOptions{}
	}
	l, err := Locate(opts)
	if err != nil {
		return nil, err
	}
	ms := &MemorySettings{UserSettings: UserSettingsPath(l.ConfigHome)}
	for _, sp := range l.SettingsPaths(opts) {
		st := SettingsFileState{Source: sp.Source, Path: sp.Path}
		s, err := ReadSettings(sp.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			st.Exists, st.Error = true, err.Error()
		default:
			st.Exists, st.Values = true, s
		}
		ms.Files = append(ms.Files, st)
	}

	// The values are Locate's; this adds which file decided.
	ms.AutoMemoryEnabled = SettingValue{Key: KeyAutoMemoryEnabled, Value: l.Enabled, Source: "env", Reason: l.EnabledReason}
	switch {
	case l.EnabledReason == "default":
		ms.AutoMemoryEnabled.Source = "default"
		ms.AutoMemoryEnabled.Reason = "no environment variable or settings file decides, so it is on"
	case strings.HasPrefix(l.EnabledReason, KeyAutoMemoryEnabled+"="):
		for _, f := range l.settings {
			if f.values.AutoMemoryEnabled != nil {
				ms.AutoMemoryEnabled.Source, ms.AutoMemoryEnabled.Path = f.source, f.path
				break
			}
		}
	}
	dream, reason := l.AutoDreamEnabled()
	ms.AutoDreamEnabled = SettingValue{Key: KeyAutoDreamEnabled, Value: dream, Source: "default",
		Reason: "not set in any settings file; Claude Code then follows a server-side flag that is off unless the server turns it on"}
	for _, f := range l.settings {
		if f.values.AutoDreamEnabled != nil {
			ms.AutoDreamEnabled.Source, ms.AutoDreamEnabled.Path, ms.AutoDreamEnabled.Reason = f.source, f.path, reason
			break
		}
	}
	return ms, nil
}

// SettingsUpdate sets one top-level key of a settings file to Value (JSON),
// or removes the key when Value is nil.
type SettingsUpdate struct {
	Key   string
	Value json.RawMessage
}

// maxSettingsBytes bounds a settings file memdir will rewrite.
const maxSettingsBytes = 4 << 20

// SetUserSettings writes updates into the user's settings file,
// UserSettingsPath(configHome), never a project's: Claude Code's /memory
// toggles write there too, and a checked-in project file is not the user's
// to change. Every other key is kept, in its order, with its value as
// written (numbers are not rounded through float64); the file is
// re-indented with two spaces, as Claude Code writes it. A file that is not
// a JSON object is an ErrInvalid error naming it, and is left untouched.
// The change is journaled in j (see EditExternalFile), so Dir.Undo
// restores the previous file byte for byte. It returns the run, or nil when
// the file already held these values.
func SetUserSettings(ctx context.Context, configHome string, updates []SettingsUpdate, j *Journal) (*JournalRun, error) {
	if configHome == "" {
		return nil, fmt.Errorf("settings: no configuration directory: %w", ErrInvalid)
	}
	for _, u := range updates {
		if u.Key == "" {
			return nil, fmt.Errorf("settings: empty key: %w", ErrInvalid)
		}
		if u.Value != nil && !json.Valid(u.Value) {
			return nil, fmt.Errorf("settings: the value for %q is not JSON: %w", u.Key, ErrInvalid)
		}
	}
	path := UserSettingsPath(configHome)
	var keys []string
	for _, u := range updates {
		keys = append(keys, u.Key)
	}
	return EditExternalFile(ctx, j, "settings", "settings: "+strings.Join(keys, ", "), path, func(old []byte, exists bool) ([]byte, error) {
		var obj jsonobj.Object
		if exists {
			var err error
			if obj, err = jsonobj.Parse(old); err != nil {
				return nil, fmt.Errorf("settings file %s: %v; fix or move it, memdir will not rewrite it: %w", path, err, ErrInvalid)
			}
		}
		for _, u := range updates {
			if u.Value == nil {
				obj = obj.Delete(u.Key)
			} else {
				obj = obj.Set(u.Key, u.Value)
			}
		}
		return obj.Render(), nil
	})
}

// EditExternalFile changes one file that lives outside any memory directory
// (a CLAUDE.md, CLAUDE.local.md or settings file) and journals it in j, the
// journal of the memory directory the change was made for, so that
// 'memdir log' lists it with the directory's other runs and Dir.Undo
// reverts it. edit receives the current content (nil and false when the
// file is missing) and returns the new content; an error from edit aborts
// with nothing written. A symlinked file is followed and its target
// replaced, so a CLAUDE.md linked to a shared file stays linked.
//
// The read-edit-replace happens under an flock on the file's directory and
// the file is replaced atomically, keeping its permissions (new files are
// 0600, new directories 0700). The run's root is that directory; it returns
// the finished run, or nil when the content did not change.
func EditExternalFile(ctx context.Context, j *Journal, kind, summary, path string, edit func(old []byte, exists bool) ([]byte, error)) (*JournalRun, error) {
	return editExternal(ctx, j, nil, kind, summary, path, edit)
}

// EditExternalFile is [EditExternalFile] as part of the open run r: the
// file is recorded in r (see [Recorder.BeforeIn]) and the change is undone
// with the run's other changes.
func (r *Recorder) EditExternalFile(ctx context.Context, path string, edit func(old []byte, exists bool) ([]byte, error)) error {
	_, err := editExternal(ctx, nil, r, "", "", path, edit)
	return err
}

// editExternal is EditExternalFile; with given set, the change joins that
// open run (recorded with Recorder.BeforeIn) and no run is returned.
func editExternal(ctx context.Context, j *Journal, given *Recorder, kind, summary, path string, edit func(old []byte, exists bool) ([]byte, error)) (*JournalRun, error) {
	if j == nil && given == nil {
		return nil, fmt.Errorf("edit %s: no journal to record the change in: %w", path, ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", path, err)
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("edit %s: it is a symlink whose target cannot be resolved: %w", abs, err)
		}
		abs = target
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if err := atomicfile.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("edit %s: %w", abs, err)
	}
	lock, err := flock.Acquire(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("edit %s: lock %s: %w", abs, dir, err)
	}
	defer lock.Unlock()

	var old []byte
	exists := false
	mode := fs.FileMode(0o600)
	switch fi, err := os.Lstat(abs); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("edit %s: %w", abs, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("edit %s: not a regular file; memdir will not replace it: %w", abs, ErrInvalid)
	case fi.Size() > maxSettingsBytes:
		return nil, fmt.Errorf("edit %s: %s is too large for memdir to rewrite (limit %s): %w", abs, FormatFileSize(int(fi.Size())), FormatFileSize(maxSettingsBytes), ErrInvalid)
	default:
		if old, err = os.ReadFile(abs); err != nil {
			return nil, fmt.Errorf("edit %s: %w", abs, err)
		}
		exists, mode = true, fi.Mode().Perm()
	}
	content, err := edit(old, exists)
	if err != nil {
		return nil, err
	}
	if exists && bytes.Equal(content, old) {
		return nil, nil
	}
	if given != nil {
		if err := given.BeforeIn(dir, base); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(abs, content, mode); err != nil {
			return nil, err
		}
		return nil, nil
	}
	rec, err := j.Begin(kind, dir)
	if err != nil {
		return nil, fmt.Errorf("edit %s: journal: %w", abs, err)
	}
	rec.SetSummary(summary)
	err = rec.Before(base)
	if err == nil {
		err = atomicfile.WriteFile(abs, content, mode)
	}
	return finishRun(rec, err)
}

// finishRun closes a run that ended with err (nil on success) and returns
// the run, or the first error of the change and of closing it.
func finishRun(rec *Recorder, err error) (*JournalRun, error) {
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return run, nil
}

// restoreExternal puts back the content a run recorded for f, a file
// outside the run's root, under an flock on its directory.
func (j *Journal) restoreExternal(ctx context.Context, f JournalFile) error {
	lock, err := flock.Acquire(ctx, f.Root)
	if err != nil {
		return fmt.Errorf("undo %s: lock %s: %w", f.abs(""), f.Root, err)
	}
	defer lock.Unlock()
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return fmt.Errorf("undo %s: %w", f.abs(""), err)
	}
	defer root.Close()
	if f.Before == "" {
		if err := root.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("undo: remove %s: %w", f.abs(""), err)
		}
		return nil
	}
	data, err := j.Blob(f.Before)
	if err != nil {
		return fmt.Errorf("undo %s: %w", f.abs(""), err)
	}
	mode := f.BeforeMode
	if mode == 0 {
		mode = 0o600
	}
	return atomicfile.WriteFileIn(root, f.Path, data, mode)
}

func (j *Journal) undoExternal(ctx context.Context, run *JournalRun, opts *UndoOptions) (*JournalRun, error) {
	if opts == nil {
		opts = &UndoOptions{}
	}
	if run.UndoneBy != "" {
		return nil, fmt.Errorf("run %s was already undone by run %s (undo that one to redo): %w", run.ID, run.UndoneBy, ErrInvalid)
	}
	changed := run.ChangedFiles()
	if len(changed) == 0 {
		return nil, fmt.Errorf("run %s changed nothing: %w", run.ID, ErrInvalid)
	}
	if err := atomicfile.MkdirAll(run.Root, 0o700); err != nil {
		return nil, fmt.Errorf("undo %s: %w", run.ID, err)
	}
	lock, err := flock.Acquire(ctx, run.Root)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	root, err := os.OpenRoot(run.Root)
	if err != nil {
		return nil, fmt.Errorf("undo %s: %w", run.ID, err)
	}
	defer root.Close()
	var conflicts, paths []string
	for _, f := range changed {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("undo %s: the journal names %q, which is not inside %s: %w", run.ID, f.Path, run.Root, ErrInvalid)
		}
		cur, err := memfile.HashFile(filepath.Join(run.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, fmt.Errorf("undo %s: %w", f.Path, err)
		}
		if cur != f.After {
			conflicts = append(conflicts, filepath.Join(run.Root, f.Path))
		}
		paths = append(paths, f.Path)
	}
	if len(conflicts) > 0 && !opts.Force {
		return nil, &ConflictError{RunID: run.ID, Paths: conflicts}
	}
	rec, err := j.Begin("undo", run.Root)
	if err != nil {
		return nil, err
	}
	rec.run.Undoes = run.ID
	rec.SetSummary("undo " + run.ID + " (" + run.Kind + ")")
	err = rec.Before(paths...)
	for i := len(changed) - 1; i >= 0 && err == nil; i-- {
		f := changed[i]
		if f.Before == "" {
			if rerr := root.Remove(f.Path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = fmt.Errorf("undo: remove %s: %w", f.Path, rerr)
			}
			continue
		}
		var data []byte
		if data, err = j.Blob(f.Before); err != nil {
			break
		}
		mode := f.BeforeMode
		if mode == 0 {
			mode = 0o600
		}
		err = atomicfile.WriteFileIn(root, f.Path, data, mode)
	}
	undo, err := finishRun(rec, err)
	if err != nil {
		return nil, err
	}
	if err := j.markUndone(run, undo.ID); err != nil {
		return undo, err
	}
	return undo, nil
}
