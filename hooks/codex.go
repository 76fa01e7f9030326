package hooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/memdir/memdir/internal/codextrust"
)

// Codex CLI (0.169.0) keeps hooks in $CODEX_HOME/hooks.json, shaped as
// Claude Code's settings ({"hooks": {"<Event>": [groups]}}, so [Install]
// and [Uninstall] edit it), and runs a hook only when config.toml records
// it as trusted: a table per handler,
//
//	[hooks.state."<hooks.json path>:<event_key>:<group>:<handler>"]
//	trusted_hash = "sha256:…"
//
// where the key names the handler by its place in hooks.json and the hash
// is of what it runs (see [CodexHookHash]). An untrusted hook is skipped
// silently. memdir writes the records of its own handlers, and
// [features] hooks = true when config.toml does not set it, in one
// marked block at the end of config.toml, which [UninstallCodexConfig]
// removes whole, so that the rest of the file keeps its bytes.
const (
	codexBlockBegin = "# >>> memdir hooks: written by 'memdir hooks install --agent codex'; 'memdir hooks uninstall --agent codex' removes it"
	codexBlockEnd   = "# <<< memdir hooks"
	// codexFeatureLine is added under an existing [features] table that
	// does not set hooks.
	codexFeatureLine = "hooks = true # memdir hooks install"
)

// CodexEventKey is the name an event has in Codex's hook keys:
// UserPromptSubmit becomes user_prompt_submit.
func CodexEventKey(event string) string { return codextrust.EventKey(event) }

// CodexTimeout is the timeout Codex gives a handler whose configured
// timeout is secs (0 when unset): 600 when unset, at least 1, and at most
// 3 for SessionEnd.
func CodexTimeout(event string, secs int) int { return codextrust.Timeout(event, secs) }

// CodexHookHash is the trusted_hash Codex records for a command hook
// (see codextrust.Hash): any change to the hook changes it, and Codex then
// reports the hook "modified" and skips it until it is trusted again.
func CodexHookHash(event, matcher, command string, timeoutSec int, statusMessage string) string {
	return codextrust.Hash(event, matcher, command, timeoutSec, statusMessage)
}

// CodexTrust is the trust record of one handler.
type CodexTrust struct {
	Event string
	// Key is the record's table name under hooks.state; Hash its
	// trusted_hash.
	Key, Hash string
}

// CodexTrustRecords returns the trust records memdir's handlers in
// hooks.json data need, hooksPath being the file's absolute path as Codex
// names it.
func CodexTrustRecords(hooksPath string, data []byte) ([]CodexTrust, error) {
	var out []CodexTrust
	err := eachMemdirHandler(data, func(event string, group, handler int, matcher string, h json.RawMessage) {
		v := decodeHandler(h)
		out = append(out, CodexTrust{
			Event: event,
			Key:   fmt.Sprintf("%s:%s:%d:%d", hooksPath, CodexEventKey(event), group, handler),
			Hash:  CodexHookHash(event, matcher, v.Command, CodexTimeout(event, v.timeout), v.StatusMessage),
		})
	})
	return out, err
}

// codexConfig is what memdir reads of config.toml.
type codexConfig struct {
	Features map[string]any `toml:"features"`
	Projects map[string]struct {
		TrustLevel string `toml:"trust_level"`
	} `toml:"projects"`
	Hooks struct {
		State map[string]struct {
			TrustedHash string `toml:"trusted_hash"`
		} `toml:"state"`
	} `toml:"hooks"`
}

func parseCodexConfig(data []byte) (*codexConfig, error) {
	var c codexConfig
	if _, err := toml.Decode(string(data), &c); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return &c, nil
}

// CodexConfigStatus is what config.toml says about memdir's hooks.
type CodexConfigStatus struct {
	// FeatureHooks is the value of [features] hooks, nil when unset
	// (Codex 0.169.0 runs hooks then).
	FeatureHooks *bool
	// Trusted maps each hooks.state key to its trusted_hash.
	Trusted map[string]string
	// ProjectTrust maps projects to their trust_level: Codex reads a
	// project's .codex/hooks.json only when it is "trusted".
	ProjectTrust map[string]string
}

// ReadCodexConfig reads config.toml data for the status of memdir's hooks.
func ReadCodexConfig(data []byte) (*CodexConfigStatus, error) {
	c, err := parseCodexConfig(data)
	if err != nil {
		return nil, err
	}
	st := &CodexConfigStatus{Trusted: map[string]string{}, ProjectTrust: map[string]string{}}
	for p, v := range c.Projects {
		st.ProjectTrust[p] = v.TrustLevel
	}
	if v, ok := c.Features["hooks"].(bool); ok {
		st.FeatureHooks = &v
	}
	for k, v := range c.Hooks.State {
		st.Trusted[k] = v.TrustedHash
	}
	return st, nil
}

