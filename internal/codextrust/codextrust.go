// Package codextrust computes what Codex CLI (0.169.0) records when it is
// told to trust a command hook: the hook's key names (event keys) and the
// hash of what the hook runs. Package hooks writes the records; memdirtest
// writes them for its tests of the real program, whose own reports the
// hashes were checked against.
package codextrust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
)

// codexNoMatcher are the events whose matchers Codex ignores, leaving them
// out of the trust hash too.
var codexNoMatcher = []string{"UserPromptSubmit", "Stop", "PreCompact", "PostCompact"}

// EventKey is the name an event has in Codex's hook keys:
// UserPromptSubmit becomes user_prompt_submit.
func EventKey(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Timeout is the timeout Codex gives a handler whose configured
// timeout is secs (0 when unset): 600 when unset, at least 1, and at most
// 3 for SessionEnd.
func Timeout(event string, secs int) int {
	if secs <= 0 {
		secs = 600
	}
	if event == "SessionEnd" {
		secs = min(secs, 3)
	}
	return max(secs, 1)
}

// Hash is the trusted_hash Codex CLI (0.169.0) records for a
// command hook: "sha256:" and the hex SHA-256 of the hook's identity as
// compact JSON with sorted keys, without HTML escaping:
//
//	{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"...","statusMessage":"...","timeout":30,"type":"command"}],"matcher":"..."}
//
// where matcher is left out when the group has none or the event ignores
// matchers (UserPromptSubmit, Stop, PreCompact, PostCompact),
// statusMessage when empty, and timeoutSec is the value after Codex's
// adjustments ([Timeout]). Any change to the hook changes the hash:
// Codex then reports it "modified" and skips it until it is trusted again.
func Hash(event, matcher, command string, timeoutSec int, statusMessage string) string {
	handler := map[string]any{"type": "command", "command": command, "timeout": timeoutSec, "async": false}
	if statusMessage != "" {
		handler["statusMessage"] = statusMessage
	}
	id := map[string]any{"event_name": EventKey(event), "hooks": []any{handler}}
	if matcher != "" && !slices.Contains(codexNoMatcher, event) {
		id["matcher"] = matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(id); err != nil {
		panic(err) // strings, ints and bools always encode
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}
