package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agentmem"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/review"
)

// locationFlags are the flags that say which memory directory a command works
// on. Commands register the subset that makes sense for them.
type locationFlags struct {
	project string
	dir     string
	team    bool
	agent   string
	scope   string
	// creates is set by the commands that create a missing --dir (those
	// that save memories); the others refuse one, as a likely typo.
	creates bool
}

const locationHelp = `Which directory: by default the project's auto-memory directory, found by
Claude Code's rules from the working directory (see 'memdir path --explain').
--project DIR resolves from DIR instead; --dir DIR uses DIR as the memory
directory as is; --agent TYPE --scope user|project|local selects an agent's
memory. For project paths longer than 200 characters Claude Code hashes the
name, differently on Node.js (npm install) and Bun (native build): memdir
uses whichever of the two directories exists, Bun's when neither or both do,
and MEMDIR_HASH_RUNTIME=node|bun forces one.`

// register adds --project, --dir, --agent and --scope, and --team when team is set.
func (lf *locationFlags) register(fs *flag.FlagSet, team bool) {
	fs.StringVar(&lf.project, "project", "", "resolve the memory directory from `DIR` instead of the working directory")
	fs.StringVar(&lf.dir, "dir", "", "use `DIR` as the memory directory, bypassing Claude Code's rules")
	fs.StringVar(&lf.agent, "agent", "", "work on the memory of agent `TYPE` (with --scope)")
	fs.StringVar(&lf.scope, "scope", "", "agent memory `SCOPE`: user, project or local (with --agent)")
	if team {
		fs.BoolVar(&lf.team, "team", false, "work on the team memory (team/ under the memory directory)")
	}
}

// locate applies Claude Code's rules from the working directory or --project.
func (lf *locationFlags) locate(env *cli.Env) (*locate.Location, error) {
	opts := &locate.LocateOptions{LookupEnv: env.LookupEnv, Cwd: env.Cwd}
	if lf.project != "" {
		p := lf.project
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Cwd, p)
		}
		opts.Project = p
	}
	switch rt := strings.ToLower(env.Getenv("MEMDIR_HASH_RUNTIME")); rt {
	case "":
		opts.DetectRuntime = true
	case "bun":
	case "node":
		opts.Runtime = locate.HashNode
	default:
		return nil, fmt.Errorf("MEMDIR_HASH_RUNTIME=%q: want bun or node: %w", rt, memdir.ErrInvalid)
	}
	return locate.Locate(opts)
}

// path returns the directory the command works on: --dir, an agent's
// directory, or the located auto-memory directory. The Location is nil with
// --dir. team is not applied here: team memories live inside the same
// directory under team/.
func (lf *locationFlags) path(env *cli.Env) (string, *locate.Location, error) {
	if (lf.agent == "") != (lf.scope == "") {
		return "", nil, cli.Usagef("--agent and --scope go together")
	}
	if lf.dir != "" {
		if lf.agent != "" || lf.project != "" {
			return "", nil, cli.Usagef("--dir cannot be combined with --agent or --project")
		}
		d := lf.dir
		if !filepath.IsAbs(d) {
			d = filepath.Join(env.Cwd, d)
		}
		d = filepath.Clean(d)
		return d, nil, lf.checkDir(d)
	}
	loc, err := lf.locate(env)
	if err != nil {
		return "", nil, err
	}
	if err := checkHome(env, loc.Dir); err != nil {
		return "", nil, err
	}
	if lf.agent != "" {
		if lf.team {
			return "", nil, cli.Usagef("--team cannot be combined with --agent")
		}
		scope, err := locate.ParseAgentScope(lf.scope)
		if err != nil {
			return "", nil, err
		}
		d, err := loc.AgentDir(lf.agent, scope)
		if err != nil {
			return "", nil, err
		}
		warnUnknownAgent(env, loc, lf.agent)
		return filepath.Clean(d), loc, nil
	}
	return filepath.Clean(loc.Dir), loc, nil
}

// checkDir refuses a --dir that is not a directory, and one that does not
// exist unless the command creates it.
func (lf *locationFlags) checkDir(d string) error {
	fi, err := os.Stat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist) && lf.creates:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--dir %s: no such directory (a save there creates it): %w", d, memdir.ErrNotFound)
	case err != nil:
		return fmt.Errorf("--dir %s: %w", d, err)
	case !fi.IsDir():
		return fmt.Errorf("--dir %s is not a directory: %w", d, memdir.ErrInvalid)
	}
	return nil
}

