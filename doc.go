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
// # Finding the directory
//
// [Locate] applies Claude Code's rules (environment overrides, settings files,
// the canonical git root, sanitised project names) and says which rule chose the
// directory.
//
// # Reading and writing
//
// [Open] returns a [Dir], the store: Save, Get, Remove, Rename and List keep the
// memory files and MEMORY.md in step. [Dir.Scan] reads the frontmatter of every
// memory, newest first, for manifests and recall.
package memdir
