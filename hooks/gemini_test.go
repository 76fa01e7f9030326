package hooks

import (
	"strings"
	"testing"
)

var geminiEntries = []Entry{
	{Event: SessionStart, Command: "memdir hook --agent gemini --inject-index", Timeout: 10000, Name: GeminiHookName},
	{Event: "BeforeAgent", Command: "memdir hook --agent gemini", Timeout: 10000, Name: GeminiHookName},
	{Event: "BeforeTool", Matcher: "write_file|replace", Command: "memdir hook --agent gemini", Timeout: 10000, Name: GeminiHookName},
}

func TestInstallGemini(t *testing.T) {
	tests := []struct {
		name, in     string
		enabledAdded bool
		warn         string
	}{
		{name: "no file", enabledAdded: true},
		{name: "other keys and hooks", in: "{\n  \"model\": {\"name\": \"gemini-2.5-flash\"},\n  \"hooks\": {\"BeforeAgent\": [{\"hooks\": [{\"name\": \"mine\", \"type\": \"command\", \"command\": \"./mine.sh\"}]}]}\n}\n", enabledAdded: true},
		{name: "enabled already", in: `{"hooksConfig": {"enabled": true, "notifications": false}}`},
		{name: "turned off", in: `{"hooksConfig": {"enabled": false}}`, warn: "hooksConfig.enabled is false"},
		{name: "memdir disabled", in: `{"hooksConfig": {"disabled": ["memdir"]}}`, enabledAdded: true, warn: `hooksConfig.disabled lists "memdir"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ch, err := InstallGemini([]byte(tt.in), geminiEntries)
			if err != nil {
				t.Fatal(err)
			}
			if ch.EnabledAdded != tt.enabledAdded || (tt.warn == "") != (len(ch.Warnings) == 0) || tt.warn != "" && !strings.Contains(ch.Warnings[0], tt.warn) {
				t.Errorf("changes %+v %v", ch, ch.Warnings)
			}
			if !strings.Contains(string(out), `"name": "memdir",`+"\n            \"type\": \"command\"") {
				t.Errorf("handlers are not named:\n%s", out)
			}
			st, err := ReadGemini(out)
			if err != nil || st.Enabled == nil || *st.Enabled != !strings.Contains(tt.warn, "enabled is false") {
				t.Errorf("status %+v, %v:\n%s", st, err, out)
			}
			// Nothing else changed since: uninstall puts the file back as it was.
			back, remove, ok := Restore(out, []byte(tt.in), tt.in != "", func(d []byte, es []Entry) ([]byte, error) {
				b, _, err := InstallGemini(d, es)
				return b, err
			})
			if !ok || string(back) != tt.in || remove != (tt.in == "") {
				t.Errorf("Restore = %q, remove %t, ok %t; want the original back", back, remove, ok)
			}
		})
	}
}

func TestRestoreOnlyWhenUntouched(t *testing.T) {
	orig := []byte("{\n    \"theme\": \"dark\"\n}\n") // four spaces: not how memdir writes
	install := func(d []byte, es []Entry) ([]byte, error) { b, _, err := Install(d, es); return b, err }
	out, err := install(orig, geminiEntries[:1])
	if err != nil {
		t.Fatal(err)
	}
	if back, _, ok := Restore(out, orig, true, install); !ok || string(back) != string(orig) {
		t.Errorf("Restore of an untouched install = %q, %t", back, ok)
	}
	edited := []byte(strings.Replace(string(out), `"dark"`, `"light"`, 1))
	if _, _, ok := Restore(edited, orig, true, install); ok {
		t.Errorf("Restore of a file edited since the install succeeded")
	}
	// A backup that still has memdir's hooks (an install over an install)
	// is not what the file was before memdir.
	if _, _, ok := Restore(out, out, true, install); ok {
		t.Errorf("Restore from a backup with memdir's hooks succeeded")
	}
	if _, _, ok := Restore(orig, nil, false, install); ok {
		t.Errorf("Restore of a file without memdir's hooks succeeded")
	}
}
