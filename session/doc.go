// Package session keeps Claude Code's session memory: one Markdown notes
// file per session that a background model brings up to date while the
// conversation runs, and the compaction that lets those notes stand in for
// a model-written summary when the context fills up.
//
// [Open] returns a session's [Notes]; [Notes.Update] asks a model to edit
// them when [Decide] says they are due, and [Notes.Compact] (or [Compact]
// on notes read elsewhere) keeps the recent messages and replaces the rest
// with the notes. Messages come in as [Message], a [llm.Message] with the
// id, usage and compaction count session memory needs.
package session
