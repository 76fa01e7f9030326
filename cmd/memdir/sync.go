package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/progress"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/team"
)

var syncCmd = &cli.Command{
	Name:  "sync",
	Args:  "pull|push|status|watch|resolve KEY [--ours|--theirs|--edit] [--url URL] [--token TOKEN] [--repo OWNER/NAME] [--json]",
	Short: "sync team memory with a team memory server",
	Long: `Sync shares the team/ part of the memory directory with a team memory server
('memdir serve', or any server speaking Claude Code's team memory protocol).

  pull    fetch the server's entries and bring them into team/, key by key,
          against the content the key had at the last pull or push (its
          base, kept outside team/): a key you did not change takes the
          server's version; a key only you changed is kept; a key both
          sides changed is merged line by line when the changes do not
          overlap, and is otherwise a conflict (below). team/MEMORY.md is
          merged by link target; only a pointer line both sides changed
          makes it a conflict. Files whose content is identical are not
          touched. Every key is checked before anything is written (no
          path traversal, no URL-encoded or Unicode tricks, no symlink
          escapes, no hidden names such as .git/config); a key that cannot
          be written is skipped and listed, and the pull goes on. A pull
          is journaled: 'memdir undo' reverts it.
  push    upload the files of team/ you changed since their base, in
          batches, each conditional on the server's checksum. A file you
          did not change is never sent, so a teammate's newer version is
          never overwritten. When the server changed a key you changed too
          (or another push gets in first: 412), the push brings the
          server's entries in as a pull does, merging, and sends the
          result. Files over 250,000 bytes, files that look like they hold
          a secret (the rule is named, never the value), symlinks and
          non-text files are skipped and listed. Deleting a file locally
          never deletes it on the server. Journaled like a pull.
  status  compare team/ with the server and the bases without changing
          either: what you changed, what teammates changed, what both
          changed, and the open conflicts.
  watch   pull once, push what changed while nothing watched, then push
          after every change to team/ (2 s quiet period) until
          interrupted; after a permanent failure (bad token, read-only
          token, rejected content) stop pushing until a file is removed
          or the watch restarts. On exit, push what is pending.
  resolve KEY --ours|--theirs|--edit
          finish a conflict, without the server. --ours puts your saved
          version into team/KEY, --theirs keeps the server's and removes
          your saved copy, --edit opens $VISUAL or $EDITOR on the two
          versions between conflict markers and puts the result in
          team/KEY once no marker is left. Journaled: 'memdir undo'
          reopens the conflict. Run 'memdir sync push' afterwards.

Conflicts: when you and a teammate changed the same lines of a key, team/KEY
holds the server's version (so nothing unmerged is pushed) and your version
is saved at the path 'sync status' prints (under the state directory, outside
team/). pull, push and status list it until it is resolved; doctor reports it.

Configuration: a flag wins over the environment, which wins over the config
file's team: section (see 'memdir config'):
  --url     MEMDIR_TEAM_URL or TEAM_MEMORY_SYNC_URL, team.url: the server's
            base URL
  --token   MEMDIR_TEAM_TOKEN, team.token (prefer the variable: flags show
            in ps)
  --repo    MEMDIR_TEAM_REPO, team.repo (owner/name or github.com/owner/name);
            by default the github.com remote "origin" of the project's git
            repository, read from .git/config of the canonical git root
            (worktrees share their main repository's), https or ssh form;
            git is not run.
  --team-dir  the team directory; default: team/ under the project's
            auto-memory directory, found by Claude Code's rules from the
            working directory (see 'memdir path --explain'), or from
            --project DIR, or under --dir DIR taken as the memory directory.

Pull and push show progress (status, watch and resolve do not).
` + progressHelp + `

Exit status: 5 when a pull or push recorded a conflict (resolve it), or a push
kept meeting other writers (run it again); 6 when a pull skipped keys it could
not write (each is listed with the reason), including entries that
injection screening held for review ('memdir review'); 3 when resolve finds no conflict
on KEY.

Examples:
  export MEMDIR_TEAM_URL=https://memdir.example.com MEMDIR_TEAM_TOKEN=mdt_...
  memdir sync pull
  memdir sync push --json
  memdir sync status --repo acme/widgets
  memdir sync resolve build.md --edit
  memdir sync watch`,
	Setup: cli.Setup(runSync),
}

