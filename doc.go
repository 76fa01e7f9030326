// Package memdir is Claude Code's file-based agent memory, as a Go library.
//
// A memory directory holds one Markdown file per memory, each with YAML
// frontmatter (name, description, type) and a body, plus an index, MEMORY.md,
// with one line per memory that agents load into every prompt. memdir reads and
// writes exactly the layout Claude Code uses, so a user's existing memories just
// work, and fixes what Claude Code gets wrong: writes are atomic and locked
// across processes, an index over its limits is reported instead of silently
// truncated, and nothing is deleted that cannot be restored.
//
// # Locating the directory
//
// [Locate] applies Claude Code's rules in order (the
// CLAUDE_COWORK_MEMORY_PATH_OVERRIDE variable, autoMemoryDirectory from the
// policy, flag, local or user settings, then
// <base>/projects/<SanitizePath(canonical root)>/memory/) and decides whether
// auto memory is enabled. The [Location] it returns says which rule chose the
// directory, and why, in Explain. Locate creates nothing; the environment is
// read through [LocateOptions].LookupEnv, so it can be faked.
//
// # The memory file
//
// A [Memory] is one file: frontmatter and a Markdown body. The type is one of
// four ([TypeUser], [TypeFeedback], [TypeProject], [TypeReference]), read from
// the top-level type key or the newer metadata.type; an unknown type is kept
// as written in RawType so a rewrite does not lose it, and frontmatter keys
// memdir does not manage survive a save.
//
// # The index
//
// MEMORY.md is parsed into an [Index] whose edits touch only the lines they
// are about. Agents load it as [TruncateIndex] does, like Claude Code: at most
// [MaxIndexLines] lines and [MaxIndexChars] UTF-16 units, then a warning.
// [IndexStatus] reports when an index passes those limits, so that the
// newest lines are never dropped without anyone knowing.
//
// # Dir and writes
//
// [Open] returns a [Dir], the store. Save, Get, Remove, Rename and the others
// keep the memory files and MEMORY.md in step. Every write is atomic (a
// temporary file, fsync, rename, fsync of the directory) and read-modify-write
// of MEMORY.md happens under an OS file lock, so a Dir is safe for many
// goroutines and many processes on one machine. Files are created 0600 in
// 0700 directories, names from models are checked against traversal and
// symlink escapes, and a write into team/ that looks like it holds a
// credential is refused with [ErrSecret].
//
// # Scan and manifest
//
// [Dir.Scan] reads the frontmatter (the first 30 lines) of every memory file,
// newest first, as Claude Code's scanMemoryFiles does; unreadable files are
// reported in [ScanResult].Problems, never fatal. [Manifest] formats the
// headers as the one-line-per-memory list a selector model is shown.
//
// # Recall
//
// [Dir.Recall] picks the memories relevant to a query. Every memory is a
// candidate, not only the newest 200: a lexical ranking (package lexical,
// fused with embedding similarity when [RecallOptions].Embedder is set) fills
// the selector's manifest within a token budget, and a [Model], when given,
// chooses from it. Without a model, or when the call fails, the ranking
// answers alone and the result's Method and Reason say so.
//
// # Freshness
//
// Memories record what was true when they were written. [MemoryAge] says how
// old one is ("today", "yesterday", "N days ago"), and [FreshnessText] and
// [FreshnessNote] give the warning put before a memory more than a day old;
// recalled memories carry it.
//
// # The prompt
//
// [BuildPrompt] writes the memory section of an agent's system prompt: what
// the memory is, the four types, what not to save, how to save and when to
// read, in the structure of Claude Code's prompt. [IndexContext] wraps a
// loaded MEMORY.md for the context.
//
// # Journal and undo
//
// Every change (a save, a removal, an extraction, a consolidation, a sync
// pull) is one run of a [Journal], which records what the files held before.
// [Dir.Undo] restores a run byte for byte, and is itself journaled. The
// journal lives outside the memory directory, under [StateDir] (see
// [DefaultJournalDir]), unless [Options].Journal says otherwise.
//
// # Doctor
//
// [Dir.Check] finds what makes an agent see less than is there: memories
// missing from MEMORY.md, lines pointing at nothing, an index over its limits,
// broken or missing frontmatter, duplicates, files other users can read.
// [Dir.Fix] repairs what is safe to repair in one journaled run, and never
// deletes a memory.
package memdir
