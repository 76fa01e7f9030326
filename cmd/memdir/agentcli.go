package main

import (
	"fmt"

	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

// agentCLIExplain is what 'memdir path --explain --agent-cli NAME' adds:
// which directory the agent program gets, and through what. Every agent
// gets the directory Claude Code uses for the project, so one memory
// serves all three; without a name, one line says so.
func agentCLIExplain(env *cli.Env, name string, loc *locate.Location) []string {
	if name == "" {
		return []string{"agents: Claude Code uses this directory itself; Codex CLI and Gemini CLI get the same one through memdir's hooks (see --agent-cli codex|gemini)"}
	}
	agent, err := hooks.ParseAgent(name)
	if err != nil {
		return nil // checked by runPath
	}
	var lines []string
	if agent == hooks.Claude {
		lines = append(lines, "Claude Code: reads and writes this directory itself; memdir's hooks ('memdir hooks install') add recall into each prompt, checkpoints and background extraction")
	} else {
		lines = append(lines, fmt.Sprintf("%s: gets this same directory through memdir's hooks: 'memdir hook --agent %s' locates it from each event's cwd by the rules above", agent.Program(), agent))
	}
	for _, project := range []bool{false, true} {
		var a *agentHooks
		if agent == hooks.Claude {
			o := &hooksOptions{project: project}
			a = &agentHooks{agent: agent, hooksPath: claudeSettingsPath(loc, o)}
		} else if a, err = newAgentHooks(env, agent, loc, project); err != nil {
			lines = append(lines, "hooks: "+err.Error())
			continue
		}
		st, err := a.status()
		switch {
		case err != nil:
			lines = append(lines, "hooks: "+err.Error())
		case len(st.Hooks) > 0:
			lines = append(lines, fmt.Sprintf("hooks: %s in %s", cli.Plural(len(st.Hooks), "memdir handler", "memdir handlers"), st.File))
			for _, w := range st.Warnings {
				lines = append(lines, "  warning: "+w)
			}
		case !project:
			install := "memdir hooks install"
			if agent != hooks.Claude {
				install += " --agent " + string(agent)
			}
			lines = append(lines, fmt.Sprintf("hooks: none in %s (%s adds them)", st.File, install))
		}
	}
	return lines
}
