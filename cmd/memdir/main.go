// Command memdir finds, reads, writes, checks, recalls and syncs Claude Code
// compatible agent memory directories.
//
// The program lives in Main, which takes its arguments and an Env holding its
// standard streams, environment, working directory and clock, so tests run
// every command in-process with injected writers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/memdir/memdir"
)

// Env is what a command sees of the world outside it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads an environment variable.
	LookupEnv func(string) (string, bool)
	// Cwd is the working directory.
	Cwd string
	// Now is the clock.
	Now func() time.Time
	// StderrIsTerminal enables progress output on long work.
	StderrIsTerminal bool
	// StdinIsTerminal is true when nobody is piping input in.
	StdinIsTerminal bool
	// Spawn starts this memdir binary with args as a detached background
	// process, its output appended to logPath (the hooks start extraction
	// and consolidation this way). nil means spawnDetached.
	Spawn func(args []string, logPath string) error
}

// Getenv returns the value of an environment variable, or "".
func (e *Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

func osEnv() *Env {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	isTerm := func(f *os.File) bool {
		fi, err := f.Stat()
		return err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	return &Env{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		LookupEnv:        os.LookupEnv,
		Cwd:              cwd,
		Now:              time.Now,
		StderrIsTerminal: isTerm(os.Stderr),
		StdinIsTerminal:  isTerm(os.Stdin),
		Spawn:            spawnDetached,
	}
}

// RunFunc runs a command once its flags are parsed; args are the positional
// arguments left over.
type RunFunc func(ctx context.Context, env *Env, args []string) error

// Command is one memdir subcommand. Each lives in a file of its own, as a
// variable named after it (saveCmd), with its options struct (saveOptions)
// and its run function (runSave); commandList lists them all.
type Command struct {
	Name  string
	Args  string // the usage after the command name, e.g. "[flags] NAME"
	Short string // one line for the command list
	Long  string // the manual page shown by --help
	// Setup declares the command's flags on fs and returns the function that
	// runs the command. It is called afresh for every run, so a command's flag
	// values never leak from one run to the next. setup makes it from the
	// command's run function.
	Setup func(fs *flag.FlagSet) RunFunc
	// NeverBlock makes a usage error exit 1 instead of 2, for commands run
	// as Claude Code hooks, where exit 2 means "block this action".
	NeverBlock bool
}

// setup makes a Command's Setup from its run function: each call gets a
// fresh options value O whose declare method binds the flags to its fields.
func setup[O any, P interface {
	*O
	declare(fs *flag.FlagSet)
}](run func(ctx context.Context, env *Env, opts P, args []string) error) func(fs *flag.FlagSet) RunFunc {
	return func(fs *flag.FlagSet) RunFunc {
		opts := P(new(O))
		opts.declare(fs)
		return func(ctx context.Context, env *Env, args []string) error {
			return run(ctx, env, opts, args)
		}
	}
}

// commandList is every command, in the order of the help's command list
// (alphabetical), and commands finds them by name. Both are set in init
// rather than in their declarations: completion reads the list, so a
// declaration naming completionCmd would be an initialization cycle.
var (
	commandList []*Command
	commands    map[string]*Command
)

func init() {
	commandList = []*Command{
		agentCmd,
		anchorsCmd,
		checkpointCmd,
		completionCmd,
		configCmd,
		doctorCmd,
		dreamCmd,
		editCmd,
		embedCmd,
		evalCmd,
		extractCmd,
		hookCmd,
		hooksCmd,
		indexCmd,
		listCmd,
		logCmd,
		mcpCmd,
		mvCmd,
		pathCmd,
		promoteCmd,
		promptCmd,
		recallCmd,
		reviewCmd,
		rmCmd,
		saveCmd,
		serveCmd,
		sessionCmd,
		settingsCmd,
		showCmd,
		syncCmd,
		uiCmd,
		undoCmd,
	}
	commands = make(map[string]*Command, len(commandList))
	for _, c := range commandList {
		if _, dup := commands[c.Name]; dup {
			panic("memdir: command listed twice: " + c.Name)
		}
		commands[c.Name] = c
	}
}

func main() {
	shortLivedGC(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], osEnv())
	stop()
	os.Exit(code)
}

// Exit codes. The same table is printed by every command's --help.
const (
	exitOK       = 0
	exitFailure  = 1 // any other failure
	exitUsage    = 2 // bad flags or arguments
	exitNotFound = 3 // memory, file or directory not found
	exitInvalid  = 4 // invalid input: name, frontmatter, path, configuration
	exitExists   = 5 // the target already exists or a conflict was detected
	exitProblems = 6 // a check (doctor) found problems it did not fix
	exitLocked   = 7 // another process holds the lock
	exitDisabled = 8 // auto memory is disabled by environment or settings
	exitModel    = 9 // the model or embedding provider failed (auth, unknown model, server)
	exitCanceled = 130
)

const exitCodesHelp = `Exit status:
  0    success
  1    failure not covered below
  2    usage error (bad flags or arguments)
  3    not found (memory, file, directory)
  4    invalid input (name, frontmatter, path, configuration), or content
       with a potential secret refused from team memory
  5    already exists, or a conflict
  6    problems found and not fixed (doctor)
  7    locked by another process
  8    auto memory is disabled
  9    model or embedding provider error (authentication, unknown model, server)
  130  interrupted`

// usageError is a mistake in how the command was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitError carries an explicit exit code, for outcomes that are not failures
// of the program (doctor found problems).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	var ee *exitError
	var me *memdir.ModelError
	var emb *memdir.EmbedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitCanceled
	case errors.Is(err, memdir.ErrSecret):
		return exitInvalid
	case errors.Is(err, memdir.ErrNotFound):
		return exitNotFound
	case errors.Is(err, memdir.ErrInvalid):
		return exitInvalid
	case errors.Is(err, memdir.ErrExists):
		return exitExists
	case errors.Is(err, memdir.ErrLocked):
		return exitLocked
	case errors.Is(err, memdir.ErrDisabled):
		return exitDisabled
	case errors.As(err, &me), errors.As(err, &emb):
		return exitModel
	default:
		return exitFailure
	}
}

