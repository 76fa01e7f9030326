// Command memdir-checkpoint is 'memdir checkpoint' in a binary of its own,
// for harnesses that take a file-history snapshot on every user turn and
// track a file before every edit: the same subcommands, flags, output and
// exit codes, from a program that links only the checkpoint package, so
// that it starts in a fraction of the time memdir takes with its model
// SDKs, SQLite and MCP server. 'memdir checkpoint ARGS' and
// 'memdir-checkpoint ARGS' are interchangeable.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/memdir/memdir/internal/checkpointcmd"
	"github.com/memdir/memdir/internal/cli"
)

var program = &cli.Program{Name: "memdir-checkpoint", Single: true, Intro: intro, Remedy: checkpointcmd.Remedy}

// intro heads --help: the manual that follows is memdir checkpoint's.
const intro = `memdir-checkpoint is 'memdir checkpoint' in a binary that starts without
memdir's model SDKs, SQLite and MCP server, for the commands a harness runs
on every user turn and before every edit. Wherever the manual below says
'memdir checkpoint', 'memdir-checkpoint' does the same.

`

func main() {
	cli.ShortLivedGC()
	ctx, stop := cli.SignalContext(cli.SignalGrace)
	code := Main(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}

// Main runs memdir-checkpoint with args (without the program name) and
// returns the exit code.
func Main(ctx context.Context, args []string, env *cli.Env) int {
	if len(args) > 0 {
		switch args[0] {
		case "help":
			program.PrintHelp(env.Stdout, checkpointcmd.Command)
			return cli.ExitOK
		case "version", "--version":
			fmt.Fprintf(env.Stdout, "memdir-checkpoint %s\n", cli.Version)
			return cli.ExitOK
		}
	}
	return program.Run(ctx, checkpointcmd.Command, args, env)
}
