// Package cli is the command-line framework of memdir's programs: the Env a
// command sees, the Command type and its flag parsing, usage errors, the
// documented exit codes and the one place errors become exit codes, and the
// JSON-or-text output every command shares.
//
// It is shared by cmd/memdir, which holds every command, and by the lean
// per-turn binaries (cmd/memdir-checkpoint), which hold one and must start
// without the model SDKs, SQLite and MCP that cmd/memdir links. So it
// imports nothing of memdir but its sentinel errors.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/progress"
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
	// StdoutIsTerminal is true when output goes to a terminal, where
	// tables are fitted to its width; piped output keeps the full text.
	StdoutIsTerminal bool
	// StdoutColumns is the terminal's width in cells, 0 when unknown.
	StdoutColumns int
	// Command is how users call the running command ("memdir checkpoint",
	// or "memdir-checkpoint"), for the commands it suggests; Program.Run
	// sets it.
	Command string
	// Spawn starts this memdir binary with args as a detached background
	// process, its output appended to logPath (the hooks start extraction
	// and consolidation this way). nil means the program's own default.
	Spawn func(args []string, logPath string) error
}

// Getenv returns the value of an environment variable, or "".
func (e *Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

// OSEnv is the Env of a real process: its standard streams, environment,
// working directory and clock.
func OSEnv() *Env {
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
		StdoutIsTerminal: isTerm(os.Stdout),
		StdoutColumns:    terminalColumns(os.Stdout),
	}
}

// RunFunc runs a command once its flags are parsed; args are the positional
// arguments left over.
type RunFunc func(ctx context.Context, env *Env, args []string) error

// Command is one memdir subcommand. Each lives in a file of its own, as a
// variable named after it (saveCmd), with its options struct (saveOptions)
// and its run function (runSave).
type Command struct {
	Name  string
	Args  string // the usage after the command name, e.g. "[flags] NAME"
	Short string // one line for the command list
	Long  string // the manual page shown by --help
	// Setup declares the command's flags on fs and returns the function that
	// runs the command. It is called afresh for every run, so a command's flag
	// values never leak from one run to the next. [Setup] makes it from the
	// command's run function.
	Setup func(fs *flag.FlagSet) RunFunc
	// NeverBlock makes a usage error exit 1 instead of 2, for commands run
	// as Claude Code hooks, where exit 2 means "block this action".
	NeverBlock bool
}

// Setup makes a Command's Setup from its run function: each call gets a
// fresh options value O whose Declare method binds the flags to its fields.
func Setup[O any, P interface {
	*O
	Declare(fs *flag.FlagSet)
}](run func(ctx context.Context, env *Env, opts P, args []string) error) func(fs *flag.FlagSet) RunFunc {
	return func(fs *flag.FlagSet) RunFunc {
		opts := P(new(O))
		opts.Declare(fs)
		return func(ctx context.Context, env *Env, args []string) error {
			return run(ctx, env, opts, args)
		}
	}
}

// Exit codes. The same table is printed by every command's --help.
const (
	ExitOK       = 0
	ExitFailure  = 1 // any other failure
	ExitUsage    = 2 // bad flags or arguments
	ExitNotFound = 3 // memory, file or directory not found
	ExitInvalid  = 4 // invalid input: name, frontmatter, path, configuration
	ExitExists   = 5 // the target already exists or a conflict was detected
	ExitProblems = 6 // a check (doctor) found problems it did not fix
	ExitLocked   = 7 // another process holds the lock
	ExitDisabled = 8 // auto memory is disabled by environment or settings
	ExitModel    = 9 // the model or embedding provider failed (auth, unknown model, server)
	ExitCanceled = 130
)

