package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
)

var completionCmd = &cli.Command{
	Name:  "completion",
	Args:  "bash|zsh|fish | names [--dir DIR | --project DIR | --agent TYPE --scope S]",
	Short: "print a shell completion script",
	Long: `Completion prints a script that completes memdir's commands, their
subcommands (sync pull, hooks install...), each command's flags, the values
of the flags that take one of a few (--type, --sort, --scope, --mode,
--agent of hooks), and memory names for show, edit, rm and mv, in bash, zsh
or fish. It is generated from the command table, so it always matches the
binary that printed it.

Memory names come from 'memdir completion names', which the scripts run:
it prints the memories of the directory (--dir, --project, --agent and
--scope as the command line being completed gives them) one a line, each
as show and the others take it, the path without ".md".

Install it:
  bash  echo 'source <(memdir completion bash)' >> ~/.bashrc
  zsh   memdir completion zsh > "${fpath[1]}/_memdir"   (then restart zsh)
        or: echo 'source <(memdir completion zsh)' >> ~/.zshrc
  fish  memdir completion fish > ~/.config/fish/completions/memdir.fish

Examples:
  memdir completion bash
  memdir completion zsh > ~/.zsh/completions/_memdir`,
	Setup: cli.Setup(runCompletion),
}

// completionOptions holds the flag values of memdir completion: the
// location flags, for 'completion names'.
type completionOptions struct {
	lf locationFlags
}

func (o *completionOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
}

func runCompletion(ctx context.Context, env *cli.Env, o *completionOptions, args []string) error {
	if len(args) == 1 && args[0] == "names" {
		return completeNames(ctx, env, &o.lf)
	}
	if len(args) != 1 {
		return cli.Usagef("completion needs the shell: bash, zsh or fish")
	}
	spec := completionSpec()
	switch args[0] {
	case "bash":
		writeBashCompletion(env.Stdout, spec)
	case "zsh":
		writeZshCompletion(env.Stdout, spec)
	case "fish":
		writeFishCompletion(env.Stdout, spec)
	default:
		return cli.Usagef("unknown shell %q: want bash, zsh or fish", args[0])
	}
	return nil
}

// completeNames prints the memories of the directory lf names, one a
// line, as NAME arguments take them: the path without ".md". The
// project's directory before its first save has none.
func completeNames(ctx context.Context, env *cli.Env, lf *locationFlags) error {
	d, _, err := lf.open(env)
	if err != nil {
		return err
	}
	res, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, h := range res.Memories {
		if strings.ContainsAny(h.Path, "\n\r") {
			continue // one a line
		}
		b.WriteString(strings.TrimSuffix(h.Path, ".md"))
		b.WriteByte('\n')
	}
	_, err = io.WriteString(env.Stdout, b.String())
	return err
}

// completionSubcommands are the words that may come first after each
// command (TestCompletionSubcommands checks them against the usage lines).
var completionSubcommands = map[string][]string{
	"agent":      {"list", "sync"},
	"anchors":    {"check", "refresh"},
	"checkpoint": {"track", "snapshot", "list", "diff", "rewind", "resume"},
	"completion": {"bash", "zsh", "fish"},
	"eval":       {"recall"},
	"hooks":      {"install", "uninstall", "status"},
	"log":        {"show", "append"},
	"review":     {"list", "show", "accept", "reject"},
	"serve":      {"token"},
	"session":    {"notes", "update", "compact"},
	"settings":   {"set"},
	"sync":       {"pull", "push", "status", "watch", "resolve"},
}

// completionNameCommands take memory names as their arguments.
var completionNameCommands = map[string]bool{"show": true, "edit": true, "rm": true, "mv": true}

// memoryTypes are the values of save's and edit's --type.
var memoryTypes = []string{"user", "feedback", "project", "reference"}

// completionValues are the values of the flags that take one of a few,
// by flag name, or by "command --flag" where a command's differ.
var completionValues = map[string][]string{
	"type":               memoryTypes,
	"list --type":        append(slices.Clone(memoryTypes), "none"),
	"sort":               {"new", "used", "unused"},
	"scope":              {"user", "project", "local"},
	"mode":               {"individual", "team", "daily-log", "agent"},
	"agent-cli":          {"claude", "codex", "gemini"},
	"hooks --agent":      {"claude", "codex", "gemini"},
	"hook --agent":       {"claude", "codex", "gemini"},
	"serve --log-format": {"text", "json"},
}

// flagValues returns the values completion offers for command's flag.
func flagValues(command, flag string) []string {
	if v, ok := completionValues[command+" --"+flag]; ok {
		return v
	}
	return completionValues[flag]
}

