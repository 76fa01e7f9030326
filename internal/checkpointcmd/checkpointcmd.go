// Package checkpointcmd is the checkpoint command, shared by memdir
// (memdir checkpoint) and the lean memdir-checkpoint binary, which is the
// same command in a program that starts without the model SDKs, SQLite and
// MCP: what a harness runs on every user turn and before every edit.
package checkpointcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/internal/claudedir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/errs"
)

// Command is memdir checkpoint.
var Command = &cli.Command{
	Name:  "checkpoint",
	Args:  "track FILE | snapshot | list | diff | rewind | resume  [flags]",
	Short: "snapshot the files an agent edits, per user turn, and rewind them",
	Long: `Keeps Claude Code compatible file-history checkpoints for one session, so
the files an agent edited can be put back as they were at any earlier user
turn. A harness runs 'track' before each edit and 'snapshot' when each user
turn starts; 'rewind' goes back.

Subcommands (the first argument):
  track FILE     Call before editing or creating FILE. Unless the latest
                 snapshot already has it, saves the file's current content as
                 version 1 (or records that it does not exist yet) and adds it
                 to the latest snapshot; starts the first snapshot if there is
                 none. Needs --message.
  snapshot       Call when a user turn starts. Records every tracked file:
                 unchanged files reuse their backup (found by stat alone),
                 changed files get a new version, deleted files a null entry.
                 Keeps the last 100 snapshots. Needs --message.
  list           Lists the snapshots, oldest first: sequence number, time,
                 files tracked, files with a new version or deleted since the
                 snapshot before, and the message id.
  diff           Shows how the tracked files changed since the last snapshot
                 for --message, as a unified diff per file (--stat: counts
                 only). Touches nothing.
  rewind         Puts every tracked file back as it was in the last snapshot
                 for --message: files that did not exist then are deleted,
                 files tracked only later go back to their first version,
                 unchanged files are not written. Reports lines added and
                 removed per file. Before changing anything it snapshots the
                 files as they are, under the message id it prints, so the
                 rewind itself can be undone by rewinding to that id.
  resume         Starts --session as a continuation of session --from: the old
                 backups are hard-linked (copied when linking fails) and its
                 snapshots recorded. The new session must be empty.

The session id comes from --session, else $MEMDIR_SESSION_ID, else
$CLAUDE_SESSION_ID; without any of them the command is a usage error.
Backups and the session's log live in $CLAUDE_CONFIG_DIR/file-history/SESSION
(default ~/.claude/file-history/SESSION), named as Claude Code names them.
Relative FILE paths are taken from the current directory; paths are recorded
relative to the directory the session started in, when inside it.

memdir-checkpoint (installed by 'go install ./cmd/...') is this command in a
binary of its own, 'memdir-checkpoint snapshot ...' for 'memdir checkpoint
snapshot ...', that starts without memdir's model SDKs, SQLite and MCP
server, for about a quarter of memdir's start-up CPU: call it from
per-turn and per-edit hooks.

Symbolic links, non-regular files and files with more than one hard link are
refused (exit 4), as is a path inside the project that leads out of it
through a symbolic link. A snapshot that could not back up some files is
still recorded, keeps their previous versions, and exits non-zero naming them.

Examples:
  memdir checkpoint snapshot --session $ID --message turn-1
  memdir checkpoint track src/auth.ts --session $ID --message turn-1
  memdir checkpoint list --session $ID
  memdir checkpoint diff --session $ID --message turn-1 --stat
  memdir checkpoint rewind --session $ID --message turn-1 --dry-run
  memdir checkpoint rewind --session $ID --message turn-1
  memdir checkpoint resume --from $OLD_ID --session $NEW_ID`,
	Setup: cli.Setup(run),
}

// Remedy is the advice memdir checkpoint adds to the errors of package
// checkpoint (a cli.Program's Remedy): where to find the snapshots that
// are left. msg is err's message.
func Remedy(err error, msg string) string {
	var ns *checkpoint.NoSnapshotError
	if !errors.As(err, &ns) {
		return msg
	}
	fact := ns.Error()
	tail := "): " + errs.ErrNotFound.Error()
	if !strings.HasSuffix(fact, tail) {
		return msg
	}
	return strings.Replace(msg, fact, strings.TrimSuffix(fact, tail)+"; see 'memdir checkpoint list'"+tail, 1)
}

