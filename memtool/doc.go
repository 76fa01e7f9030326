// Package memtool implements the Anthropic API memory tool (memory_20250818)
// on a local directory: the view, create, str_replace, insert, delete and
// rename commands a model sends in tool_use blocks, with the model's virtual
// /memories directory mapped onto one root directory.
//
// A [Tool] is bound to its root through an os.Root, so no command can reach
// outside it, whatever the path or any symbolic link says. [Tool.Execute]
// takes the raw tool_use input; [Tool.Run] takes a decoded [Command]. For
// models without the native tool, [Definition] describes the same commands as
// an ordinary function tool.
//
// # Messages
//
// Results and errors are those of the reference: the memory tool helpers of
// Anthropic's Python and TypeScript SDKs (BetaLocalFilesystemMemoryTool),
// whose outputs Claude models are trained on. Where the two SDKs differ, the
// Python helper's words are used ("It should be within the range [0, n].",
// "exceeds maximum line limit of 999,999 lines", the final newline insert
// leaves). No message starts with "Error: ": a tool runner adds that itself,
// as the TypeScript one does. docs/memory-tool.md tabulates every behaviour
// next to the reference's and says why the few differences exist.
//
// Messages the reference does not have (hidden names, size caps, NUL bytes,
// truncation notes, malformed input, links inside the directory) are this
// package's own; they say what was wrong and what to do instead. Error
// values are [*Error]: the text is meant for the model (send it back with
// is_error), and errors.Is reports memdir.ErrNotFound, ErrExists or
// ErrInvalid where one applies.
//
// # Paths
//
// Every path must be /memories or start with /memories/ ([Resolve]); unlike
// the reference, /memoriesfoo is refused ("would escape") rather than read
// as /memories/foo. "." and ".." segments are stepped through as long as the
// path stays inside /memories. Traversal in disguise is refused wherever it
// would land: backslashes, percent-encoded forms (%2e%2e%2f, and double
// encodings such as %252e), and forms that become traversal after Unicode
// NFKC normalisation (fullwidth "．．／"); NUL and control characters too.
// Hidden names (starting with ".") are refused: listings never show them and
// the tool keeps its temporary files under such names. Results name paths in
// their clean form ("/memories//a/./b.md" is reported as /memories/a/b.md).
//
// Symbolic links are never followed: a command whose path is a link, or goes
// through one, is refused (in the reference's words when the link leads out
// of the directory), except that delete removes a link itself (never its
// target) and rename moves a link itself. Listings skip links and say how
// many they skipped.
//
// # Safety
//
// Files are created 0600 and directories 0700. Every write is atomic: a
// temporary file in the same directory is written, fsynced and renamed into
// place, and the directory is fsynced. create and rename never replace an
// existing path; on Linux the final step is renameat2(RENAME_NOREPLACE),
// elsewhere a hard link (files) or a check just before the rename. Deleting
// /memories itself is refused however it is spelled (the Python helper's
// delete("/memories/") empties the folder). A directory is deleted by
// renaming it to a hidden tombstone first, so it disappears at once.
//
// Files under the team directory (Options.TeamDir, "team" by default: the
// team memory of an auto-memory directory, synced to every collaborator)
// never receive content the secret scanner flags: create, str_replace and
// insert refuse it, and rename refuses to move such a file, or a directory
// holding one, into team/. The error names the rule and the file, never the
// secret, and wraps a *memdir.SecretError (errors.Is memdir.ErrSecret).
//
// Options.BeforeChange lets a journal save each path before it changes;
// its error aborts the command with nothing modified. Files written are
// capped at Options.MaxFileBytes (1 MiB by default); view output is capped at
// Options.MaxViewChars characters, with a note saying how to page on with
// view_range (the reference has no such cap). Files that are not UTF-8 text,
// or hold NUL bytes, are refused by view and by the editing commands.
package memtool