// completionFlag is one flag of a command, as the completion scripts offer it.
type completionFlag struct {
	name   string
	usage  string
	value  bool     // takes a value (not a boolean flag)
	values []string // the values it takes, when they are few
}

// completionCommand is one command with its flags, subcommands, and
// whether its arguments are memory names.
type completionCommand struct {
	name, short string
	flags       []completionFlag
	subs        []string
	names       bool
}

// completionSpec reads every listed command's flags from its Setup.
func completionSpec() []completionCommand {
	var out []completionCommand
	for _, c := range commandList {
		cc := completionCommand{name: c.Name, short: c.Short, subs: completionSubcommands[c.Name], names: completionNameCommands[c.Name]}
		fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
		c.Setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
			value := !(isBool && bf.IsBoolFlag())
			cf := completionFlag{name: f.Name, usage: oneLineUsage(usage), value: value}
			if value {
				cf.values = flagValues(c.Name, f.Name)
			}
			cc.flags = append(cc.flags, cf)
		})
		cc.flags = append(cc.flags, completionFlag{name: "help", usage: "show the command's manual"})
		out = append(out, cc)
	}
	return out
}

func oneLineUsage(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func writeBashCompletion(w io.Writer, spec []completionCommand) {
	var names []string
	for _, c := range spec {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, `# bash completion for memdir (generated by 'memdir completion bash')

# _memdir_npos counts the arguments before the word being completed that
# are neither flags nor the values of flags ($vflags).
_memdir_npos() {
    local i n=0 skip=0 f
    for (( i=2; i < COMP_CWORD; i++ )); do
        if (( skip )); then skip=0; continue; fi
        f=${COMP_WORDS[i]}
        case $f in
            --) ;;
            -*=*) ;;
            -*) f=${f#-}; f=${f#-}; [[ " $vflags " == *" $f "* ]] && skip=1 ;;
            *) (( n++ )) ;;
        esac
    done
    echo $n
}

# _memdir_names completes memory names, from the directory the command
# line's location flags name.
_memdir_names() {
    local i loc=() IFS=$'\n'
    for (( i=2; i < COMP_CWORD; i++ )); do
        case ${COMP_WORDS[i]} in
            --dir|-dir|--project|-project|--agent|-agent|--scope|-scope) loc+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}") ;;
        esac
    done
    COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion names "${loc[@]}" 2>/dev/null)" -- "$cur"))
}

_memdir() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} flags="" vflags="" subs="" names=""
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W %q -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]} p=${prev#-}
    p=${p#-}
    case "$cmd --$p" in
`, strings.Join(append(names, "help", "version"), " "))
	for _, c := range spec {
		for _, f := range c.flags {
			if len(f.values) > 0 {
				fmt.Fprintf(w, "        %q) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", c.name+" --"+f.name, strings.Join(f.values, " "))
			}
		}
	}
	fmt.Fprintf(w, "    esac\n    case $cmd in\n")
	for _, c := range spec {
		var fl, vf []string
		for _, f := range c.flags {
			fl = append(fl, "--"+f.name)
			if f.value {
				vf = append(vf, f.name)
			}
		}
		fmt.Fprintf(w, "        %s) flags=%q vflags=%q", c.name, strings.Join(fl, " "), strings.Join(vf, " "))
		if len(c.subs) > 0 {
			fmt.Fprintf(w, " subs=%q", strings.Join(c.subs, " "))
		}
		if c.names {
			fmt.Fprintf(w, " names=1")
		}
		fmt.Fprintf(w, " ;;\n")
	}
	fmt.Fprintf(w, `        help) COMPREPLY=($(compgen -W %q -- "$cur")); return ;;
    esac
    if [[ " $vflags " == *" $p "* && $prev == -* ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    if [[ -n $subs ]] && (( $(_memdir_npos) == 0 )); then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return
    fi
    if [[ -n $names ]]; then
        _memdir_names
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _memdir memdir
`, strings.Join(names, " "))
}

// zshQuote makes s safe inside a single-quoted zsh word used as an
// _arguments or _describe spec, where ':' '[' ']' and '\' are special.
func zshQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `:`, `\:`, `[`, `\[`, `]`, `\]`).Replace(s)
	return strings.ReplaceAll(s, "'", `'\''`)
}

