package locate

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/jsonobj"
)

func mustOpen(tb testing.TB) *memdir.Dir {
	tb.Helper()
	base := tb.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func mustSave(tb testing.TB, d *memdir.Dir, m *memdir.Memory, opts *memdir.SaveOptions) *memdir.SaveResult {
	tb.Helper()
	res, err := d.Save(context.Background(), m, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func TestResolve(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := t.TempDir()
	project, _ = filepath.EvalSymlinks(project)
	policy := filepath.Join(t.TempDir(), "managed.json")
	user := filepath.Join(home, ".claude", "settings.json")
	proj := filepath.Join(project, ".claude", "settings.json")
	local := filepath.Join(project, ".claude", "settings.local.json")

	type want struct {
		mem, dream         bool
		memSrc, dreamSrc   string
		memPath, dreamPath string
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  want
	}{
		{"defaults", nil, nil, want{mem: true, memSrc: "default", dreamSrc: "default"}},
		{"user file", nil, map[string]string{user: `{"autoMemoryEnabled": false, "autoDreamEnabled": true}`},
			want{mem: false, memSrc: "user", memPath: user, dream: true, dreamSrc: "user", dreamPath: user}},
		{"the project opts out over the user", nil, map[string]string{user: `{"autoMemoryEnabled": true}`, proj: `{"autoMemoryEnabled": false}`},
			want{mem: false, memSrc: "project", memPath: proj, dreamSrc: "default"}},
		{"local beats project, policy beats all", nil, map[string]string{proj: `{"autoDreamEnabled": false}`, local: `{"autoDreamEnabled": true}`, policy: `{"autoMemoryEnabled": true}`, user: `{"autoMemoryEnabled": false}`},
			want{mem: true, memSrc: "policy", memPath: policy, dream: true, dreamSrc: "local", dreamPath: local}},
		{"the environment beats settings", map[string]string{EnvDisableAutoMem: "1"}, map[string]string{user: `{"autoMemoryEnabled": true}`},
			want{mem: false, memSrc: "env", dreamSrc: "default"}},
		{"a broken file is skipped", nil, map[string]string{proj: `{"autoMemoryEnabled": fals`, user: `{"autoMemoryEnabled": false}`},
			want{mem: false, memSrc: "user", memPath: user, dreamSrc: "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{user, proj, local, policy} {
				os.Remove(p)
			}
			for p, c := range tc.files {
				writeJSON(t, p, c)
			}
			env := map[string]string{"HOME": home}
			maps.Copy(env, tc.env)
			ms, err := ResolveSettings(&LocateOptions{LookupEnv: envMap(env), Cwd: project, PolicySettings: policy})
			if err != nil {
				t.Fatal(err)
			}
			got := want{ms.AutoMemoryEnabled.Value, ms.AutoDreamEnabled.Value, ms.AutoMemoryEnabled.Source, ms.AutoDreamEnabled.Source, ms.AutoMemoryEnabled.Path, ms.AutoDreamEnabled.Path}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if ms.UserSettings != user {
				t.Errorf("UserSettings = %s, want %s", ms.UserSettings, user)
			}
			if ms.AutoMemoryEnabled.Reason == "" || ms.AutoDreamEnabled.Reason == "" {
				t.Errorf("reasons missing: %+v", ms)
			}
			var broken []string
			for _, f := range ms.Files {
				if f.Error != "" {
					broken = append(broken, f.Path)
				}
			}
			var wantBroken []string
			if strings.HasSuffix(tc.files[proj], "fals") {
				wantBroken = []string{proj}
			}
			if diff := cmp.Diff(wantBroken, broken); diff != "" {
				t.Errorf("files with errors (-want +got):\n%s", diff)
			}
		})
	}
}

func newTestJournal(tb testing.TB) *memdir.Journal {
	tb.Helper()
	return memdir.NewJournal(filepath.Join(tb.TempDir(), "journal"), nil)
}

func boolJSON(b bool) json.RawMessage {
	if b {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

func TestSetUserPreservesOtherKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		before  string // "" means no file
		updates []SettingsUpdate
		want    string
	}{
		{"creates the file", "", []SettingsUpdate{{KeyAutoMemoryEnabled, boolJSON(false)}},
			"{\n  \"autoMemoryEnabled\": false\n}\n"},
		{"keeps unknown keys, their order and exact numbers",
			`{"model":"opus","permissions":{"allow":["Bash(ls:*)","Read"],"deny":[]},"autoMemoryEnabled":true,"big":12345678901234567890,"f":1.50,"html":"<b>&</b>","unicode":"café ☕","env":{}}`,
			[]SettingsUpdate{{KeyAutoMemoryEnabled, boolJSON(false)}, {KeyAutoDreamEnabled, boolJSON(true)}},
			`{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(ls:*)",
      "Read"
    ],
    "deny": []
  },
  "autoMemoryEnabled": false,
  "big": 12345678901234567890,
  "f": 1.50,
  "html": "<b>&</b>",
  "unicode": "café ☕",
  "env": {},
  "autoDreamEnabled": true
}
`},
		{"removes a key", "{\n  \"autoDreamEnabled\": true,\n  \"theme\": \"dark\"\n}\n", []SettingsUpdate{{KeyAutoDreamEnabled, nil}},
			"{\n  \"theme\": \"dark\"\n}\n"},
		{"an empty file is an empty object", "  \n", []SettingsUpdate{{KeyAutoDreamEnabled, boolJSON(true)}},
			"{\n  \"autoDreamEnabled\": true\n}\n"},
		{"a byte order mark is dropped", "\xef\xbb\xbf{\"a\": 1}", []SettingsUpdate{{KeyAutoDreamEnabled, boolJSON(false)}},
			"{\n  \"a\": 1,\n  \"autoDreamEnabled\": false\n}\n"},
		// Readers disagree on which repeat counts; one key leaves no doubt.
		{"a repeated key is set once", `{"autoMemoryEnabled": true, "x": 1, "autoMemoryEnabled": true}`, []SettingsUpdate{{KeyAutoMemoryEnabled, boolJSON(false)}},
			"{\n  \"autoMemoryEnabled\": false,\n  \"x\": 1\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), ".claude")
			path := UserSettingsPath(home)
			if tc.before != "" {
				writeJSON(t, path, tc.before)
			}
			j := newTestJournal(t)
			run, err := SetUserSettings(ctx, home, tc.updates, j)
			if err != nil {
				t.Fatal(err)
			}
			got := readFile(t, path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("settings.json (-want +got):\n%s", diff)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("wrote invalid JSON")
			}
			if run == nil || run.Kind != "settings" || len(run.ChangedFiles()) != 1 || run.Root != home {
				t.Fatalf("run = %+v", run)
			}
			// Setting the same values again changes nothing and records nothing.
			if again, err := SetUserSettings(ctx, home, tc.updates, j); err != nil || again != nil {
				t.Errorf("second identical write: run %+v, err %v", again, err)
			}
		})
	}
}

func TestSetUserRefusesBadFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"truncated", "{\n  \"model\": \"opus\",\n  \"autoMemoryEnabled\": tru", "line 3"},
		{"array", `["autoMemoryEnabled"]`, "not a JSON object (it is an array)"},
		{"trailing data", `{"a":1} {"b":2}`, "after top-level value"},
		{"comments", "{\n  // mine\n  \"a\": 1\n}", "line 2"},
		{"null", "null", "not a JSON object (it is null)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := UserSettingsPath(home)
			writeJSON(t, path, tc.content)
			j := newTestJournal(t)
			_, err := SetUserSettings(ctx, home, []SettingsUpdate{{KeyAutoMemoryEnabled, boolJSON(false)}}, j)
			if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want memdir.ErrInvalid naming %s and %q", err, path, tc.want)
			}
			if got := readFile(t, path); got != tc.content {
				t.Errorf("the file changed: %q", got)
			}
			if runs, _ := j.Runs(); len(runs) != 0 {
				t.Errorf("a failed write left %d journal runs", len(runs))
			}
		})
	}
	if _, err := SetUserSettings(ctx, t.TempDir(), []SettingsUpdate{{"k", json.RawMessage("{")}}, newTestJournal(t)); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("invalid value: %v", err)
	}
}

func TestSettingsUndoAndSymlinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	home := t.TempDir()
	dotfiles := t.TempDir()
	target := filepath.Join(dotfiles, "claude-settings.json")
	original := "{\"theme\":\"light\",   \"autoMemoryEnabled\":true}"
	writeJSON(t, target, original)
	os.Chmod(target, 0o640)
	link := UserSettingsPath(home)
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	run, err := SetUserSettings(ctx, home, []SettingsUpdate{{KeyAutoMemoryEnabled, boolJSON(false)}}, d.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the settings symlink was replaced by a file")
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
	if got := readFile(t, target); !strings.Contains(got, `"autoMemoryEnabled": false`) {
		t.Errorf("target = %q", got)
	}
	// The run sits in the memory directory's journal and Undo reverts it
	// byte for byte; the undo is itself undoable.
	runs, _ := d.Journal().Runs()
	if len(runs) != 1 || runs[0].ID != run.ID {
		t.Fatalf("journal runs = %v", runs)
	}
	undo, err := d.Undo(ctx, run.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); got != original {
		t.Errorf("after undo: %q, want %q", got, original)
	}
	if _, err := d.Undo(ctx, run.ID, nil); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("undoing twice: %v", err)
	}
	if _, err := d.Undo(ctx, undo.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); !strings.Contains(got, `"autoMemoryEnabled": false`) {
		t.Errorf("after redo: %q", got)
	}

	// A later edit is not clobbered without Force.
	run2, err := SetUserSettings(ctx, home, []SettingsUpdate{{KeyAutoDreamEnabled, boolJSON(true)}}, d.Journal())
	if err != nil {
		t.Fatal(err)
	}
	writeJSON(t, target, `{"edited":"by hand"}`)
	var ce *memdir.ConflictError
	if _, err := d.Undo(ctx, run2.ID, nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), target) {
		t.Errorf("undo over a later edit: %v", err)
	}
	if _, err := d.Undo(ctx, run2.ID, &memdir.UndoOptions{Force: true}); err != nil {
		t.Errorf("forced undo: %v", err)
	}

	// Undo still handles runs of the directory itself.
	res := mustSave(t, d, &memdir.Memory{Name: "n", Description: "d", Type: memdir.TypeUser, Body: "b"}, nil)
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Abs(res.Path)); !os.IsNotExist(err) {
		t.Errorf("undo of a save left the file: %v", err)
	}
}