// open returns the store for the selected directory.
func (lf *locationFlags) open(env *cli.Env) (*memdir.Dir, *locate.Location, error) {
	d, _, loc, err := lf.openReview(env)
	return d, loc, err
}

// openReview is open that also returns the directory's review queue, which
// screens the store's automatic writes.
func (lf *locationFlags) openReview(env *cli.Env) (*memdir.Dir, *review.Queue, *locate.Location, error) {
	p, loc, err := lf.path(env)
	if err != nil {
		return nil, nil, nil, err
	}
	d, q, err := openStore(env, p, &memdir.Options{ProjectRoot: anchorRoot(env, loc)})
	if err != nil {
		return nil, nil, nil, err
	}
	return d, q, loc, nil
}

// openStore opens the memory directory at p with its review queue as its
// guard and its recall index to find memories by name, on the command's
// clock and environment.
func openStore(env *cli.Env, p string, opts *memdir.Options) (*memdir.Dir, *review.Queue, error) {
	o := *opts
	o.Now, o.LookupEnv = env.Now, env.LookupEnv
	// Without a state directory, saves fall back to a scan.
	if cache, err := recall.DefaultIndexPath(p, env.LookupEnv); err == nil {
		o.Names = recall.NewNames(p, cache)
	}
	return review.Open(p, &o, nil)
}

// anchorRoot is the project that code anchors are recorded against: the
// located project's git root (or the project directory outside git), or,
// with --dir, the git repository holding the working directory; "" (anchors
// off) with --dir outside a repository, or when MEMDIR_ANCHORS=0.
func anchorRoot(env *cli.Env, loc *locate.Location) string {
	if v := env.Getenv("MEMDIR_ANCHORS"); v == "0" || strings.EqualFold(v, "off") {
		return ""
	}
	if loc == nil {
		root, _ := locate.FindGitRoot(env.Cwd)
		return root
	}
	if loc.GitRoot != "" {
		return loc.GitRoot
	}
	return loc.ProjectRoot
}

// openEnabled is open for the commands that read or write memories the way
// Claude Code does (save, recall, mcp): when auto memory is turned off for
// the project, they refuse, as Claude Code does, with an error (exit 8)
// naming the setting. An explicit --dir is the user's own directory and is
// always served; so is an agent's memory (--agent), which the auto-memory
// setting does not govern.
func (lf *locationFlags) openEnabled(env *cli.Env) (*memdir.Dir, *locate.Location, error) {
	d, loc, err := lf.open(env)
	if err != nil {
		return nil, nil, err
	}
	if loc != nil && !loc.Enabled && lf.agent == "" {
		return nil, nil, disabledError(loc)
	}
	return d, loc, nil
}

// disabledError says that auto memory is off, by which setting, and how to
// work on a directory anyway.
func disabledError(loc *locate.Location) error {
	return fmt.Errorf("%w (%s), so Claude Code neither loads nor saves this project's memory and memdir does not either; turn it back on, or pass --dir %s to use the directory anyway", memdir.ErrDisabled, loc.EnabledReason, loc.Dir)
}

// teamPrefix is the path prefix of team memories inside a memory directory.
const teamPrefix = memdir.TeamDirName + "/"

// warnUnknownAgent warns when no agent definition names agent: most likely a
// typo, though plugin and built-in agents have no definition file either, so
// the command goes on.
func warnUnknownAgent(env *cli.Env, loc *locate.Location, agent string) {
	defs, _, err := agentmem.LoadDefs(loc)
	if err != nil {
		return
	}
	for _, d := range defs {
		if d.Name == agent {
			return
		}
	}
	fmt.Fprintf(env.Stderr, "warning: no agent named %q is defined in %s or the project's .claude/agents/ (a typo? plugin and built-in agents have no definition file)\n", agent, filepath.Join(loc.ConfigHome, "agents"))
}

// checkHome refuses a memory directory under a HOME that does not exist:
// creating the directory would create the user's home too, which is never
// memdir's to make.
func checkHome(env *cli.Env, dir string) error {
	home, ok := env.LookupEnv("HOME")
	if !ok || home == "" || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	if rel, err := filepath.Rel(home, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	if _, err := os.Stat(home); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("HOME is %s, which does not exist; memdir does not create a home directory: set HOME to yours, or pass --dir DIR: %w", home, memdir.ErrNotFound)
	}
	return nil
}
