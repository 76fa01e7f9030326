// Package memdir is the store of Claude Code's file-based agent memory, as a
// Go library.
//
// A memory directory holds one Markdown file per memory, each with YAML
// frontmatter (name, description, type) and a body, plus an index, MEMORY.md,
// with one line per memory that agents load into every prompt. memdir reads and
// writes exactly the layout Claude Code uses, so a user's existing memories just
// work, and fixes what Claude Code gets wrong: writes are atomic and locked
// across processes, an index over its limits is reported instead of silently
// truncated, and nothing is deleted that cannot be restored.
//
// This package is the store and its vocabulary. The services built on it
// are packages of their own: locate (where the directory is, by Claude
// Code's rules), recall (which memories to surface for a prompt, and what
// is injected), review (writes held for a person), doctor (check and fix),
// prompt (the memory section of a system prompt), and the others listed in
// docs/architecture.md.
//
// # The memory file
//
// A [Memory] is one file: frontmatter and a Markdown body. The type is one of
// four ([TypeUser], [TypeFeedback], [TypeProject], [TypeReference]), read from
// the top-level type key or the newer metadata.type; an unknown type is kept
// as written in RawType so a rewrite does not lose it, and frontmatter keys
// memdir does not manage survive a save. A [Provenance] in the frontmatter
// records who wrote it; code anchors (package anchors) the files it names.
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
// What the store needs from services it asks through small interfaces in
// its [Options]: a [Guard] screens automatic writes (package review holds a
// suspicious one for a person), and a [NameIndex] finds the memory a save
// by name updates without scanning (package recall's index).
//
// # Scan
//
// [Dir.Scan] reads the frontmatter (the first 30 lines) of every memory file,
// newest first, as Claude Code's scanMemoryFiles does; unreadable files are
// reported in [ScanResult].Problems, never fatal.
//
// # Journal and undo
//
// Every change (a save, a removal, an extraction, a consolidation, a sync
// pull) is one run of a [Journal], which records what the files held before.
// [Dir.Undo] restores a run byte for byte, and is itself journaled. The
// journal lives outside the memory directory, under memdir's state
// directory (see [DefaultJournalDir]), unless [Options].Journal says
// otherwise. A change of several files that should undo as one runs
// through [Dir.Change].
package memdir