// syncOptions holds the flag values of memdir sync.
type syncOptions struct {
	lf        locationFlags
	serverURL string
	token     string
	repo      string
	teamDir   string
	asJSON    bool
	debounce  time.Duration
	verbose   bool
	quiet     bool
	ours      bool
	theirs    bool
	edit      bool
}

func (o *syncOptions) Declare(fs *flag.FlagSet) {
	// Only the flags that choose a memory directory: team memory
	// has no agent scope.
	fs.StringVar(&o.lf.project, "project", "", "resolve the memory directory (and the git remote) from `DIR` instead of the working directory")
	fs.StringVar(&o.lf.dir, "dir", "", "use `DIR` as the memory directory, bypassing Claude Code's rules")
	fs.StringVar(&o.serverURL, "url", "", "team memory server base `URL` (default: $MEMDIR_TEAM_URL or $TEAM_MEMORY_SYNC_URL)")
	fs.StringVar(&o.token, "token", "", "bearer `TOKEN` (default: $MEMDIR_TEAM_TOKEN)")
	fs.StringVar(&o.repo, "repo", "", "repository `OWNER/NAME` (default: from the git remote \"origin\" on github.com)")
	fs.StringVar(&o.teamDir, "team-dir", "", "sync `DIR` instead of team/ under the memory directory")
	fs.BoolVar(&o.asJSON, "json", false, "print results as JSON (watch: one JSON object per line)")
	fs.DurationVar(&o.debounce, "debounce", 2*time.Second, "watch: quiet period before a push")
	fs.BoolVar(&o.verbose, "v", false, "log each request and file to stderr")
	fs.BoolVar(&o.quiet, "quiet", false, "pull, push: show no progress")
	fs.BoolVar(&o.ours, "ours", false, "resolve: take your version")
	fs.BoolVar(&o.theirs, "theirs", false, "resolve: keep the server's version")
	fs.BoolVar(&o.edit, "edit", false, "resolve: merge the two by hand in $VISUAL or $EDITOR")
}

func runSync(ctx context.Context, env *cli.Env, o *syncOptions, args []string) error {
	if err := checkSyncArgs(o, args); err != nil {
		return err
	}
	action := args[0]
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(env.Stderr, nil))
	}
	s, err := newSyncer(env, &o.lf, syncConfig{url: o.serverURL, token: o.token, repo: o.repo, teamDir: o.teamDir, local: action == "resolve"}, logger)
	if err != nil {
		return err
	}
	switch action {
	case "pull":
		s.prog = env.Progress("sync pull", o.quiet || o.asJSON)
		defer s.prog.Stop()
		return s.pull(ctx, env, o.asJSON)
	case "push":
		s.prog = env.Progress("sync push", o.quiet || o.asJSON)
		defer s.prog.Stop()
		return s.push(ctx, env, o.asJSON)
	case "status":
		return s.status(ctx, env, o.asJSON)
	case "resolve":
		return s.resolve(ctx, env, args[1], o.resolution(), o.asJSON)
	default:
		return s.watch(ctx, env, o.asJSON, o.debounce)
	}
}

// checkSyncArgs checks that args name an action with the arguments it
// takes, and that resolve chooses exactly one side.
func checkSyncArgs(o *syncOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("sync needs one of pull, push, status, watch, resolve")
	}
	action := args[0]
	switch action {
	case "pull", "push", "status", "watch":
		if len(args) != 1 {
			return cli.Usagef("sync %s takes no arguments", action)
		}
	case "resolve":
		if len(args) != 2 {
			return cli.Usagef("sync resolve needs one KEY (a path under team/, as 'sync status' lists it)")
		}
		n := 0
		for _, b := range []bool{o.ours, o.theirs, o.edit} {
			if b {
				n++
			}
		}
		if n != 1 {
			return cli.Usagef("sync resolve needs exactly one of --ours, --theirs, --edit")
		}
	default:
		return cli.Usagef("unknown sync action %q: want pull, push, status, watch or resolve", action)
	}
	return nil
}

// resolution is the side resolve's flags choose.
func (o *syncOptions) resolution() team.Resolution {
	switch {
	case o.theirs:
		return team.ResolveTheirs
	case o.edit:
		return team.ResolveText
	}
	return team.ResolveOurs
}

