package hooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hashes Codex CLI 0.169.0 reported (hooks/list) for these hooks; the
// full table is memdirtest's TestCodexHookHash.
func TestCodexHookHashKnown(t *testing.T) {
	if got := CodexHookHash("SessionEnd", "", "/tmp/explore/cx/hook.sh", CodexTimeout("SessionEnd", 10), ""); got != "sha256:ecdfbe4e90458585e731cfb1ac4d8eefa8fb3e8786e6ea9056d232a61aec58a5" {
		t.Errorf("SessionEnd hash %s", got)
	}
	if got := CodexHookHash("PreToolUse", "apply_patch|Edit", "/opt/my tools/memdir hook", CodexTimeout("PreToolUse", 0), ""); got != "sha256:9683850c64bb803ba112396fa11ce27678432c39118c29d7d8956d43cb067f52" {
		t.Errorf("PreToolUse hash %s", got)
	}
}

const codexHooksJSON = `{
  "hooks": {
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "/usr/bin/notify-send prompt", "timeout": 5}]},
      {"hooks": [{"type": "command", "command": "/usr/local/bin/memdir hook --agent codex", "timeout": 10, "statusMessage": "recalling"}]}
    ],
    "PreToolUse": [{"matcher": "apply_patch", "hooks": [{"type": "command", "command": "/usr/local/bin/memdir hook --agent codex"}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "/usr/local/bin/memdir hook --agent codex", "timeout": 10}]}]
  }
}`

