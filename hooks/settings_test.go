package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testEntries = []Entry{
	{Event: SessionStart, Command: "/bin/memdir hook", Timeout: 10},
	{Event: UserPromptSubmit, Command: "/bin/memdir hook", Timeout: 10},
	{Event: PreToolUse, Matcher: "Edit|Write|MultiEdit|NotebookEdit", Command: "/bin/memdir hook", Timeout: 10},
	{Event: Stop, Command: "/bin/memdir hook"},
}

func compactString(tb testing.TB, data []byte) string {
	tb.Helper()
	c, err := Compact(data)
	if err != nil {
		tb.Fatalf("%v:\n%s", err, data)
	}
	return string(c)
}

func TestInstall(t *testing.T) {
	const ours = `{"type":"command","command":"/bin/memdir hook","timeout":10}`
	const stop = `"Stop":[{"hooks":[{"type":"command","command":"/bin/memdir hook"}]}]`
	tests := []struct {
		name, in, want string
		changes        Changes
	}{
		{
			name:    "empty file",
			in:      "",
			want:    `{"hooks":{"SessionStart":[{"hooks":[` + ours + `]}],"UserPromptSubmit":[{"hooks":[` + ours + `]}],"PreToolUse":[{"matcher":"Edit|Write|MultiEdit|NotebookEdit","hooks":[` + ours + `]}],` + stop + `}}`,
			changes: Changes{Added: []string{SessionStart, UserPromptSubmit, PreToolUse, Stop}},
		},
		{
			name:    "other hooks and keys stay first and as written",
			in:      "\ufeff{\"a\": 1.50, \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}, \"z\": {\"k\": [1e3]}}",
			want:    `{"a":1.50,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]},{"hooks":[{"type":"command","command":"/bin/memdir hook"}]}],"SessionStart":[{"hooks":[` + ours + `]}],"UserPromptSubmit":[{"hooks":[` + ours + `]}],"PreToolUse":[{"matcher":"Edit|Write|MultiEdit|NotebookEdit","hooks":[` + ours + `]}]},"z":{"k":[1e3]}}`,
			changes: Changes{Added: []string{Stop, SessionStart, UserPromptSubmit, PreToolUse}},
		},
		{
			name: "update in place, keep user keys, drop args and stale entries",
			in: `{"hooks":{
				"UserPromptSubmit":[{"matcher":"*","hooks":[{"type":"command","command":"x"},{"command":"memdir","args":["hook","--old"],"statusMessage":"recall","timeout":99}]}],
				"PostToolUse":[{"hooks":[{"type":"command","command":"memdir hook"}]}],
				"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/old/memdir hook"},{"type":"command","command":"lint"}]}],
				"SessionStart":[{"hooks":[` + ours + `]},{"hooks":[{"type":"command","command":"memdir hook --dup"}]}],
				"Stop":[{"hooks":[{"type":"command","command":"/bin/memdir hook"}]}]}}`,
			want: `{"hooks":{` +
				`"UserPromptSubmit":[{"matcher":"*","hooks":[{"type":"command","command":"x"},{"command":"/bin/memdir hook","statusMessage":"recall","timeout":10,"type":"command"}]}],` +
				`"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"lint"}]},{"matcher":"Edit|Write|MultiEdit|NotebookEdit","hooks":[` + ours + `]}],` +
				`"SessionStart":[{"hooks":[` + ours + `]}],` + stop + `}}`,
			changes: Changes{Added: []string{PreToolUse}, Updated: []string{UserPromptSubmit}, Unchanged: []string{SessionStart, Stop}, Removed: []string{"PostToolUse", PreToolUse, SessionStart}},
		},
		{
			name:    "groups memdir cannot read are kept",
			in:      `{"hooks":{"Stop":["odd",{"hooks":"x"},{"matcher":1,"hooks":[{"type":"command","command":"/bin/memdir hook"}]}],"Setup":[]}}`,
			want:    `{"hooks":{"Stop":["odd",{"hooks":"x"},{"matcher":1,"hooks":[{"type":"command","command":"/bin/memdir hook"}]}],"Setup":[],"SessionStart":[{"hooks":[` + ours + `]}],"UserPromptSubmit":[{"hooks":[` + ours + `]}],"PreToolUse":[{"matcher":"Edit|Write|MultiEdit|NotebookEdit","hooks":[` + ours + `]}]}}`,
			changes: Changes{Unchanged: []string{Stop}, Added: []string{SessionStart, UserPromptSubmit, PreToolUse}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ch, err := Install([]byte(tt.in), testEntries)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, compactString(t, got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(&tt.changes, ch); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			again, ch2, err := Install(got, testEntries)
			if err != nil || string(again) != string(got) || ch2.Changed() {
				t.Errorf("second install: %v, changed %+v:\n%s", err, ch2, again)
			}
			if !strings.HasSuffix(string(got), "}\n") || !strings.Contains(string(got), "\n  \"hooks\": {\n    \"") {
				t.Errorf("not indented with two spaces:\n%s", got)
			}
		})
	}
}

func TestUninstall(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"only memdir", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"memdir hook"}]}]}}`, `{}`},
		{"nothing of memdir", `{"hooks":{},"x":[]}`, `{"hooks":{},"x":[]}`},
		{"shared group", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"},{"type":"command","command":"memdir hook"}]}]},"y":1}`,
			`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]},"y":1}`},
		{"prompt type handler is not ours", `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","command":"memdir hook","prompt":"p"}]}]}}`,
			`{"hooks":{"Stop":[{"hooks":[{"type":"prompt","command":"memdir hook","prompt":"p"}]}]}}`},
		{"an empty group stays", `{"hooks":{"Stop":[{"hooks":[]}]}}`, `{"hooks":{"Stop":[{"hooks":[]}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Uninstall([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, compactString(t, got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstallErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1,}`, "not valid JSON: line 1: invalid character '}'"},
		{"{\n\"a\": 1\n\n\"b\": 2}", "not valid JSON: line 4: invalid character '\"' after object key:value pair"},
		{`{"a":1} x`, "not valid JSON: line 1"},
		{`[]`, "not a JSON object (it is an array)"},
		{`"x"`, "not a JSON object (it is a string)"},
		{`{"hooks":null}`, "key hooks: not a JSON object (it is null)"},
		{`{"hooks":{"Stop":{}}}`, "key hooks.Stop: not a JSON array (it is an object)"},
		{`{"hooks":{},"hooks":{}}`, "key hooks appears twice"},
	}
	for _, tt := range tests {
		for _, op := range []func([]byte) ([]byte, *Changes, error){
			func(d []byte) ([]byte, *Changes, error) { return Install(d, testEntries) },
			Uninstall,
		} {
			if _, _, err := op([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
			}
		}
	}
}