func writeZshCompletion(w io.Writer, spec []completionCommand) {
	fmt.Fprintf(w, "#compdef memdir\n# zsh completion for memdir (generated by 'memdir completion zsh')\n\n")
	fmt.Fprintf(w, "# _memdir_names completes memory names, from the directory the command\n# line's location flags name.\n")
	fmt.Fprintf(w, "_memdir_names() {\n    local -a loc names\n    local i\n    for (( i = 1; i < CURRENT; i++ )); do\n")
	fmt.Fprintf(w, "        case $words[i] in\n            --dir|-dir|--project|-project|--agent|-agent|--scope|-scope) loc+=($words[i] $words[i+1]) ;;\n        esac\n    done\n")
	fmt.Fprintf(w, "    names=(${(f)\"$(memdir completion names $loc 2>/dev/null)\"})\n    compadd -a names\n}\n\n_memdir() {\n    local -a commands\n    commands=(\n")
	for _, c := range spec {
		fmt.Fprintf(w, "        '%s:%s'\n", c.name, zshQuote(c.short))
	}
	fmt.Fprintf(w, "        'help:show a command'\\''s manual'\n        'version:print the version'\n    )\n")
	fmt.Fprintf(w, "    if (( CURRENT == 2 )); then\n        _describe -t commands 'memdir command' commands\n        return\n    fi\n")
	fmt.Fprintf(w, "    local cmd=$words[2]\n    shift words\n    (( CURRENT-- ))\n    case $cmd in\n")
	for _, c := range spec {
		fmt.Fprintf(w, "        %s)\n            _arguments \\\n", c.name)
		for _, f := range c.flags {
			spec := "--" + f.name + "[" + zshQuote(f.usage) + "]"
			switch {
			case len(f.values) > 0:
				spec += ":" + f.name + ":(" + strings.Join(f.values, " ") + ")"
			case f.value:
				spec += ":" + f.name + ":_files"
			}
			fmt.Fprintf(w, "                '%s' \\\n", spec)
		}
		switch {
		case len(c.subs) > 0:
			fmt.Fprintf(w, "                '1:subcommand:(%s)' \\\n                '*:argument:_files'\n            ;;\n", strings.Join(c.subs, " "))
		case c.names:
			fmt.Fprintf(w, "                '*:memory:_memdir_names'\n            ;;\n")
		default:
			fmt.Fprintf(w, "                '*:argument:_files'\n            ;;\n")
		}
	}
	fmt.Fprintf(w, "        help)\n            _describe -t commands 'memdir command' commands\n            ;;\n    esac\n}\n\n")
	fmt.Fprintf(w, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n    _memdir \"$@\"\nelse\n    compdef _memdir memdir\nfi\n")
}

// fishQuote makes s one single-quoted fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFishCompletion(w io.Writer, spec []completionCommand) {
	var names []string
	for _, c := range spec {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "# fish completion for memdir (generated by 'memdir completion fish')\n")
	fmt.Fprintf(w, "function __memdir_names\n    set -l loc\n    set -l words (commandline -opc)\n    for i in (seq 2 (count $words))\n")
	fmt.Fprintf(w, "        switch $words[$i]\n            case --dir -dir --project -project --agent -agent --scope -scope\n")
	fmt.Fprintf(w, "                set -a loc $words[$i] $words[(math $i + 1)]\n        end\n    end\n    memdir completion names $loc 2>/dev/null\nend\n")
	fmt.Fprintf(w, "complete -c memdir -n __fish_use_subcommand -f -a help -d %s\n", fishQuote("show a command's manual"))
	fmt.Fprintf(w, "complete -c memdir -n __fish_use_subcommand -f -a version -d %s\n", fishQuote("print the version"))
	fmt.Fprintf(w, "complete -c memdir -n '__fish_seen_subcommand_from help' -f -a %s\n", fishQuote(strings.Join(names, " ")))
	for _, c := range spec {
		fmt.Fprintf(w, "complete -c memdir -n __fish_use_subcommand -f -a %s -d %s\n", c.name, fishQuote(c.short))
		if len(c.subs) > 0 {
			subs := strings.Join(c.subs, " ")
			fmt.Fprintf(w, "complete -c memdir -n %s -f -a %s\n", fishQuote("__fish_seen_subcommand_from "+c.name+"; and not __fish_seen_subcommand_from "+subs), fishQuote(subs))
		}
		if c.names {
			fmt.Fprintf(w, "complete -c memdir -n %s -f -a %s\n", fishQuote("__fish_seen_subcommand_from "+c.name), fishQuote("(__memdir_names)"))
		}
		for _, f := range c.flags {
			r := ""
			switch {
			case len(f.values) > 0:
				r = " -r -f -a " + fishQuote(strings.Join(f.values, " "))
			case f.value:
				r = " -r"
			}
			fmt.Fprintf(w, "complete -c memdir -n '__fish_seen_subcommand_from %s' -l %s%s -d %s\n", c.name, f.name, r, fishQuote(f.usage))
		}
	}
}