func TestCodexTrustRecords(t *testing.T) {
	got, err := CodexTrustRecords("/h/.codex/hooks.json", []byte(codexHooksJSON))
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "/usr/local/bin/memdir hook --agent codex"
	want := []CodexTrust{
		{Event: "UserPromptSubmit", Key: "/h/.codex/hooks.json:user_prompt_submit:1:0", Hash: CodexHookHash("UserPromptSubmit", "", cmd, 10, "recalling")},
		{Event: "PreToolUse", Key: "/h/.codex/hooks.json:pre_tool_use:0:0", Hash: CodexHookHash("PreToolUse", "apply_patch", cmd, 600, "")},
		{Event: "SessionEnd", Key: "/h/.codex/hooks.json:session_end:0:0", Hash: CodexHookHash("SessionEnd", "", cmd, 3, "")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCodexConfigInstallUninstall(t *testing.T) {
	const path = `/h/odd "dir"/hooks.json`
	records := []CodexTrust{
		{Key: path + ":user_prompt_submit:0:0", Hash: "sha256:aa"},
		{Key: path + ":stop:0:0", Hash: "sha256:bb"},
	}
	tests := []struct {
		name, in     string
		featureAdded bool
		warn         string
		replaced     int
	}{
		{name: "no file", in: "", featureAdded: true},
		{name: "unrelated keys", in: "model = \"gpt-5.5\"\n\n[analytics]\nenabled = false\n", featureAdded: true},
		{name: "no final newline", in: "model = \"gpt-5.5\"", featureAdded: true},
		{name: "features without hooks", in: "[features]\nplugins = false\n\n[tui]\nnotifications = true\n", featureAdded: true},
		{name: "hooks already on", in: "[features] # flags\nhooks = true\nplugins = false\n"},
		{name: "hooks off", in: "[features]\nhooks = false\n", warn: "hooks = false"},
		{name: "dotted features", in: "features.plugins = false\n", warn: "without a [features] table"},
		{name: "record trusted in Codex", in: "[hooks.state.\"/h/odd \\\"dir\\\"/hooks.json:user_prompt_submit:0:0\"]\ntrusted_hash = \"sha256:old\"\n\n[hooks.state.\"/h/other.json:stop:0:0\"]\ntrusted_hash = \"sha256:cc\"\n", featureAdded: true, replaced: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ch, err := InstallCodexConfig([]byte(tt.in), path, records)
			if err != nil {
				t.Fatal(err)
			}
			if ch.FeatureAdded != tt.featureAdded || len(ch.Replaced) != tt.replaced || (tt.warn == "") != (len(ch.Warnings) == 0) || tt.warn != "" && !strings.Contains(ch.Warnings[0], tt.warn) {
				t.Errorf("changes %+v", ch)
			}
			st, err := ReadCodexConfig(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, r := range records {
				if st.Trusted[r.Key] != r.Hash {
					t.Errorf("record %s = %q\n%s", r.Key, st.Trusted[r.Key], out)
				}
			}
			if tt.warn == "" && (st.FeatureHooks == nil || !*st.FeatureHooks) {
				t.Errorf("features.hooks not on:\n%s", out)
			}
			if again, _, err := InstallCodexConfig(out, path, records); err != nil || string(again) != string(out) {
				t.Errorf("a second install changed the file: %v\n%s", err, again)
			}
			back, err := UninstallCodexConfig(out, path)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			if tt.replaced > 0 { // the replaced record is gone
				want = "[hooks.state.\"/h/other.json:stop:0:0\"]\ntrusted_hash = \"sha256:cc\"\n"
			}
			if string(back) != want {
				t.Errorf("after uninstall:\n%q\nwant\n%q", back, want)
			}
		})
	}
}

func TestCodexConfigKeepsWhatFollowsTheBlock(t *testing.T) {
	out, _, err := InstallCodexConfig([]byte("model = \"m\""), "/h.json", []CodexTrust{{Key: "/h.json:stop:0:0", Hash: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	// Codex trusting another hook appends its record after memdir's block.
	out = append(out, "[hooks.state.\"other\"]\ntrusted_hash = \"x\"\n"...)
	back, err := UninstallCodexConfig(out, "/h.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := "model = \"m\"\n[hooks.state.\"other\"]\ntrusted_hash = \"x\"\n"; string(back) != want {
		t.Errorf("after uninstall %q, want %q", back, want)
	}
}

// TestCodexConfigTwoFiles: the user's hooks.json and a project's share
// memdir's block; each uninstall takes its own records only.
func TestCodexConfigTwoFiles(t *testing.T) {
	orig := []byte("model = \"m\"\n")
	user := []CodexTrust{{Key: "/h/.codex/hooks.json:stop:0:0", Hash: "sha256:u"}}
	proj := []CodexTrust{{Key: "/src/app/.codex/hooks.json:stop:0:0", Hash: "sha256:p"}}
	one, _, err := InstallCodexConfig(orig, "/h/.codex/hooks.json", user)
	if err != nil {
		t.Fatal(err)
	}
	two, _, err := InstallCodexConfig(one, "/src/app/.codex/hooks.json", proj)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadCodexConfig(two); len(st.Trusted) != 2 {
		t.Fatalf("records %v:\n%s", st.Trusted, two)
	}
	back, err := UninstallCodexConfig(two, "/src/app/.codex/hooks.json")
	if err != nil || string(back) != string(one) {
		t.Errorf("after the project's uninstall (%v):\n%s\nwant\n%s", err, back, one)
	}
	back, err = UninstallCodexConfig(back, "/h/.codex/hooks.json")
	if err != nil || string(back) != string(orig) {
		t.Errorf("after both uninstalls (%v): %q", err, back)
	}
}

func TestCodexConfigErrors(t *testing.T) {
	if _, _, err := InstallCodexConfig([]byte("model = \n"), "/h.json", nil); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Errorf("invalid TOML: %v", err)
	}
	if _, err := UninstallCodexConfig([]byte(codexBlockBegin+"\n[features]\n"), "/h.json"); err == nil || !strings.Contains(err.Error(), "has no end line") {
		t.Errorf("unclosed block: %v", err)
	}
	in := "[hooks]\nstate = { \"/h.json:stop:0:0\" = { trusted_hash = \"x\" } }\n"
	if _, _, err := InstallCodexConfig([]byte(in), "/h.json", []CodexTrust{{Key: "/h.json:stop:0:0", Hash: "h"}}); err == nil || !strings.Contains(err.Error(), "cannot replace") {
		t.Errorf("inline record: %v", err)
	}
}

func TestTableHeader(t *testing.T) {
	for line, want := range map[string][]string{
		"[features]":                           {"features"},
		"  [ hooks . state . \"a:b\" ] # note": {"hooks", "state", "a:b"},
		`[hooks.state.'lit "x"']`:              {"hooks", "state", `lit "x"`},
		`[hooks.state."q\"uote"]`:              {"hooks", "state", `q"uote`},
		"[[array]]":                            nil,
		"key = 1":                              nil,
	} {
		if got := tableHeader(line); !cmp.Equal(got, want) {
			t.Errorf("tableHeader(%q) = %q, want %q", line, got, want)
		}
	}
}