// options holds the flag values of memdir checkpoint.
type options struct {
	session, message, from string
	json, dryRun, stat     bool
}

func (f *options) Declare(fs *flag.FlagSet) {
	fs.StringVar(&f.session, "session", "", "session `id` (default $MEMDIR_SESSION_ID, else $CLAUDE_SESSION_ID)")
	fs.StringVar(&f.message, "message", "", "message `id` of the user turn (track, snapshot, diff, rewind)")
	fs.StringVar(&f.from, "from", "", "session `id` to continue (resume)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of text")
	fs.BoolVar(&f.dryRun, "dry-run", false, "rewind: report what would change without touching any file")
	fs.BoolVar(&f.stat, "stat", false, "diff: print line counts per file, not the patches")
}

// A subcommand is one of checkpoint's subcommands: the arguments and
// --message it takes, and what it does.
type subcommand struct {
	args    int  // arguments after the subcommand's name
	message bool // --message is required; without it, refused
	run     func(ctx context.Context, c *invocation) error
}

// subcommands are checkpoint's subcommands by name.
var subcommands = map[string]*subcommand{
	"track":    {args: 1, message: true, run: runTrack},
	"snapshot": {message: true, run: runSnapshot},
	"list":     {run: runList},
	"diff":     {message: true, run: runDiff},
	"rewind":   {message: true, run: runRewind},
	"resume":   {run: runResume},
}

// An invocation is one run of a subcommand on a session's history.
type invocation struct {
	env     *cli.Env
	f       *options
	h       *checkpoint.History
	session string
	args    []string // the subcommand's arguments
}

// run checks the usage, opens the session's history and runs the
// subcommand on it.
func run(ctx context.Context, env *cli.Env, f *options, args []string) error {
	sub, err := checkUsage(f, args)
	if err != nil {
		return err
	}
	session, err := sessionID(env, f.session)
	if err != nil {
		return err
	}
	configHome, err := claudedir.Config(env.LookupEnv)
	if err != nil {
		return err
	}
	h, err := checkpoint.New(configHome, session, &checkpoint.Options{Cwd: env.Cwd, Now: env.Now})
	if err != nil {
		return err
	}
	return sub.run(ctx, &invocation{env: env, f: f, h: h, session: session, args: args[1:]})
}

// checkUsage returns the subcommand args[0] names, after checking, in this
// order, that it exists, that it has the arguments and --message it takes,
// and that --dry-run, --stat and --from are given only where they apply.
func checkUsage(f *options, args []string) (*subcommand, error) {
	if len(args) == 0 {
		return nil, cli.Usagef("missing subcommand: track, snapshot, list, diff, rewind or resume")
	}
	name, rest := args[0], args[1:]
	sub, ok := subcommands[name]
	if !ok {
		return nil, cli.Usagef("unknown subcommand %q: want track, snapshot, list, diff, rewind or resume", name)
	}
	if len(rest) != sub.args {
		if sub.args == 1 {
			return nil, cli.Usagef("checkpoint %s takes one FILE, got %d arguments", name, len(rest))
		}
		return nil, cli.Usagef("checkpoint %s takes no arguments, got %q", name, rest)
	}
	if sub.message && f.message == "" {
		return nil, cli.Usagef("checkpoint %s needs --message", name)
	}
	if !sub.message && f.message != "" {
		return nil, cli.Usagef("checkpoint %s takes no --message", name)
	}
	if f.dryRun && name != "rewind" {
		return nil, cli.Usagef("--dry-run applies to rewind only")
	}
	if f.stat && name != "diff" {
		return nil, cli.Usagef("--stat applies to diff only")
	}
	if (f.from != "") != (name == "resume") {
		return nil, cli.Usagef("--from is required by resume and applies to nothing else")
	}
	return sub, nil
}