// pull runs sync pull. After a failure it shows what was done before it,
// if anything: a refused pull prints its error only.
func (s *syncer) pull(ctx context.Context, env *cli.Env, asJSON bool) error {
	res, err := s.client.Pull(ctx, false)
	s.prog.Stop() // before the result
	if res != nil && (err == nil || len(res.Written)+len(res.Merged)+len(res.Conflicts) > 0) {
		if perr := cli.Emit(env, asJSON, res, func(w io.Writer) error { printPull(w, s.repo, res); return nil }); err == nil {
			err = perr
		}
	}
	if err == nil && len(res.Conflicts) > 0 {
		return &cli.ExitError{Code: cli.ExitExists}
	}
	if err == nil && len(res.Skipped) > 0 {
		return &cli.ExitError{Code: cli.ExitProblems}
	}
	return err
}

// push runs sync push. After a failure it shows what was done before it,
// if anything; an empty result would read "nothing to push".
func (s *syncer) push(ctx context.Context, env *cli.Env, asJSON bool) error {
	res, err := s.client.Push(ctx)
	s.prog.Stop() // before the result
	if res != nil && (err == nil || len(res.Pushed)+len(res.Skipped)+len(res.Pulled)+len(res.Merged)+len(res.Conflicts) > 0) {
		if perr := cli.Emit(env, asJSON, res, func(w io.Writer) error { printPush(w, s.repo, res); return nil }); err == nil {
			err = perr
		}
	}
	if err == nil && len(res.Conflicts) > 0 {
		return &cli.ExitError{Code: cli.ExitExists}
	}
	return err
}

// status runs sync status.
func (s *syncer) status(ctx context.Context, env *cli.Env, asJSON bool) error {
	st, err := s.client.Status(ctx)
	if err != nil {
		return err
	}
	return cli.Emit(env, asJSON, st, func(w io.Writer) error { printStatus(w, st); return nil })
}

type syncConfig struct {
	url, token, repo, teamDir string
	// local: the action needs no server (resolve).
	local bool
}

// syncer is a team.Client plus what the command needs around it: the
// journal that makes pulls undoable and the memory directory lock.
type syncer struct {
	client  *team.Client
	repo    string
	teamDir string
	dir     *memdir.Dir // the directory the journal records paths under
	rec     *memdir.Recorder
	// prog shows the progress of a pull or push; nil shows none.
	prog *progress.Reporter
}

