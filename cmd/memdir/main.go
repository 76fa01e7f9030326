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
	"fmt"
	"io"
	"os"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/checkpointcmd"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
)

// osEnv is the process's Env, whose background processes start detached.
func osEnv() *cli.Env {
	env := cli.OSEnv()
	env.Spawn = spawnDetached
	return env
}

// program is memdir as the command framework sees it: model and embedding
// failures exit 9 and a refused secret 4, besides the framework's own
// table, and errors are printed with memdir's advice (remedy.go).
var program = &cli.Program{Name: "memdir", Remedy: adviseMsg, ExitCode: func(err error) (int, bool) {
	var me *llm.ModelError
	var emb *llm.EmbedError
	switch {
	case errors.Is(err, memdir.ErrSecret):
		return cli.ExitInvalid, true
	case errors.As(err, &me), errors.As(err, &emb):
		return cli.ExitModel, true
	}
	return 0, false
}}

// commandList is every command, in the order of the help's command list
// (alphabetical), and commands finds them by name. Both are set in init
// rather than in their declarations: completion reads the list, so a
// declaration naming completionCmd would be an initialization cycle.
var (
	commandList []*cli.Command
	commands    map[string]*cli.Command
)

func init() {
	commandList = []*cli.Command{
		agentCmd,
		anchorsCmd,
		checkpointcmd.Command,
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
		statusCmd,
		syncCmd,
		uiCmd,
		undoCmd,
	}
	commands = make(map[string]*cli.Command, len(commandList))
	for _, c := range commandList {
		if _, dup := commands[c.Name]; dup {
			panic("memdir: command listed twice: " + c.Name)
		}
		commands[c.Name] = c
	}
}

// shortLived are the commands that run for a moment and keep most of what
// they allocate to the end: the hook and checkpoint, started on every
// prompt and tool call, and the commands scripts and agents call the same
// way (see cli.ShortLivedGC; list and status, which read every memory,
// measured faster with a lower peak at 100,000 memories under its limit).
// Servers, and the commands whose work can run long or call models
// (embed, eval, doctor, dream, extract, sync), keep the runtime's
// collector.
var shortLived = map[string]bool{
	"hook": true, "checkpoint": true, "recall": true, "list": true, "show": true,
	"save": true, "index": true, "prompt": true, "path": true, "status": true,
	"rm": true, "mv": true,
}

func main() {
	if args := os.Args[1:]; len(args) > 0 && shortLived[args[0]] {
		cli.ShortLivedGC()
	}
	ctx, stop := cli.SignalContext(cli.SignalGrace)
	code := Main(ctx, os.Args[1:], osEnv())
	stop()
	os.Exit(code)
}

// Main runs memdir with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, env *cli.Env) int {
	if len(args) == 0 {
		// A newcomer's first command: where memory is and what to set
		// up next, rather than a list of commands ('memdir help').
		return program.Run(ctx, statusCmd, nil, env)
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(env.Stderr, "memdir help: unknown command %q\n", args[1])
				return cli.ExitUsage
			}
			program.PrintHelp(env.Stdout, c)
			return cli.ExitOK
		}
		printTopHelp(env.Stdout)
		return cli.ExitOK
	case "version", "--version":
		fmt.Fprintf(env.Stdout, "memdir %s\n", cli.Version)
		return cli.ExitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "memdir: unknown command %q\nRun 'memdir help' for the list of commands.\n", name)
		return cli.ExitUsage
	}
	return program.Run(ctx, c, args[1:], env)
}

func printTopHelp(w io.Writer) {
	fmt.Fprintf(w, `memdir: Claude Code compatible file-based memory for coding agents.

Usage:
  memdir                  what 'memdir status' shows: where memory is, what is set up
  memdir <command> [flags] [arguments]

Commands:
`)
	for _, c := range commandList {
		fmt.Fprintf(w, "  %-11s %s\n", c.Name, c.Short)
	}
	fmt.Fprintf(w, `
Run 'memdir help <command>' or 'memdir <command> --help' for a command's manual.

%s
`, cli.ExitCodesHelp)
}