// sessionID is the session flag's value, else the first session
// environment variable set.
func sessionID(env *cli.Env, flag string) (string, error) {
	session := flag
	for _, v := range cli.SessionEnvVars {
		if session == "" {
			session = env.Getenv(v)
		}
	}
	if session == "" {
		return "", cli.Usagef("no session id: pass --session or set $%s", strings.Join(cli.SessionEnvVars, " or $"))
	}
	return session, nil
}

func runTrack(ctx context.Context, c *invocation) error {
	r, err := c.h.Track(ctx, c.args[0], c.f.message)
	if err != nil {
		return err
	}
	return cli.Emit(c.env, c.f.json, r, func(w io.Writer) error { printCheckpointTrack(w, r); return nil })
}

// runSnapshot reports the snapshot, then fails if some files kept their
// previous version.
func runSnapshot(ctx context.Context, c *invocation) error {
	r, err := c.h.Snapshot(ctx, c.f.message)
	if err != nil {
		return err
	}
	if err := cli.Emit(c.env, c.f.json, r, func(w io.Writer) error { printCheckpointSnapshot(w, r); return nil }); err != nil {
		return err
	}
	if perr := r.Err(); perr != nil {
		return fmt.Errorf("snapshot %d was recorded, but %s their previous version: %w", r.Snapshot.Sequence, cli.Plural(len(r.Problems), "file kept", "files kept"), perr)
	}
	return nil
}

func runList(ctx context.Context, c *invocation) error {
	all, err := c.h.Snapshots(ctx)
	if err != nil {
		return err
	}
	if all == nil {
		all = []checkpoint.Snapshot{}
	}
	return cli.Emit(c.env, c.f.json, all, func(w io.Writer) error { printCheckpointList(w, all); return nil })
}

func runDiff(ctx context.Context, c *invocation) error {
	r, err := c.h.Diff(ctx, c.f.message)
	if err != nil {
		return err
	}
	return cli.Emit(c.env, c.f.json, r, func(w io.Writer) error {
		printCheckpointDiff(w, c.env.Stderr, c.env.Command, r, c.f.stat)
		return nil
	})
}

// runRewind reports a rewind, partial or not, then fails if it was
// partial.
func runRewind(ctx context.Context, c *invocation) error {
	r, err := c.h.Rewind(ctx, c.f.message, &checkpoint.RewindOptions{DryRun: c.f.dryRun})
	if r == nil {
		return err
	}
	if serr := cli.Emit(c.env, c.f.json, r, func(w io.Writer) error { printCheckpointRewind(w, r, c.env.Command, c.session); return nil }); serr != nil {
		return serr
	}
	if err != nil {
		return fmt.Errorf("rewind to %q was partial: %w", c.f.message, err)
	}
	return nil
}

// runResume reports the resume, then fails naming the backups it could
// not carry over.
func runResume(ctx context.Context, c *invocation) error {
	r, err := c.h.ResumeFrom(ctx, c.f.from)
	if err != nil {
		return err
	}
	err = cli.Emit(c.env, c.f.json, r, func(w io.Writer) error {
		fmt.Fprintf(w, "resumed session %s from %s: %s (%d dropped); backups: %d linked, %d copied, %d already present\n",
			c.session, r.From, cli.Plural(r.Snapshots, "snapshot", "snapshots"), r.Dropped, r.Linked, r.Copied, r.Present)
		return nil
	})
	if err != nil {
		return err
	}
	if len(r.Problems) > 0 {
		errs := make([]string, len(r.Problems))
		for i, p := range r.Problems {
			errs[i] = p.Error()
		}
		return fmt.Errorf("%s could not be carried over:\n  %s", cli.Plural(len(errs), "backup", "backups"), strings.Join(errs, "\n  "))
	}
	return nil
}

func printCheckpointTrack(w io.Writer, r *checkpoint.TrackResult) {
	switch {
	case r.AlreadyTracked:
		fmt.Fprintf(w, "%s is already in snapshot %d (v%d); nothing written\n", r.Path, r.Sequence, r.Backup.Version)
	case r.Backup.Exists():
		fmt.Fprintf(w, "tracked %s: v%d saved as %s, in snapshot %d\n", r.Path, r.Backup.Version, r.Backup.Name, r.Sequence)
	default:
		fmt.Fprintf(w, "tracked %s: does not exist yet (v%d is a null entry), in snapshot %d\n", r.Path, r.Backup.Version, r.Sequence)
	}
}

