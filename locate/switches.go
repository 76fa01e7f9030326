package locate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/jsonobj"
)

// The settings keys behind Claude Code's /memory toggles.
const (
	KeyAutoMemoryEnabled = "autoMemoryEnabled"
	KeyAutoDreamEnabled  = "autoDreamEnabled"
)

// Setting is one boolean setting as Claude Code resolves it, and why.
type Setting struct {
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

// SettingsFile is what one settings file holds of the memory keys.
type SettingsFile struct {
	Source string   `json:"source"`
	Path   string   `json:"path"`
	Exists bool     `json:"exists"`
	Values Settings `json:"values"`
	// Error is why the file could not be read ("" when it could, or is absent).
	Error string `json:"error,omitempty"`
}

// MemorySettings holds the /memory toggles as Claude Code resolves them.
type MemorySettings struct {
	AutoMemoryEnabled Setting `json:"autoMemoryEnabled"`
	AutoDreamEnabled  Setting `json:"autoDreamEnabled"`
	// UserSettings is the file the toggles are written to.
	UserSettings string `json:"user_settings"`
	// Files lists every settings file consulted, highest priority first.
	Files []SettingsFile `json:"files"`
}

// ResolveSettings evaluates autoMemoryEnabled and autoDreamEnabled the
// way Claude Code does. autoMemoryEnabled: the environment first
// (CLAUDE_CODE_DISABLE_AUTO_MEMORY, CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE),
// then the first settings file defining it in the order policy, flag,
// local, project, user, then on. autoDreamEnabled: the first settings file
// defining it, else a server-side flag memdir cannot see, which is off
// unless the server turns it on, so memdir reports off. Unreadable files are
// listed with their error and skipped, as Claude Code skips them.
func ResolveSettings(opts *LocateOptions) (*MemorySettings, error) {
	if opts == nil {
		opts = &LocateOptions{}
	}
	l, err := Locate(opts)
	if err != nil {
		return nil, err
	}
	ms := &MemorySettings{UserSettings: UserSettingsPath(l.ConfigHome)}
	for _, sp := range l.SettingsPaths(opts) {
		st := SettingsFile{Source: sp.Source, Path: sp.Path}
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
	ms.AutoMemoryEnabled = Setting{Key: KeyAutoMemoryEnabled, Value: l.Enabled, Source: "env", Reason: l.EnabledReason}
	switch {
	case l.EnabledReason == "default":
		ms.AutoMemoryEnabled.Source = "default"
		ms.AutoMemoryEnabled.Reason = "no environment variable or settings file decides, so it is on"
	case strings.HasPrefix(l.EnabledReason, KeyAutoMemoryEnabled+"="):
		if f, ok := ms.deciding(func(s Settings) bool { return s.AutoMemoryEnabled != nil }); ok {
			ms.AutoMemoryEnabled.Source, ms.AutoMemoryEnabled.Path = f.Source, f.Path
		}
	}
	dream, reason := l.AutoDreamEnabled()
	ms.AutoDreamEnabled = Setting{Key: KeyAutoDreamEnabled, Value: dream, Source: "default",
		Reason: "not set in any settings file; Claude Code then follows a server-side flag that is off unless the server turns it on"}
	if f, ok := ms.deciding(func(s Settings) bool { return s.AutoDreamEnabled != nil }); ok {
		ms.AutoDreamEnabled.Source, ms.AutoDreamEnabled.Path, ms.AutoDreamEnabled.Reason = f.Source, f.Path, reason
	}
	return ms, nil
}

// deciding returns the highest-priority readable file whose values set
// holds for: the files Locate read, in the order it reads them.
func (ms *MemorySettings) deciding(set func(Settings) bool) (SettingsFile, bool) {
	for _, f := range ms.Files {
		if f.Exists && f.Error == "" && set(f.Values) {
			return f, true
		}
	}
	return SettingsFile{}, false
}

// SettingsUpdate sets one top-level key of a settings file to Value (JSON),
// or removes the key when Value is nil.
type SettingsUpdate struct {
	Key   string
	Value json.RawMessage
}

// SetUserSettings writes updates into the user's settings file,
// [UserSettingsPath](configHome), never a project's: Claude Code's /memory
// toggles write there too, and a checked-in project file is not the user's
// to change. Every other key is kept, in its order, with its value as
// written (numbers are not rounded through float64); the file is
// re-indented with two spaces, as Claude Code writes it. A file that is not
// a JSON object is an [memdir.ErrInvalid] error naming it, and is left untouched.
// The change is journaled in j (see [memdir.EditExternalFile]), so [memdir.Dir.Undo]
// restores the previous file byte for byte. It returns the run, or nil when
// the file already held these values.
func SetUserSettings(ctx context.Context, configHome string, updates []SettingsUpdate, j *memdir.Journal) (*memdir.JournalRun, error) {
	if configHome == "" {
		return nil, fmt.Errorf("settings: no configuration directory: %w", memdir.ErrInvalid)
	}
	for _, u := range updates {
		if u.Key == "" {
			return nil, fmt.Errorf("settings: empty key: %w", memdir.ErrInvalid)
		}
		if u.Value != nil && !json.Valid(u.Value) {
			return nil, fmt.Errorf("settings: the value for %q is not JSON: %w", u.Key, memdir.ErrInvalid)
		}
	}
	path := UserSettingsPath(configHome)
	var keys []string
	for _, u := range updates {
		keys = append(keys, u.Key)
	}
	return memdir.EditExternalFile(ctx, j, "settings", "settings: "+strings.Join(keys, ", "), path, func(old []byte, exists bool) ([]byte, error) {
		var obj jsonobj.Object
		if exists {
			var err error
			if obj, err = jsonobj.Parse(old); err != nil {
				return nil, fmt.Errorf("settings file %s: %v; fix or move it, memdir will not rewrite it: %w", path, err, memdir.ErrInvalid)
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
