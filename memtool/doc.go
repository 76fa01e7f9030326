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
// Results and errors use the strings the memory tool documentation
// recommends, because models are trained on them. Where the documentation and
// the Python SDK's reference implementation differ, the documentation wins:
//   - errors keep the "Error: " prefix where the documentation has it (the
//     SDK drops it), and the view "does not exist" message has none, as
//     documented;
//   - the insert_line error reads "It should be within the range of lines of
//     the file: [0, n]" (the SDK says "It should be within the range [0, n]");
//   - str_replace answers "The memory file has been edited." followed by the
//     changed lines with two lines of context, numbered as view numbers them.
//
// Messages the documentation does not give (path rules, size caps, binary
// files, truncation notes, malformed input) are this package's own; they say
// what was wrong and what to do instead. Error values are [*Error]: the text
// is meant for the model (send it back with is_error), and errors.Is reports
// memdir.ErrNotFound, ErrExists or ErrInvalid where one applies.
//
// # Paths
//
// Every path must be /memories or start with /memories/ ([Resolve]); unlike
// the Python SDK, /memoriesfoo is refused rather than read as
// /memories/foo. Traversal in any disguise is refused: "." and ".."
// segments, backslashes, NUL and control characters, percent-encoded forms
// (%2e%2e%2f, and double encodings such as %252e), and forms that become
// traversal after Unicode NFKC normalisation (fullwidth "．．／"). Hidden
// names (starting with ".") are refused too: listings never show them and the
// tool keeps its temporary files under such names.
//
// Symbolic links are never followed: a command whose path is a link, or goes
// through one, is refused, except that delete removes a link itself (never
// its target) and rename moves a link itself. Listings skip links and say how
// many they skipped.
//
// # Safety
//
// Files are created 0600 and directories 0700. Every write is atomic: a
// temporary file in the same directory is written, fsynced and renamed into
// place, and the directory is fsynced. create and rename never replace an
// existing path; on Linux the final step is renameat2(RENAME_NOREPLACE),
// elsewhere a hard link (files) or a check just before the rename. Deleting
// /memories itself is refused (the Python SDK's delete("/memories/") empties
// the folder). A directory is deleted by renaming it to a hidden tombstone
// first, so it disappears at once.
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
// view_range. Files that are not UTF-8 text are refused by view and by the
// editing commands.
package memtool