// CodexConfigChanges says what InstallCodexConfig did besides writing the
// trust records.
type CodexConfigChanges struct {
	// FeatureAdded is true when it set [features] hooks = true.
	FeatureAdded bool
	// Replaced lists trust records of memdir's handlers that were already
	// in the file outside memdir's block (trusted in Codex, say) and were
	// replaced.
	Replaced []string
	// Warnings are what the user must still do.
	Warnings []string
}

// InstallCodexConfig returns config.toml data with memdir's block holding
// records, the trust records of memdir's handlers in the hooks.json at
// hooksPath, beside the block's records for other hooks.json files (a
// project's, say), and [features] hooks = true when the file does not set
// features.hooks. Every other line is kept as it is. Data that is not
// valid TOML is an error; the caller must then leave the file alone.
func InstallCodexConfig(data []byte, hooksPath string, records []CodexTrust) ([]byte, *CodexConfigChanges, error) {
	kept, err := otherCodexRecords(data, hooksPath)
	if err != nil {
		return nil, nil, err
	}
	kept = slices.DeleteFunc(kept, func(k CodexTrust) bool {
		return slices.ContainsFunc(records, func(r CodexTrust) bool { return r.Key == k.Key })
	})
	return writeCodexConfig(data, append(kept, records...))
}

// UninstallCodexConfig returns config.toml data without the trust records
// InstallCodexConfig wrote for the hooks.json at hooksPath. When the block
// holds no other file's records, it goes with the line memdir put under
// [features]: after an install and an uninstall, the file holds the bytes
// it held before. A block that is opened and never closed is an error:
// memdir will not guess where it ends.
func UninstallCodexConfig(data []byte, hooksPath string) ([]byte, error) {
	kept, err := otherCodexRecords(data, hooksPath)
	if err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		return removeCodexBlock(data)
	}
	out, _, err := writeCodexConfig(data, kept)
	return out, err
}

// otherCodexRecords returns the records of memdir's block that are not
// for the hooks.json at hooksPath, in the block's order.
func otherCodexRecords(data []byte, hooksPath string) ([]CodexTrust, error) {
	block, err := codexBlock(data)
	if err != nil || block == "" {
		return nil, err
	}
	st, err := ReadCodexConfig([]byte(block))
	if err != nil {
		return nil, fmt.Errorf("memdir's block: %w", err)
	}
	var out []CodexTrust
	for l := range strings.Lines(block) {
		h := tableHeader(l)
		if len(h) != 3 || h[0] != "hooks" || h[1] != "state" || strings.HasPrefix(h[2], hooksPath+":") {
			continue
		}
		out = append(out, CodexTrust{Key: h[2], Hash: st.Trusted[h[2]]})
	}
	return out, nil
}

// codexBlock returns the lines of memdir's block, "" when there is none.
func codexBlock(data []byte) (string, error) {
	lines := strings.SplitAfter(string(data), "\n")
	begin := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == codexBlockBegin })
	if begin < 0 {
		return "", nil
	}
	n := slices.IndexFunc(lines[begin:], func(l string) bool { return strings.TrimSpace(l) == codexBlockEnd })
	if n < 0 {
		return "", fmt.Errorf("memdir's block (the line %q) has no end line %q: remove the block by hand", codexBlockBegin, codexBlockEnd)
	}
	return strings.Join(lines[begin:begin+n+1], ""), nil
}

// writeCodexConfig writes memdir's block with records, replacing the one
// there was (see InstallCodexConfig).
func writeCodexConfig(data []byte, records []CodexTrust) ([]byte, *CodexConfigChanges, error) {
	base, err := removeCodexBlock(data)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := parseCodexConfig(base)
	if err != nil {
		return nil, nil, err
	}
	ch := &CodexConfigChanges{}
	for _, r := range records {
		if _, ok := cfg.Hooks.State[r.Key]; ok {
			if base, ok = cutTOMLTable(base, "hooks.state", r.Key); !ok {
				return nil, nil, fmt.Errorf("hooks.state.%q is already set in a form memdir cannot replace; remove it and install again", r.Key)
			}
			ch.Replaced = append(ch.Replaced, r.Key)
		}
	}
	var block strings.Builder
	block.WriteString(codexBlockBegin + "\n")
	switch v, set := cfg.Features["hooks"]; {
	case set && v == false:
		ch.Warnings = append(ch.Warnings, "config.toml sets [features] hooks = false, so Codex runs no hooks at all: set it to true")
	case set:
	case hasTOMLTableHeader(base, "features"):
		base = insertAfterHeader(base, "features", codexFeatureLine)
		ch.FeatureAdded = true
	case cfg.Features != nil:
		ch.Warnings = append(ch.Warnings, "config.toml defines features without a [features] table: add hooks = true to it if your Codex does not run hooks by default")
	default:
		block.WriteString("[features]\nhooks = true\n")
		ch.FeatureAdded = true
	}
	for _, r := range records {
		fmt.Fprintf(&block, "[hooks.state.%s]\ntrusted_hash = %s\n", tomlQuote(r.Key), tomlQuote(r.Hash))
	}
	block.WriteString(codexBlockEnd + "\n")
	out := base
	if len(out) > 0 {
		out = append(out, '\n')
	}
	out = append(out, block.String()...)
	got, err := ReadCodexConfig(out)
	if err != nil {
		return nil, nil, fmt.Errorf("memdir's trust records would make it invalid (%v)", err)
	}
	for _, r := range records {
		if got.Trusted[r.Key] != r.Hash {
			return nil, nil, fmt.Errorf("memdir's trust record for %s does not read back", r.Key)
		}
	}
	return out, ch, nil
}