func printCheckpointSnapshot(w io.Writer, r *checkpoint.SnapshotResult) {
	s := r.Snapshot
	fmt.Fprintf(w, "snapshot %d for message %s: %s (%d changed, %d deleted, %d unchanged",
		s.Sequence, s.MessageID, cli.Plural(len(s.Files), "file", "files"), len(r.Changed), len(r.Deleted), r.Unchanged)
	if len(r.Problems) > 0 {
		fmt.Fprintf(w, ", %d not backed up", len(r.Problems))
	}
	fmt.Fprint(w, ")")
	if r.Evicted > 0 {
		fmt.Fprintf(w, "; evicted the oldest %d", r.Evicted)
	}
	fmt.Fprintln(w)
	for _, p := range r.Changed {
		fmt.Fprintf(w, "  changed  %s (v%d)\n", p, s.Files[p].Version)
	}
	for _, p := range r.Deleted {
		fmt.Fprintf(w, "  deleted  %s\n", p)
	}
}

func printCheckpointList(w io.Writer, all []checkpoint.Snapshot) {
	if len(all) == 0 {
		fmt.Fprintln(w, "no snapshots")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tFILES\tNEW\tMESSAGE")
	var prev map[string]checkpoint.Backup
	for _, s := range all {
		// NEW counts entries that differ from the snapshot before: files
		// changed, deleted or first tracked during the turn before s.
		n := 0
		for _, k := range slices.Sorted(maps.Keys(s.Files)) {
			if old, ok := prev[k]; !ok || old.Version != s.Files[k].Version {
				n++
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\n", s.Sequence, s.Time.Local().Format("2006-01-02 15:04:05"), len(s.Files), n, s.MessageID)
		prev = s.Files
	}
	tw.Flush()
}

func printCheckpointDiff(w, errw io.Writer, command string, r *checkpoint.DiffReport, stat bool) {
	for _, d := range r.Files {
		switch {
		case stat:
			fmt.Fprintf(w, "%-8s %s  +%d -%d%s\n", d.Status, d.Path, d.Added, d.Removed, checkpointDiffNote(d.Binary, d.Approximate))
		case d.Binary:
			fmt.Fprintf(w, "Binary file %s %s\n", d.Path, d.Status)
		default:
			fmt.Fprint(w, d.Patch)
		}
	}
	if stat || len(r.Files) == 0 {
		fmt.Fprintf(w, "%s since snapshot %d (message %s), %d unchanged\n", cli.Plural(len(r.Files), "file changed", "files changed"), r.Sequence, r.MessageID, r.Unchanged)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(errw, "%s: skipped %s\n", command, s)
	}
}

func checkpointDiffNote(binary, approx bool) string {
	switch {
	case binary:
		return " (binary)"
	case approx:
		return " (approximate)"
	}
	return ""
}

func printCheckpointRewind(w io.Writer, r *checkpoint.RewindReport, command, session string) {
	verb := "rewound"
	if r.DryRun {
		verb = "would rewind"
	}
	fmt.Fprintf(w, "%s to snapshot %d (message %s): %s, %d unchanged\n", verb, r.Sequence, r.MessageID, cli.Plural(len(r.Changes), "file changed", "files changed"), r.Unchanged)
	for _, c := range r.Changes {
		fmt.Fprintf(w, "  %-8s %s  +%d -%d%s\n", c.Action, c.Path, c.Added, c.Removed, checkpointDiffNote(c.Binary, c.Approximate))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  skipped  %s\n", s)
	}
	for _, s := range r.Failed {
		fmt.Fprintf(w, "  failed   %s\n", s)
	}
	switch {
	case r.DryRun:
		fmt.Fprintln(w, "dry run: no file was touched")
	case r.UndoMessageID != "":
		fmt.Fprintf(w, "undo with: %s rewind --session %s --message %s\n", command, session, r.UndoMessageID)
	}
}