// Main runs memdir with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 {
		printTopHelp(env.Stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(env.Stderr, "memdir help: unknown command %q\n", args[1])
				return exitUsage
			}
			printCommandHelp(env.Stdout, c)
			return exitOK
		}
		printTopHelp(env.Stdout)
		return exitOK
	case "version", "--version":
		fmt.Fprintf(env.Stdout, "memdir %s\n", version)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "memdir: unknown command %q\nRun 'memdir help' for the list of commands.\n", name)
		return exitUsage
	}
	err := runCommand(ctx, c, args[1:], env)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	code := exitCode(err)
	var ee *exitError
	if !errors.As(err, &ee) || ee.msg != "" {
		fmt.Fprintf(env.Stderr, "memdir %s: %v\n", c.Name, err)
	}
	if code == exitUsage {
		fmt.Fprintf(env.Stderr, "Usage: memdir %s %s\nRun 'memdir help %s' for details.\n", c.Name, c.Args, c.Name)
		if c.NeverBlock {
			code = exitFailure
		}
	}
	return code
}

const version = "0.1.0-dev"

func runCommand(ctx context.Context, c *Command, args []string, env *Env) error {
	fs := flag.NewFlagSet("memdir "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.Setup(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(env.Stdout, c)
			return flag.ErrHelp
		}
		return &usageError{err.Error()}
	}
	return run(ctx, env, pos)
}

// parseInterspersed parses flags that may appear before, between or after the
// positional arguments ("memdir show NAME --json"). Everything after "--" is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func printTopHelp(w io.Writer) {
	fmt.Fprintf(w, `memdir: Claude Code compatible file-based memory for coding agents.

Usage:
  memdir <command> [flags] [arguments]

Commands:
`)
	for _, c := range commandList {
		fmt.Fprintf(w, "  %-11s %s\n", c.Name, c.Short)
	}
	fmt.Fprintf(w, `
Run 'memdir help <command>' or 'memdir <command> --help' for a command's manual.

%s
`, exitCodesHelp)
}

func printCommandHelp(w io.Writer, c *Command) {
	fmt.Fprintf(w, "Usage: memdir %s %s\n\n%s\n", c.Name, c.Args, strings.TrimSpace(c.Long))
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	c.Setup(fs)
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\n%s\n", exitCodesHelp)
}

// shortLivedGC lets the garbage collector run less often in the processes
// Claude Code starts on every prompt and tool call (memdir hook, and
// memdir checkpoint where a user's own hooks call it), which
// live tens of milliseconds and whose heap is mostly the recall index's
// records, alive to the end: at the default GOGC=100 a hook at 20,000
// memories spent about a fifth of its CPU collecting them. GOGC=400 with a
// 256 MiB soft limit (the collector works harder again near it) keeps the
// peak bounded. A GOGC or GOMEMLIMIT the user set wins.
func shortLivedGC(args []string) {
	if len(args) == 0 || (args[0] != "hook" && args[0] != "checkpoint") {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
}
