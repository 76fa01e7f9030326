// Package hooks is memdir's adapter for Claude Code hooks: what memdir does
// for each event ([Handler]: recall into the prompt, checkpoints, edit
// hints, background extraction and consolidation), the JSON a hook reads
// on standard input ([Input], [ParseInput]), the JSON it answers with
// ([Output]) under Claude Code's limits ([MaxContextChars]), what the
// hooks remember about a session between prompts ([SessionStore]), starting
// background work that outlives the hook ([StartDetached]), and the
// settings.json edits that install and remove memdir's hooks ([Install],
// [Uninstall]) while keeping every other key and hook.
//
// Codex CLI and Gemini CLI have hooks of the same kind under other event
// names; [Agent] says how their events map onto Claude Code's, so one
// Handler answers all three ([DecodeAgentInput]), and the answer names
// the event as the program does. Their configuration is edited with the
// same care: Codex's hooks.json with [Install] and the trust records its
// config.toml needs with [InstallCodexConfig]; Gemini's settings.json with
// [InstallGemini]; [Restore] undoes an install byte for byte when nothing
// else changed since.
//
// The protocol is documented in Claude Code's hooks reference; the parts
// memdir relies on are:
//
//   - The input is one JSON object with session_id, transcript_path, cwd and
//     hook_event_name, plus per-event fields (prompt, tool_name and
//     tool_input, stop_hook_active, source, reason).
//   - Exit 0 with stdout starting with '{' is parsed as JSON; exit 2 blocks
//     the prompt, the tool call or the stop, so memdir's hooks never use it;
//     any other code is a non-blocking error shown as a notice.
//   - additionalContext and systemMessage are capped at 10,000 characters
//     (JavaScript string length: UTF-16 code units); longer text is moved to
//     a file and only a preview reaches the model.
//
// Settings files are edited as ordered JSON: keys keep their order and values
// their text (numbers are never rounded through float64); only memdir's own
// handlers are added, replaced or removed, and the result is indented with
// two spaces, as Claude Code writes its settings.
package hooks
