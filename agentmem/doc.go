// Package agentmem reads Claude Code's per-agent memory: the agent
// definitions that give an agent a memory scope, and the memory snapshots a
// project ships for its agents.
//
// [LoadDefs] lists the agent definitions Claude Code would load for a
// [locate.Location]; an agent whose [Def] has a Scope keeps its memory in
// [locate.Location.AgentDir].
//
// A project can ship seed memories for an agent under
// <project>/.claude/agent-memory-snapshots/<agent>/ ([SnapshotDir]): the
// memory files plus a snapshot.json, {"updatedAt": "<timestamp>"}. The
// agent's own memory directory records which snapshot it was last synced
// from in .snapshot-synced.json, {"syncedFrom": "<timestamp>"}. Claude Code
// decides one of three actions ([Check]) and, at startup, applies the first
// on its own for agents with user-scope memory; memdir applies them on
// request ([Sync]), journaled so that an undo restores what a sync
// replaced.
package agentmem