// newSyncer builds the syncer of one sync command: the server and token
// (none needed for a local action), the team directory, the store that
// journals and screens what is pulled, the repository, and the client.
func newSyncer(env *cli.Env, lf *locationFlags, cfg syncConfig, log *slog.Logger) (*syncer, error) {
	conf, err := loadConfig(env)
	if err != nil {
		return nil, err
	}
	base, token, err := syncServer(cfg, conf)
	if err != nil {
		return nil, err
	}
	s := &syncer{}
	root, err := s.locateTeamDir(env, lf, cfg.teamDir)
	if err != nil {
		return nil, err
	}
	dir, queue, err := openStore(env, root, &memdir.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	s.dir = dir
	if s.repo, err = syncRepo(env, lf, firstNonEmpty(cfg.repo, conf.Team.Repo.Value)); err != nil {
		return nil, err
	}
	var repos team.Repos = noServer{}
	if base != "" && token != "" {
		if repos, err = team.NewRemote(base, token, &team.RemoteOptions{UserAgent: "memdir/" + cli.Version, Logger: log}); err != nil {
			return nil, err
		}
	}
	s.client, err = team.NewClient(repos, s.repo, s.teamDir, s.clientOptions(env, queue, base, log))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// syncServer returns the server's base URL and the token, flag over
// configuration; an action that is not local needs both.
func syncServer(cfg syncConfig, conf *config.Config) (base, token string, err error) {
	base = firstNonEmpty(cfg.url, conf.Team.URL.Value)
	if base == "" && !cfg.local {
		return "", "", fmt.Errorf("no team memory server: pass --url, set MEMDIR_TEAM_URL or team.url in the config file: %w", memdir.ErrInvalid)
	}
	token = firstNonEmpty(cfg.token, conf.Team.Token.Value)
	if token == "" && !cfg.local {
		return "", "", team.ErrNoToken
	}
	return base, token, nil
}

// locateTeamDir sets the team directory, --team-dir (from the working
// directory) or team/ under the memory directory, and returns the
// directory the journal records paths under: the memory directory, or the
// team directory itself when --team-dir names one directly.
func (s *syncer) locateTeamDir(env *cli.Env, lf *locationFlags, teamDir string) (string, error) {
	if teamDir != "" {
		s.teamDir = teamDir
		if !filepath.IsAbs(s.teamDir) {
			s.teamDir = filepath.Join(env.Cwd, s.teamDir)
		}
		return s.teamDir, nil
	}
	root, _, err := lf.path(env)
	if err != nil {
		return "", err
	}
	s.teamDir = filepath.Join(root, memdir.TeamDirName)
	return root, nil
}

// syncRepo is repo normalised, or, when repo is empty, the repository of
// the project's git remote (--project, else the working directory).
func syncRepo(env *cli.Env, lf *locationFlags, repo string) (string, error) {
	if repo == "" {
		project := env.Cwd
		if lf.project != "" {
			project = lf.project
			if !filepath.IsAbs(project) {
				project = filepath.Join(env.Cwd, project)
			}
		}
		var err error
		if repo, err = team.RepoFromGit(project); err != nil {
			return "", err
		}
	}
	if r, ok := team.GitHubRepo("https://" + strings.TrimPrefix(repo, "https://")); ok && strings.Contains(repo, "github.com") {
		repo = r // github.com/owner/name, as the config file may say
	}
	return team.NormalizeRepo(repo)
}

// clientOptions are the team client's options: the journal and lock
// around every write, and the screening and provenance of what a pull
// writes, through queue, with base ("none" without one) and the
// repository as the entries' origin.
func (s *syncer) clientOptions(env *cli.Env, queue *review.Queue, base string, log *slog.Logger) *team.ClientOptions {
	server := base
	if server == "" {
		server = "none"
	}
	// A pulled entry's provenance: the server and repository, and the
	// checksum of what was written.
	origin := func(content string) *memdir.Provenance {
		return &memdir.Provenance{By: memdir.BySync, Server: server + "/" + s.repo, Version: team.EntryChecksum(content)}
	}
	relOf := func(abs string) (string, error) {
		rel, err := filepath.Rel(s.dir.Path(), abs)
		return filepath.ToSlash(rel), err
	}
	return &team.ClientOptions{
		BeforeWrite: s.beforeWrite, Wrap: s.wrap, LookupEnv: env.LookupEnv, Now: env.Now, Logger: log,
		Progress: func(stage string, done, total int) { s.prog.Step(stage, done, total) },
		Screen: func(abs, old string, exists bool, content string) error {
			rel, err := relOf(abs)
			if err != nil {
				return err
			}
			// The client keeps the error's text as the skipped key's
			// detail: give it memdir's advice (a held write's review).
			return withAdvice(queue.ScreenWrite(rel, []byte(old), exists, []byte(content), origin(content)))
		},
		// The file stays the server's byte for byte (a provenance line would
		// make the next push upload it, and teammates' pulls rewrite it), so
		// the record is kept outside the directory.
		// Only memories get a record: MEMORY.md and other files are not
		// memories.
		AfterWrite: func(abs, content string) error {
			rel, err := relOf(abs)
			if err != nil {
				return err
			}
			if _, err := memdir.CleanMemoryFilePath(rel); err != nil {
				return nil
			}
			return queue.RecordProvenance(rel, []byte(content), origin(content))
		},
	}
}

// syncConflictFindings reports, as doctor findings, the open team sync
// conflicts of the memory directory's team/, for every repository it was
// synced with. It reads the sync state only; no server is asked.
func syncConflictFindings(ctx context.Context, env *cli.Env, memDir string) ([]doctor.Finding, error) {
	teamDir := filepath.Join(memDir, memdir.TeamDirName)
	root, err := team.SyncStateDir(teamDir, env.LookupEnv)
	if err != nil {
		return nil, err
	}
	states, _ := filepath.Glob(filepath.Join(root, "*", "*", "state.json"))
	var out []doctor.Finding
	for _, p := range states {
		repo := filepath.Base(filepath.Dir(filepath.Dir(p))) + "/" + filepath.Base(filepath.Dir(p))
		c, err := team.NewClient(noServer{}, repo, teamDir, &team.ClientOptions{StateDir: root, LookupEnv: env.LookupEnv})
		if err != nil {
			continue // not a repository's state
		}
		cs, err := c.Conflicts(ctx)
		if err != nil {
			return nil, err
		}
		for _, cf := range cs {
			out = append(out, doctor.Finding{
				Kind: "sync-conflict",
				Path: memdir.TeamDirName + "/" + cf.Key,
				Message: fmt.Sprintf("you and a teammate changed it in the same lines (%s): it holds the server's version, yours is at %s; run 'memdir sync resolve %s --ours|--theirs|--edit'",
					repo, cf.LocalCopy, cf.Key),
				Related: []string{cf.LocalCopy},
			})
		}
	}
	return out, nil
}

// noServer is the Repos of an action that needs none (resolve).
type noServer struct{}

func (noServer) Get(context.Context, string, *team.GetOptions) (*team.Data, error) {
	return nil, team.ErrNoToken
}

func (noServer) Put(context.Context, string, *team.Update) (*team.Data, error) {
	return nil, team.ErrNoToken
}

func (noServer) History(context.Context, string, *team.HistoryOptions) ([]team.VersionInfo, error) {
	return nil, team.ErrNoToken
}

// beforeWrite journals a file a pull, push or resolve is about to create,
// overwrite or remove.
func (s *syncer) beforeWrite(abs string) error {
	if s.rec == nil {
		return errors.New("internal error: a sync write outside a journal run")
	}
	rel, err := filepath.Rel(s.rec.Root(), abs)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("internal error: %s is outside the journal run's directory %s", abs, s.rec.Root())
	}
	return s.rec.Before(filepath.ToSlash(rel))
}

// wrap runs a pull or push (team.ClientOptions.Wrap) as one journaled run
// under the memory directory's lock, so that 'memdir undo' can revert what
// it wrote into team/ and it does not interleave with other memdir writes.
func (s *syncer) wrap(ctx context.Context, op string, fn func() (string, error)) error {
	return s.journaled(ctx, op, s.dir.Path(), fn)
}

func (s *syncer) journaled(ctx context.Context, kind, root string, fn func() (string, error)) error {
	_, err := s.dir.Change(ctx, kind, &memdir.ChangeOptions{Root: root}, func(rec *memdir.Recorder) error {
		s.rec = rec
		defer func() { s.rec = nil }()
		summary, err := fn()
		rec.SetSummary(summary)
		return err
	})
	return err
}

// syncResolveJSON is 'memdir sync resolve --json'.
type syncResolveJSON struct {
	Key        string `json:"key"`
	Path       string `json:"path"`
	Resolution string `json:"resolution"` // ours, theirs or edit
}

// resolve finishes a conflict as one journaled run: of the memory
// directory when it writes team/KEY, of the conflict directory when it
// removes your saved copy (--theirs), so that 'memdir undo' reopens it.
func (s *syncer) resolve(ctx context.Context, env *cli.Env, key string, how team.Resolution, asJSON bool) error {
	key = filepath.ToSlash(strings.TrimPrefix(filepath.ToSlash(key), memdir.TeamDirName+"/"))
	text := ""
	if how == team.ResolveText {
		base, yours, theirs, err := s.client.ConflictTexts(ctx, key)
		if err != nil {
			return err
		}
		m := team.Merge3(base, yours, theirs)
		tmp, err := os.CreateTemp("", "memdir-resolve-*-"+filepath.Base(key))
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		_, werr := tmp.WriteString(m.Text)
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("resolve %s: %w", key, werr)
		}
		if err := runEditor(ctx, env, tmp.Name()); err != nil {
			return err
		}
		b, err := os.ReadFile(tmp.Name())
		if err != nil {
			return fmt.Errorf("resolve %s: %w", key, err)
		}
		if team.HasConflictMarkers(string(b)) {
			return fmt.Errorf("resolve %s: the edited text still holds conflict markers (%s ... %s); nothing was changed, run resolve --edit again: %w", key, team.MarkerOurs, team.MarkerTheirs, memdir.ErrInvalid)
		}
		text = string(b)
	}
	root := s.dir.Path()
	if how == team.ResolveTheirs {
		root = s.client.ConflictDir()
	}
	var cf *team.Conflict
	err := s.journaled(ctx, "sync-resolve", root, func() (string, error) {
		var err error
		cf, err = s.client.Resolve(ctx, key, how, text)
		return fmt.Sprintf("sync resolve %s %s", key, map[team.Resolution]string{team.ResolveOurs: "--ours", team.ResolveTheirs: "--theirs", team.ResolveText: "--edit"}[how]), err
	})
	if err != nil {
		return err
	}
	out := syncResolveJSON{Key: key, Path: cf.Path, Resolution: map[team.Resolution]string{team.ResolveOurs: "ours", team.ResolveTheirs: "theirs", team.ResolveText: "edit"}[how]}
	return cli.Emit(env, asJSON, out, func(w io.Writer) error {
		switch how {
		case team.ResolveTheirs:
			fmt.Fprintf(w, "Resolved %s: kept the server's version; your copy %s is removed ('memdir undo' brings it back).\n", key, cf.LocalCopy)
		case team.ResolveText:
			fmt.Fprintf(w, "Resolved %s: %s now holds the text you edited; run 'memdir sync push' to share it.\n", key, cf.Path)
		default:
			fmt.Fprintf(w, "Resolved %s: %s now holds your version; run 'memdir sync push' to share it.\n", key, cf.Path)
		}
		return nil
	})
}