// withoutEmpty decodes settings and drops an empty "hooks" object and
// empty event arrays, which Install then Uninstall cannot tell from ones
// memdir's removals emptied.
func withoutEmpty(tb testing.TB, data []byte) any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		tb.Fatalf("%v:\n%s", err, data)
	}
	if h, ok := v["hooks"].(map[string]any); ok {
		for k, ev := range h {
			if a, ok := ev.([]any); ok && len(a) == 0 {
				delete(h, k)
			}
		}
		if len(h) == 0 {
			delete(v, "hooks")
		}
	}
	return v
}

// FuzzInstall: whatever the settings file, Install either refuses it or
// gives JSON that a second Install leaves byte for byte, and Uninstall
// after Install gives what Uninstall alone gives.
func FuzzInstall(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"hooks":{}}`, `{"a":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"memdir hook"}]}]}}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"/x/memdir hook --y","timeout":3},{"command":"z"}]}]}}`,
		`{"hooks":{"Stop":[1,"a",{"hooks":{}}]}}`, `[1]`, `{"hooks":{"Stop":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		once, _, err := Install(data, testEntries)
		if err != nil {
			return
		}
		if !json.Valid(once) {
			t.Fatalf("Install gave invalid JSON:\n%s", once)
		}
		twice, ch, err := Install(once, testEntries)
		if err != nil || string(twice) != string(once) || ch.Changed() {
			t.Fatalf("second Install: %v, %+v\n%s\n->\n%s", err, ch, once, twice)
		}
		back, _, err := Uninstall(once)
		if err != nil {
			t.Fatalf("Uninstall after Install: %v", err)
		}
		direct, _, err := Uninstall(data)
		if err != nil {
			t.Fatalf("Uninstall: %v", err)
		}
		if diff := cmp.Diff(withoutEmpty(t, direct), withoutEmpty(t, back)); diff != "" {
			t.Fatalf("Uninstall(Install(x)) differs from Uninstall(x) (-direct +after install):\n%s", diff)
		}
	})
}
