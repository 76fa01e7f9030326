// Package transcript reads conversations for memdir's background agents:
// Claude Code's JSONL session logs (~/.claude/projects/<project>/<session>.jsonl),
// Codex CLI's rollout files and Gemini CLI's chat files (see [ReadCodex],
// [ReadGemini]), and plain JSON lists of messages. Conversations come out as root-package
// types, [llm.Message] with text, tool_use and tool_result blocks, wrapped
// in a [Message] that says where each sits in the session and what kind of
// turn it is.
//
// # Reading JSONL
//
// Claude Code's format is internal and changes between versions, so [Read]
// is defensive:
//
//   - Lines are read whole however long they are (several MB is normal; a
//     line past 256 MiB is skipped). Blank lines, lines that are not JSON
//     objects, and a last line cut short by a writer still at work are
//     skipped and listed in Transcript.Skipped with their line numbers.
//     Reading fails only when the underlying reader does.
//   - Records of unknown types are counted in Transcript.Types and ignored.
//
// # Rebuilding the conversation
//
// Records form a tree through parentUuid. Every record with a uuid is a
// node, whatever its type: attachments and system records sit inside the
// chain, and a prompt's parent is often an attachment. Rewinds and edits
// create branches.
//
//   - The leaf is the newest record in file order that is not an inline
//     subagent (isSidechain). A last-prompt or summary record written after
//     it that names a record on another branch moves the leaf there; one
//     naming an ancestor of the newest record does not, so the newest
//     records are never dropped.
//   - The main chain climbs from the leaf to the root. At a compaction
//     boundary (system/compact_boundary, parentUuid null) it continues
//     through logicalParentUuid, so [Transcript.Messages] holds the whole
//     session. [Transcript.Boundaries] says where each compaction falls and
//     [Transcript.SinceLastCompaction] returns what follows the last one.
//   - One API response may be written as several assistant records sharing
//     message.id, one block each; they become one message, in place of the
//     first record, whose UUID is the last record's and whose PartUUIDs lists
//     all of them.
//   - Usage is counted once per response (message id + request id), on every
//     branch and sidechain, since all of them cost tokens.
//
// # Kinds of turn
//
// A user record whose content is all tool_result blocks is the harness
// answering a tool call ([Message.IsToolResult]), not the human. isMeta,
// isCompactSummary, isVisibleInTranscriptOnly and isSidechain are kept as
// flags. [Message.HumanText] strips the wrappers Claude Code injects
// (<system-reminder>, <command-name>, <local-command-stdout> and the like),
// and [Message.IsHumanPrompt] is true for what the human actually typed;
// [Transcript.LastHumanPrompt] finds the latest one and
// [Transcript.RecentTools] lists the tools used successfully since.
//
// Content blocks memdir has no type for (thinking, images, documents) are
// dropped and counted in Message.Dropped.
//
// # Cursors
//
// [Transcript.Since] returns the messages after a record, given the UUID of
// any record on the main chain. It reports false for a UUID that is not on
// it, so an extraction cursor that was compacted away or left on an
// abandoned branch starts again from the beginning, as Claude Code's does.
//
// # Plain JSON
//
// [ReadMessagesJSON] reads [{"role": "user", "content": ...}, ...] with
// content as a string or a list of Anthropic content blocks. It is strict:
// the file was written on purpose, so anything malformed is an error naming
// the message. [Detect] and [ReadAny] (and [ReadFile]) pick the reader from
// the first non-blank byte and, for JSON lines, from the first line's
// keys.
//
// # Codex CLI and Gemini CLI
//
// Both write one JSON object a line and are read as defensively as
// Claude Code's log (broken lines skipped and listed). Their
// conversations have no branches: messages come in file order, each the
// parent of the next, and only the user's text, the assistant's text and
// tool calls with their results are kept; the instructions and context
// blocks the programs add to the history are left out.
package transcript