// syncWatchEvent is one line of 'memdir sync watch --json'.
type syncWatchEvent struct {
	Time  string `json:"time"`
	Event string `json:"event"` // pull or push
	// Result is the *team.PullResult or *team.PushResult, null after a
	// failure.
	Result any    `json:"result"`
	Error  string `json:"error,omitempty"`
}

func (s *syncer) watch(ctx context.Context, env *cli.Env, asJSON bool, debounce time.Duration) error {
	res, err := s.client.Pull(ctx, false)
	report := func(kind string, v any, err error, text func(io.Writer)) {
		if asJSON {
			ev := syncWatchEvent{Time: env.Now().UTC().Format(time.RFC3339), Event: kind, Result: v}
			if err != nil {
				ev.Error = advise(err)
			}
			cli.WriteJSONLine(env.Stdout, ev)
			return
		}
		if err != nil {
			fmt.Fprintf(env.Stdout, "%s %s failed: %s\n", env.Now().Format(time.TimeOnly), kind, advise(err))
			return
		}
		if text != nil {
			text(env.Stdout)
		}
	}
	report("pull", res, err, func(w io.Writer) { printPull(w, s.repo, res) })
	if err != nil && team.IsPermanent(err) {
		return err
	}
	if !asJSON {
		fmt.Fprintf(env.Stdout, "Watching %s for changes (Ctrl-C to stop).\n", s.teamDir)
	}
	return s.client.Watch(ctx, &team.WatchOptions{
		Debounce: debounce,
		OnPush: func(r *team.PushResult, err error) {
			if err == nil && len(r.Pushed) == 0 && len(r.Skipped) == 0 {
				return // nothing to send: stay quiet
			}
			report("push", r, err, func(w io.Writer) { printPush(w, s.repo, r) })
		},
	})
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func printPull(w io.Writer, repo string, r *team.PullResult) {
	switch {
	case r.NotModified:
		fmt.Fprintf(w, "%s: already up to date.\n", repo)
		return
	case r.Empty:
		fmt.Fprintf(w, "%s: the server has no team memory yet; nothing to pull.\n", repo)
		return
	}
	fmt.Fprintf(w, "Pulled %s version %d: %d written, %d merged, %d kept, %d unchanged, %d skipped, %d conflicts.\n",
		repo, r.Version, len(r.Written), len(r.Merged), len(r.Kept), r.Unchanged, len(r.Skipped), len(r.Conflicts))
	conflicted := map[string]bool{}
	for _, c := range r.Conflicts {
		conflicted[c.Key] = true
	}
	for _, k := range r.Written {
		if !conflicted[k] {
			fmt.Fprintf(w, "  wrote    %s\n", k)
		}
	}
	for _, k := range r.Merged {
		fmt.Fprintf(w, "  merged   %s: your changes and the server's; push to share the result\n", k)
	}
	for _, k := range r.Kept {
		fmt.Fprintf(w, "  kept     %s: changed only here; push to share it\n", k)
	}
	printConflicts(w, r.Conflicts)
	printSkips(w, r.Skipped)
}

func printPush(w io.Writer, repo string, r *team.PushResult) {
	conflicted := map[string]bool{}
	for _, c := range r.Conflicts {
		conflicted[c.Key] = true
	}
	for _, k := range r.Pulled {
		if !conflicted[k] {
			fmt.Fprintf(w, "  pulled   %s: a teammate's newer version\n", k)
		}
	}
	for _, k := range r.Merged {
		fmt.Fprintf(w, "  merged   %s: your changes and a teammate's\n", k)
	}
	if len(r.Pushed) == 0 {
		fmt.Fprintf(w, "%s: nothing to push (%s already on the server).\n", repo, cli.Plural(r.Unchanged, "entry", "entries"))
	} else {
		fmt.Fprintf(w, "Pushed %s to %s in %s (version %d); %d unchanged", cli.Plural(len(r.Pushed), "entry", "entries"), repo, cli.Plural(r.Requests, "request", "requests"), r.Version, r.Unchanged)
		if r.Retries > 0 {
			fmt.Fprintf(w, "; merged after %s", cli.Plural(r.Retries, "concurrent push", "concurrent pushes"))
		}
		fmt.Fprintln(w, ".")
		for _, k := range r.Pushed {
			fmt.Fprintf(w, "  pushed   %s\n", k)
		}
	}
	for _, k := range r.Stale {
		fmt.Fprintf(w, "  kept     %s: a teammate changed it on the server and you did not; pull to get their version\n", k)
	}
	printConflicts(w, r.Conflicts)
	printSkips(w, r.Skipped)
}

// printConflicts says, for each conflict, where both versions are and how
// to finish it.
func printConflicts(w io.Writer, cs []team.Conflict) {
	for _, c := range cs {
		why := "you and a teammate changed the same lines"
		if c.NoBase {
			why = "it differs from the server's and was never synced here"
		}
		fmt.Fprintf(w, "  CONFLICT %s: %s.\n", c.Key, why)
		fmt.Fprintf(w, "           server's version: %s (not pushed)\n", c.Path)
		fmt.Fprintf(w, "           your version:     %s\n", c.LocalCopy)
		fmt.Fprintf(w, "           finish with: memdir sync resolve %s --ours|--theirs|--edit\n", c.Key)
	}
}

func printSkips(w io.Writer, skips []team.Skip) {
	for _, s := range skips {
		why := s.Reason
		switch s.Reason {
		case team.SkipSecret:
			why = fmt.Sprintf("potential secret: %s (rule %s); remove it to share this file", s.Label, s.RuleID)
		case team.SkipTooLarge:
			why = "over 250,000 bytes (" + s.Detail + ")"
		case team.SkipInvalidKey:
			why = "unsafe name: " + s.Detail
		case team.SkipNotText:
			why = "not UTF-8 text"
		case team.SkipNotRegular:
			why = "not a regular file: " + s.Detail
		case team.SkipUnwritable:
			why = "cannot be written here: " + s.Detail
		case team.SkipHeld:
			why = "held: " + s.Detail
		case team.SkipOverLimit, team.SkipUnreadable:
			why = s.Reason + ": " + s.Detail
		}
		fmt.Fprintf(w, "  skipped  %s: %s\n", s.Key, why)
	}
}

func printStatus(w io.Writer, st *team.Status) {
	if st.ServerEmpty {
		fmt.Fprintf(w, "%s: the server has no team memory yet.\n", st.Repo)
	} else {
		fmt.Fprintf(w, "%s at version %d (%s).\n", st.Repo, st.Version, st.Checksum)
	}
	fmt.Fprintf(w, "Team directory %s: %d in sync.\n", st.TeamDir, st.InSync)
	for _, sec := range []struct {
		title string
		keys  []string
	}{
		{"Only here (push uploads them):", st.LocalOnly},
		{"Changed here (push uploads them):", st.Modified},
		{"Changed on the server (pull brings them):", st.ServerChanged},
		{"Changed on both sides (pull or push merges them, or records a conflict):", st.BothChanged},
		{"Only on the server (pull fetches them):", st.ServerOnly},
	} {
		if len(sec.keys) == 0 {
			continue
		}
		fmt.Fprintln(w, sec.title)
		for _, k := range sec.keys {
			fmt.Fprintf(w, "  %s\n", k)
		}
	}
	if len(st.Conflicts) > 0 {
		fmt.Fprintln(w, "Unresolved conflicts:")
		printConflicts(w, st.Conflicts)
	}
	if len(st.Skipped) > 0 {
		fmt.Fprintln(w, "Never pushed:")
		printSkips(w, st.Skipped)
	}
}

// redactURL hides credentials embedded in a remote URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("…")
		return u.String()
	}
	return s
}
