package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

var settingsCmd = &cli.Command{
	Name:  "settings",
	Args:  "[--json] | set KEY=VALUE...",
	Short: "show or set autoMemoryEnabled and autoDreamEnabled (the /memory toggles)",
	Long: `Settings shows the two switches of Claude Code's /memory command as Claude
Code resolves them, and where each value comes from:

  autoMemoryEnabled  whether agents read and write auto memory. Environment
                     variables decide first (CLAUDE_CODE_DISABLE_AUTO_MEMORY,
                     CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE), then the first
                     settings file defining it, in the order managed policy,
                     --settings file, .claude/settings.local.json,
                     .claude/settings.json (a project may turn it off),
                     ~/.claude/settings.json; otherwise on.
  autoDreamEnabled   whether background consolidation runs: the first
                     settings file defining it, otherwise a server-side flag
                     that is off unless the server turns it on. It only runs
                     while auto memory is on.

'memdir settings set KEY=VALUE...' writes the keys into the user's settings
file (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json), as the
/memory toggles do, never into a project's. VALUE is true or false (on/off,
1/0), or unset to remove the key. Every other key stays as it is, in its
order; the file is re-indented with two spaces. A settings file that is not
valid JSON is reported and left alone. The previous file is journaled first
and 'memdir undo' restores it. If something with a higher priority (an
environment variable, a project or policy file) still decides otherwise, set
says so.

--project DIR resolves the project settings from DIR instead of the working
directory; the change is journaled with that project's memory directory.

Examples:
  memdir settings
  memdir settings set autoMemoryEnabled=false
  memdir settings set autoDreamEnabled=true autoMemoryEnabled=unset`,
	Setup: cli.Setup(runSettings),
}

// settingsOptions holds the flag values of memdir settings.
type settingsOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *settingsOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.lf.project, "project", "", "resolve the project from `DIR` instead of the working directory")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func runSettings(ctx context.Context, env *cli.Env, o *settingsOptions, args []string) error {
	switch {
	case len(args) == 0:
		ms, err := resolveSettings(env, &o.lf)
		if err != nil {
			return err
		}
		return cli.Emit(env, o.asJSON, ms, func(w io.Writer) error {
			printSettings(env, ms)
			return nil
		})
	case args[0] == "set":
		return settingsSet(ctx, env, &o.lf, args[1:], o.asJSON)
	default:
		return cli.Usagef("settings takes no arguments, or: set KEY=VALUE...")
	}
}

func resolveSettings(env *cli.Env, lf *locationFlags) (*locate.MemorySettings, error) {
	loc, err := lf.locate(env)
	if err != nil {
		return nil, err
	}
	return locate.ResolveSettings(&locate.LocateOptions{LookupEnv: env.LookupEnv, Cwd: env.Cwd, Project: loc.ProjectRoot, Runtime: loc.Runtime})
}

func printSettings(env *cli.Env, ms *locate.MemorySettings) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, v := range []locate.Setting{ms.AutoMemoryEnabled, ms.AutoDreamEnabled} {
		fmt.Fprintf(tw, "%s\t%t\t%s\n", v.Key, v.Value, settingOrigin(v))
	}
	tw.Flush()
	for _, f := range ms.Files {
		if f.Error != "" {
			fmt.Fprintf(env.Stderr, "warning: the %s settings are ignored: %s\n", f.Source, f.Error)
		}
	}
	fmt.Fprintf(env.Stdout, "'memdir settings set' writes to %s\n", ms.UserSettings)
}

func settingOrigin(v locate.Setting) string {
	switch v.Source {
	case "default":
		return "default: " + v.Reason
	case "env":
		return "environment: " + v.Reason
	}
	return v.Source + " settings " + v.Path
}

// settingsKeys are the keys 'memdir settings set' writes.
var settingsKeys = []string{locate.KeyAutoMemoryEnabled, locate.KeyAutoDreamEnabled}

// parseSettingsArgs reads KEY=VALUE arguments into updates, in order, one
// per key.
func parseSettingsArgs(args []string) ([]locate.SettingsUpdate, map[string]*bool, error) {
	if len(args) == 0 {
		return nil, nil, cli.Usagef("settings set needs KEY=VALUE, such as autoMemoryEnabled=false")
	}
	var ups []locate.SettingsUpdate
	want := map[string]*bool{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, nil, cli.Usagef("%q is not KEY=VALUE", a)
		}
		key := ""
		for _, known := range settingsKeys {
			if strings.EqualFold(strings.TrimSpace(k), known) {
				key = known
			}
		}
		if key == "" {
			return nil, nil, cli.Usagef("unknown key %q: memdir sets only %s", k, strings.Join(settingsKeys, " and "))
		}
		if _, dup := want[key]; dup {
			return nil, nil, cli.Usagef("%s is given twice", key)
		}
		var raw json.RawMessage
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "on", "1", "yes":
			on := true
			raw, want[key] = json.RawMessage("true"), &on
		case "false", "off", "0", "no":
			off := false
			raw, want[key] = json.RawMessage("false"), &off
		case "unset", "default":
			want[key] = nil
		default:
			return nil, nil, cli.Usagef("%s=%q: want true, false or unset", key, v)
		}
		ups = append(ups, locate.SettingsUpdate{Key: key, Value: raw})
	}
	return ups, want, nil
}

// settingsSetJSON is 'memdir settings set --json': the settings in force
// afterwards, and the journal run when the file changed.
type settingsSetJSON struct {
	Settings *locate.MemorySettings `json:"settings"`
	Notes    []string               `json:"notes"`
	RunID    string                 `json:"run_id,omitempty"`
}

func settingsSet(ctx context.Context, env *cli.Env, lf *locationFlags, args []string, asJSON bool) error {
	ups, want, err := parseSettingsArgs(args)
	if err != nil {
		return err
	}
	home, err := locate.ConfigHome(env.LookupEnv)
	if err != nil {
		return err
	}
	d, _, err := lf.open(env)
	if err != nil {
		return err
	}
	run, err := locate.SetUserSettings(ctx, home, ups, d.Journal())
	if err != nil {
		return err
	}
	ms, err := resolveSettings(env, lf)
	if err != nil {
		return err
	}
	// Say when the value written is not the value in force.
	var notes []string
	for _, v := range []locate.Setting{ms.AutoMemoryEnabled, ms.AutoDreamEnabled} {
		w, set := want[v.Key]
		if !set || w == nil || *w == v.Value {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s is still %t: %s", v.Key, v.Value, settingOrigin(v)))
	}
	sort.Strings(notes)
	out := settingsSetJSON{Settings: ms, Notes: notes}
	if notes == nil {
		out.Notes = []string{}
	}
	if run != nil {
		out.RunID = run.ID
	}
	return cli.Emit(env, asJSON, out, func(w io.Writer) error {
		if run == nil {
			fmt.Fprintf(w, "%s already says so; nothing changed.\n", ms.UserSettings)
		} else {
			fmt.Fprintf(w, "Updated %s (%s). Undo with: memdir undo %s\n", ms.UserSettings, strings.Join(args, " "), run.ID)
		}
		for _, n := range notes {
			fmt.Fprintf(env.Stderr, "note: %s\n", n)
		}
		return nil
	})
}
