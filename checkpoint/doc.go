// Package checkpoint keeps file-history checkpoints for an agent session, in
// the layout Claude Code uses, so that the files an agent edited can be rewound
// to how they were at any earlier user turn.
//
// A harness calls [History.Track] before it edits a file and
// [History.Snapshot] when each user turn starts. Track saves the file's first
// version (v1) into the latest snapshot; Snapshot records, for every tracked
// file, either the backup it already has (the file is unchanged), a new
// version (it changed) or a null entry (it no longer exists). At most 100
// snapshots are kept; older ones are evicted. [History.Rewind] puts every
// tracked file back as it was in the last snapshot taken for a message, and
// reports the lines added and removed per file; [History.Diff] shows what
// changed since then without touching anything.
//
// # On disk
//
// Backups live in <configHome>/file-history/<sessionId>/ as
// "<first 16 hex digits of sha256(absolute path)>@v<version>", with the source
// file's mode, exactly as Claude Code names them, so the two can share a
// session directory. The session's state is an append-only JSON Lines log in
// the same directory, [LogName]: a header line, then Claude Code style
// "file-history-snapshot" entries and small "file-history-track" entries.
// Beside it, [StateName] caches what the next snapshot needs (the latest
// snapshot and where the log was read up to), so that a new process need
// not read the whole log; it is rebuilt from the log whenever it is missing
// or does not match. See docs/format.md.
//
// # Safety
//
// Tracked files are examined with lstat and opened with O_NOFOLLOW: a symbolic
// link, a non-regular file or a file with more than one hard link is refused
// with an error naming it, as in Claude Code's hardened variant. A path inside
// the session's original working directory whose parent escapes it through a
// symbolic link is refused too. Before Rewind overwrites or deletes anything
// it takes a snapshot of the current files, so every rewind can itself be
// rewound ([RewindReport.UndoMessageID]).
//
// # Concurrency
//
// Every operation holds an exclusive lock on the session directory (flock(2)
// on the directory itself, see internal/flock) from reading the log to
// appending to it, so Track, Snapshot and Rewind may be called from many
// goroutines and many processes on one machine at once. On network
// filesystems flock may be unsupported or only local, and no mutual exclusion
// is promised there. Each append is one write(2) followed by fsync; a torn last
// line left by a crash is ignored when read and cut off before the next append.
package checkpoint