// ExitCodesHelp is the exit-code table of every --help.
const ExitCodesHelp = `Exit status:
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

// Usagef reports a mistake in how the command was called: exit 2 (1 for a
// NeverBlock command), followed by the command's usage line.
func Usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// ExitError carries an explicit exit code, for outcomes that are not
// failures of the program (doctor found problems). An empty Msg prints
// nothing.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Program is what the framework knows of the binary running a command.
type Program struct {
	// Name is the program's name as users type it: "memdir".
	Name string
	// Single is set for a program that is one command (memdir-checkpoint),
	// whose arguments are that command's: its usage line and messages name
	// the program alone.
	Single bool
	// ExitCode maps the program's own error kinds (a model failure) to an
	// exit code. It is asked after usage errors, explicit exit codes and
	// interruption, before the sentinel errors; nil knows none.
	ExitCode func(err error) (code int, ok bool)
	// Remedy returns msg, the message of err, with the advice the program
	// gives on the errors it holds (the libraries' errors state what went
	// wrong; the program says what to run about it). nil adds none.
	Remedy func(err error, msg string) string
	// Intro is printed before a command's manual.
	Intro string
}

// line is how users call c: "memdir save", or "memdir-checkpoint".
func (p *Program) line(c *Command) string {
	if p.Single {
		return p.Name
	}
	return p.Name + " " + c.Name
}

// ExitCodeOf is the exit code for err, the documented table's.
func (p *Program) ExitCodeOf(err error) int {
	var ue *usageError
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitCanceled
	}
	if p.ExitCode != nil {
		if code, ok := p.ExitCode(err); ok {
			return code
		}
	}
	switch {
	case errors.Is(err, errs.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, errs.ErrInvalid):
		return ExitInvalid
	case errors.Is(err, errs.ErrExists):
		return ExitExists
	case errors.Is(err, errs.ErrLocked):
		return ExitLocked
	case errors.Is(err, errs.ErrDisabled):
		return ExitDisabled
	default:
		return ExitFailure
	}
}

// Run parses args as c's flags and arguments, runs c and returns the exit
// code, having printed on env.Stderr what went wrong (and for a usage
// error, how to call c). --help prints c's manual and exits 0.
func (p *Program) Run(ctx context.Context, c *Command, args []string, env *Env) int {
	err := p.run(ctx, c, args, env)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	code := p.ExitCodeOf(err)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Msg != "" {
		msg := err.Error()
		if p.Remedy != nil {
			msg = p.Remedy(err, msg)
		}
		fmt.Fprintf(env.Stderr, "%s: %s\n", p.line(c), msg)
	}
	if code == ExitUsage {
		help := "'" + p.Name + " help " + c.Name + "'"
		if p.Single {
			help = "'" + p.Name + " --help'"
		}
		fmt.Fprintf(env.Stderr, "Usage: %s %s\nRun %s for details.\n", p.line(c), c.Args, help)
		if c.NeverBlock {
			code = ExitFailure
		}
	}
	return code
}

func (p *Program) run(ctx context.Context, c *Command, args []string, env *Env) error {
	fs := flag.NewFlagSet(p.line(c), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.Setup(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			p.PrintHelp(env.Stdout, c)
			return flag.ErrHelp
		}
		return &usageError{flagError(err.Error())}
	}
	e := *env
	e.Command = p.line(c)
	return run(ctx, &e, pos)
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

// PrintHelp prints c's manual: usage line, text, flags and exit codes.
func (p *Program) PrintHelp(w io.Writer, c *Command) {
	fmt.Fprint(w, p.Intro)
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n", p.line(c), c.Args, strings.TrimSpace(c.Long))
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	c.Setup(fs)
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		printFlags(w, fs)
	}
	fmt.Fprintf(w, "\n%s\n", ExitCodesHelp)
}

// WriteJSON writes v as indented JSON, the --json output of every command.
// Every JSON a command prints goes through WriteJSON, WriteJSONLine,
// WriteOwnJSON or Emit, so that a test can see each value (SetJSONHook).
func WriteJSON(w io.Writer, v any) error {
	seen(v)
	return writeJSON(w, v, true)
}

// WriteJSONLine writes v as one line of JSON, for output that is a stream
// of values (sync watch --json) or a single line another program reads (a
// Claude Code hook's answer).
func WriteJSONLine(w io.Writer, v any) error {
	seen(v)
	return writeJSON(w, v, false)
}

// WriteOwnJSON writes v as WriteJSON does, through write: a command's own
// encoder of v, for output too large for encoding/json's reflection and
// second indenting pass, which must print exactly what WriteJSON prints.
// A nil write (v holds what the own encoder cannot write) is WriteJSON.
// While a JSON hook is set (in tests) both run and a difference is an
// error, so every test of the command checks the encoder.
func WriteOwnJSON(w io.Writer, v any, write func(w io.Writer) error) error {
	seen(v)
	switch {
	case write == nil:
		return writeJSON(w, v, true)
	case jsonHook.Load() == nil:
		return write(w)
	}
	var own, std bytes.Buffer
	if err := write(&own); err != nil {
		return err
	}
	if err := writeJSON(&std, v, true); err != nil {
		return err
	}
	if !bytes.Equal(own.Bytes(), std.Bytes()) {
		o, s := own.Bytes(), std.Bytes()
		i := 0
		for i < len(o) && i < len(s) && o[i] == s[i] {
			i++
		}
		return fmt.Errorf("the command's own JSON encoder differs from encoding/json at byte %d: %q, want %q", i, o[max(0, i-40):min(len(o), i+40)], s[max(0, i-40):min(len(s), i+40)])
	}
	_, err := w.Write(own.Bytes())
	return err
}

func writeJSON(w io.Writer, v any, indent bool) error {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Emit prints a command's result on standard output: v as JSON (WriteJSON)
// when asJSON is set, for --json, and otherwise whatever text writes to w.
// The JSON hook sees v either way: the text is the same result.
func Emit(env *Env, asJSON bool, v any, text func(w io.Writer) error) error {
	seen(v)
	if asJSON {
		return writeJSON(env.Stdout, v, true)
	}
	return text(env.Stdout)
}

// JSONHook is told of each value given to WriteJSON, WriteJSONLine,
// WriteOwnJSON and Emit, with the file and line of the call.
type JSONHook func(v any, file string, line int)

var jsonHook atomic.Pointer[JSONHook]

// SetJSONHook makes hook see every value the JSON functions of this
// package are given, until restore is called: the tests of a program use
// it to check the types of everything its commands print. nil removes
// the hook.
func SetJSONHook(hook JSONHook) (restore func()) {
	var old *JSONHook
	if hook == nil {
		old = jsonHook.Swap(nil)
	} else {
		old = jsonHook.Swap(&hook)
	}
	return func() { jsonHook.Store(old) }
}

// seen tells the hook of v and of the call to the exported function
// that called seen.
func seen(v any) {
	h := jsonHook.Load()
	if h == nil {
		return
	}
	_, file, line, _ := runtime.Caller(2)
	(*h)(v, file, line)
}

// Plural is "1 file" or "3 files".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ShortLivedGC keeps the garbage collector out of the processes Claude
// Code starts on every prompt and tool call (memdir hook, and memdir
// checkpoint where a user's own hooks call it), which live tens of
// milliseconds and whose heap is mostly the recall index's records, alive
// to the end: collecting them finds nothing to free. The collector runs
// only near a 224 MiB soft limit, which bounds the peak of the rare
// process that makes much garbage: a first index build reaches it, and at
// 100,000 memories (a live heap of about 205 MB at its peak, and some
// 45 MB of RSS besides the heap) keeps under 300 MB of RSS, where 256 MiB
// reached 300 MB. At 100,000 memories the GOGC 400 of before took a sixth
// of the warm hook's CPU (and the default 100 before that, more). A GOGC
// the user set wins; with a GOMEMLIMIT of the user's the collector keeps
// GOGC 400.
func ShortLivedGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		debug.SetGCPercent(400)
		return
	}
	debug.SetMemoryLimit(224 << 20)
	debug.SetGCPercent(-1)
}

// Version is the version both programs print.
const Version = "0.1.0-dev"

// SessionEnvVars are read, in order, by a command that needs a Claude Code
// session id and was given no --session.
var SessionEnvVars = []string{"MEMDIR_SESSION_ID", "CLAUDE_SESSION_ID"}

// Progress starts the progress report of a long piece of work (see package
// progress) on standard error: a live line when it is a terminal, a line
// every few seconds otherwise, the first after a second, and nothing for
// work done sooner. quiet (the command's --quiet, or --json, whose
// readers want standard error for errors) returns nil, a Reporter that
// shows nothing. Stop it when the work ends.
//
// MEMDIR_PROGRESS changes the timing: "off" shows nothing; a duration
// ("2s", "30s") is the interval between lines when standard error is not
// a terminal; "0" shows every step at once, with no delay and no timer
// (what tests use).
func (e *Env) Progress(label string, quiet bool) *progress.Reporter {
	opts, on := e.progressOptions()
	if quiet || !on {
		return nil
	}
	return progress.Start(e.Stderr, label, opts)
}

// progressOptions are the Reporter options of e, and false when progress
// is off.
func (e *Env) progressOptions() (progress.Options, bool) {
	opts := progress.Options{Terminal: e.StderrIsTerminal, Delay: progress.DefaultDelay, Every: progress.DefaultEvery}
	if e.StderrIsTerminal {
		opts.Every = progress.TerminalEvery
	}
	v := strings.TrimSpace(e.Getenv("MEMDIR_PROGRESS"))
	switch {
	case v == "":
	case strings.EqualFold(v, "off") || strings.EqualFold(v, "false"):
		return opts, false
	case v == "0":
		opts.Delay, opts.Every = 0, 0
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return opts, true // a typo must not stop the command: the defaults
		}
		if !e.StderrIsTerminal {
			opts.Every = d
		}
	}
	return opts, true
}

// printFlags lists fs's flags as flag.PrintDefaults does, but spelled
// --name, as the usage lines and manuals spell them (the flag package
// accepts both).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		b.WriteString("  --" + f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "0s" && d != "[]" {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				d = strconv.Quote(d)
			}
			fmt.Fprintf(&b, " (default %s)", d)
		}
		b.WriteByte('\n')
	})
	io.WriteString(w, b.String())
}

// flagError rewords the flag package's parse errors to spell flags as
// --name, as help does.
func flagError(msg string) string {
	for _, r := range [...]struct{ prefix, format string }{
		{"flag provided but not defined: -", "unknown flag --%s"},
		{"flag needs an argument: -", "flag --%s needs a value"},
		{"bad flag syntax: ", "bad flag syntax: %s"},
	} {
		if rest, ok := strings.CutPrefix(msg, r.prefix); ok {
			return fmt.Sprintf(r.format, rest)
		}
	}
	if strings.HasPrefix(msg, "invalid ") {
		if before, after, ok := strings.Cut(msg, " for flag -"); ok {
			return before + " for --" + after
		}
	}
	return msg
}