// removeCodexBlock returns config.toml data without memdir's block and
// the line it put under [features].
func removeCodexBlock(data []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	begin := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == codexBlockBegin })
	if begin >= 0 {
		n := slices.IndexFunc(lines[begin:], func(l string) bool { return strings.TrimSpace(l) == codexBlockEnd })
		if n < 0 {
			return nil, fmt.Errorf("memdir's block (the line %q) has no end line %q: remove the block by hand", codexBlockBegin, codexBlockEnd)
		}
		before, after := strings.Join(lines[:begin], ""), strings.Join(lines[begin+n+1:], "")
		if after == "" {
			// Install put a newline before the block; what was written
			// after the block keeps it, to stay on a line of its own.
			before = strings.TrimSuffix(before, "\n")
		}
		lines = strings.SplitAfter(before+after, "\n")
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.TrimSpace(l) == codexFeatureLine })
	return []byte(strings.Join(lines, "")), nil
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tableHeader returns the name a line's [table] header gives, split at
// dots with quoted keys unquoted; nil when the line is not a table header.
func tableHeader(line string) []string {
	t := strings.TrimSpace(stripTOMLComment(line))
	if !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") || !strings.HasSuffix(t, "]") {
		return nil
	}
	t = strings.TrimSpace(t[1 : len(t)-1])
	var parts []string
	for t != "" {
		var part string
		switch t[0] {
		case '"':
			end := closingQuote(t)
			if end < 0 {
				return nil
			}
			u, err := strconv.Unquote(t[:end+1])
			if err != nil {
				return nil
			}
			part, t = u, t[end+1:]
		case '\'':
			end := strings.IndexByte(t[1:], '\'')
			if end < 0 {
				return nil
			}
			part, t = t[1:end+1], t[end+2:]
		default:
			end := strings.IndexByte(t, '.')
			if end < 0 {
				end = len(t)
			}
			part, t = strings.TrimSpace(t[:end]), t[end:]
		}
		parts = append(parts, part)
		t = strings.TrimSpace(t)
		if t != "" {
			if t[0] != '.' {
				return nil
			}
			t = strings.TrimSpace(t[1:])
		}
	}
	return parts
}

// stripTOMLComment cuts a line at a # that is not inside a string.
func stripTOMLComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return line[:i]
		}
	}
	return line
}

// closingQuote returns the index of the quote closing the basic string s
// starts with, -1 if none.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func hasTOMLTableHeader(data []byte, name string) bool {
	for l := range strings.Lines(string(data)) {
		if h := tableHeader(l); strings.Join(h, ".") == name && len(h) > 0 {
			return true
		}
	}
	return false
}

// insertAfterHeader adds line right after the [name] header.
func insertAfterHeader(data []byte, name, line string) []byte {
	var b strings.Builder
	done := false
	for l := range strings.Lines(string(data)) {
		b.WriteString(l)
		if !done && strings.Join(tableHeader(l), ".") == name {
			if !strings.HasSuffix(l, "\n") {
				b.WriteByte('\n')
			}
			b.WriteString(line + "\n")
			done = true
		}
	}
	return []byte(b.String())
}

// cutTOMLTable removes the table [<parent>.<key>] (its header and its
// lines up to the next header); ok is false when there is no such header.
func cutTOMLTable(data []byte, parent, key string) ([]byte, bool) {
	want := append(strings.Split(parent, "."), key)
	var b strings.Builder
	cutting, found := false, false
	for l := range strings.Lines(string(data)) {
		if h := tableHeader(l); h != nil {
			cutting = slices.Equal(h, want)
			found = found || cutting
		}
		if !cutting {
			b.WriteString(l)
		}
	}
	return []byte(b.String()), found
}