// FuzzSettingsObject checks that any JSON object memdir can read it writes
// back as valid JSON meaning the same thing, with the keys in their order.
func FuzzSettingsObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,2,{"c":null}]}`, `{"n":1e400}`, `{"s":"\u2028<>&"}`, "\xef\xbb\xbf{\"x\":true}", `{"a":1,"a":2}`, `[]`, `{"a":}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := jsonobj.Parse(data)
		if err != nil {
			return
		}
		out := ms.Render()
		if !json.Valid(out) {
			t.Fatalf("rendered invalid JSON %q from %q", out, data)
		}
		again, err := jsonobj.Parse(out)
		if err != nil {
			t.Fatalf("cannot re-read %q: %v", out, err)
		}
		if len(again) != len(ms) {
			t.Fatalf("%d keys became %d", len(ms), len(again))
		}
		for i := range ms {
			if again[i].Key != ms[i].Key {
				t.Fatalf("key %d: %q became %q", i, ms[i].Key, again[i].Key)
			}
			var a, b any
			if json.Unmarshal(ms[i].Value, &a) == nil && json.Unmarshal(again[i].Value, &b) == nil && !cmp.Equal(a, b) {
				t.Fatalf("value of %q changed: %s → %s", ms[i].Key, ms[i].Value, again[i].Value)
			}
		}
	})
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}
