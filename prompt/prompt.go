package prompt

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
)

// Mode selects which memory prompt to build.
type Mode string

// Prompt modes, as Claude Code dispatches them.
const (
	// Individual is the usual prompt: one private memory directory.
	Individual Mode = "individual"
	// Team covers a private directory and its shared team/ directory.
	Team Mode = "team"
	// DailyLog is for long-lived assistant sessions that append to a
	// daily log, which a consolidation pass later distils.
	DailyLog Mode = "daily-log"
	// Agent is an agent's own memory, with MEMORY.md inlined.
	Agent Mode = "agent"
)

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Individual, Team, DailyLog, Agent:
		return m, nil
	}
	return "", fmt.Errorf("prompt mode %q: want individual, team, daily-log or agent: %w", s, memdir.ErrInvalid)
}

// Options describe the memory prompt to build.
type Options struct {
	Mode Mode
	// Dir is the memory directory (the agent's, in agent mode).
	Dir string
	// SkipIndex drops the MEMORY.md step, for setups where recall brings
	// relevant memories instead of the index being loaded (agent mode
	// ignores it, as Claude Code does).
	SkipIndex bool
	// ExtraGuidelines are appended as a section of their own.
	ExtraGuidelines []string
	// AgentScope is the agent memory's scope (agent mode).
	AgentScope locate.AgentScope
	// Index is MEMORY.md as loaded (see LoadIndexText); agent mode inlines
	// it under "## MEMORY.md". IndexExists false means there is none yet.
	Index       string
	IndexExists bool
	// SearchDir, when set, adds a section on searching past context: grep
	// the memory files, and as a last resort the transcripts in this
	// directory.
	SearchDir string
}

// Build returns the memory section of an agent's system prompt: what the
// memory is, the four types, what not to save, how to save, when to read, how
// to trust what was read. It follows the structure and the rules of Claude
// Code's prompt in memdir's own words.
func Build(o *Options) (string, error) {
	if o.Dir == "" {
		return "", fmt.Errorf("build memory prompt: no memory directory: %w", memdir.ErrInvalid)
	}
	dir := withSep(o.Dir)
	var b strings.Builder
	switch o.Mode {
	case Individual, "":
		writeIndividual(&b, "auto memory", dir, o.SkipIndex, o)
	case Agent:
		if o.AgentScope == "" {
			return "", fmt.Errorf("build agent memory prompt: no scope: %w", memdir.ErrInvalid)
		}
		opts := *o
		opts.ExtraGuidelines = append([]string{agentScopeNote(o.AgentScope)}, o.ExtraGuidelines...)
		writeIndividual(&b, "Persistent Agent Memory", dir, false, &opts)
		b.WriteString("## MEMORY.md\n\n")
		if o.IndexExists && strings.TrimSpace(o.Index) != "" {
			b.WriteString(o.Index)
			b.WriteString("\n")
		} else {
			b.WriteString("Your MEMORY.md is empty so far. Memories you save will be listed here.\n")
		}
	case Team:
		writeTeam(&b, dir, o)
	case DailyLog:
		writeDailyLog(&b, dir, o)
	default:
		return "", fmt.Errorf("build memory prompt: unknown mode %q: %w", o.Mode, memdir.ErrInvalid)
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

func withSep(dir string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir
	}
	return dir + string(filepath.Separator)
}

func agentScopeNote(s locate.AgentScope) string {
	switch s {
	case locate.ScopeUser:
		return "This memory belongs to you across every project you work on, so keep what you save general: lessons that hold anywhere, not details of one codebase."
	case locate.ScopeProject:
		return "This memory is checked into the project's version control and shared with everyone who works on it, so tailor what you save to this project and write it for your teammates too."
	default:
		return "This memory is specific to this project on this machine and is not checked in, so tailor what you save to both."
	}
}

const dirExists = "The directory already exists: write files in it directly with the Write tool, without creating it or checking that it is there."

func writeIndividual(b *strings.Builder, title, dir string, skipIndex bool, o *Options) {
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "You have a persistent memory made of files at `%s`. %s\n\n", dir, dirExists)
	b.WriteString("Build this memory up over time, so that in future conversations you know who the user is, how they like to work with you, what to repeat and what to avoid, and why the work is the way it is.\n\n")
	b.WriteString("If the user asks you to remember something, save it straight away as the type that fits it best. If they ask you to forget something, find the memory and remove it.\n\n")
	writeTypes(b, false)
	writeNotToSave(b)
	writeHowToSave(b, skipIndex, false)
	writeWhenToAccess(b, false)
	writeBeforeRecommending(b)
	writeOtherPersistence(b)
	writeExtra(b, o.ExtraGuidelines)
	writeSearching(b, dir, o.SearchDir)
}

func writeTeam(b *strings.Builder, dir string, o *Options) {
	team := withSep(filepath.Join(dir, memdir.TeamDirName))
	b.WriteString("# Memory\n\n")
	fmt.Fprintf(b, "You have a persistent memory made of files in two directories: your private memory at `%s` and the memory you share with your team at `%s`. Both directories already exist: write files in them directly with the Write tool, without creating them or checking that they are there.\n\n", dir, team)
	b.WriteString("Build this memory up over time, so that in future conversations you know who the user is, how they like to work with you, what to repeat and what to avoid, and why the work is the way it is.\n\n")
	b.WriteString("If the user asks you to remember something, save it straight away as the type that fits it best. If they ask you to forget something, find the memory and remove it.\n\n")
	b.WriteString("## Memory scope\n\n")
	b.WriteString("- Private memories are yours and this user's alone.\n")
	b.WriteString("- Team memories are shared with everyone who works on this project and are synced at the start of every session. Save there what the whole team should know.\n")
	b.WriteString("- Each type below says which scope it usually belongs in.\n\n")
	writeTypes(b, true)
	writeNotToSave(b)
	b.WriteString("- Never save secrets, credentials or other sensitive data in team memory: it is shared with everyone on the project.\n\n")
	writeHowToSave(b, o.SkipIndex, true)
	writeWhenToAccess(b, true)
	writeBeforeRecommending(b)
	writeOtherPersistence(b)
	writeExtra(b, o.ExtraGuidelines)
	writeSearching(b, dir, o.SearchDir)
}

func writeDailyLog(b *strings.Builder, dir string, o *Options) {
	logPath := filepath.Join(dir, "logs", "YYYY", "MM", "YYYY-MM-DD.md")
	b.WriteString("# auto memory\n\n")
	fmt.Fprintf(b, "This session is long-lived, and you keep a persistent memory in files at `%s`.\n\n", dir)
	fmt.Fprintf(b, "As you work, append short, timestamped bullet points to today's log, `%s`, using today's date from the conversation. Create the file and its directories the first time you write to it. The log only grows: append to it, and never rewrite, reorder or tidy what is already there. A separate process distils the logs every night into MEMORY.md and the topic files.\n\n", logPath)
	b.WriteString("## What to log\n\n")
	b.WriteString("- Corrections and preferences: how the user wants you to work, and what they told you to stop or keep doing.\n")
	b.WriteString("- Facts about the user: their role, goals and what they already know.\n")
	b.WriteString("- Project context the code cannot tell you: decisions, deadlines, incidents, who owns what.\n")
	b.WriteString("- Where things live outside the code: dashboards, trackers, channels, documents.\n")
	b.WriteString("- Anything the user explicitly asks you to remember.\n\n")
	writeNotToSave(b)
	if !o.SkipIndex {
		b.WriteString("## MEMORY.md\n\n")
		b.WriteString("MEMORY.md is the distilled index of your memory and is loaded into every conversation automatically. The nightly process maintains it: do not edit it yourself.\n\n")
	}
	writeExtra(b, o.ExtraGuidelines)
	writeSearching(b, dir, o.SearchDir)
}

type typeDoc struct {
	name, scope, description, whenToSave, howToUse, bodyStructure string
	examples                                                      []string
}

var typeDocs = []typeDoc{
	{
		name:        "user",
		scope:       "Always private.",
		description: "Who the user is: their role, their goals, what they know well and what is new to them. This lets you pitch explanations and suggestions at the right level. Record facts, not judgements about the person.",
		whenToSave:  "When you learn something lasting about the user's role, responsibilities, experience or preferences.",
		howToUse:    "To fit your explanations, the detail you give and the choices you suggest to this person.",
		examples: []string{
			"The user says they maintain the billing service and have written Go for years but are new to the React front end: save that they are a senior Go engineer new to React, so front-end explanations can assume less.",
		},
	},
	{
		name:          "feedback",
		scope:         "Private by default. Save to the team only when it is a convention for the whole project, and check first that it does not contradict a team feedback memory.",
		description:   "Guidance about how to work: corrections of what you did wrong, and also confirmations of approaches that worked, so you learn from successes as well as failures. Always record why, so that you can judge the edge cases later.",
		whenToSave:    "When the user corrects you, tells you to stop or keep doing something, or clearly approves of a non-obvious choice you made.",
		howToUse:      "Follow it in similar situations, and let the reason tell you where it stops applying.",
		bodyStructure: "Lead with the rule itself. Then a **Why:** line with the reason, often an incident, and a **How to apply:** line saying when and where it applies.",
		examples: []string{
			"The user says not to mock the database in integration tests because mocked tests once passed while a migration was broken: save the rule, that incident as the why, and that it applies to every integration test.",
			"The user accepts your single combined pull request for a risky refactor and says that was the right call: save that they prefer one reviewable PR for such refactors, and why.",
		},
	},
	{
		name:          "project",
		scope:         "Lean towards the team: project context is usually useful to everyone.",
		description:   "The state of the work that the code and its history cannot tell you: goals, decisions and their reasons, deadlines, incidents, who is responsible for what. Such facts go out of date quickly, so date them.",
		whenToSave:    "When you learn about ongoing work, a decision, a constraint or a date that will matter in later conversations. Turn relative dates into absolute ones (\"Thursday\" becomes \"2026-03-05\").",
		howToUse:      "To understand the reasons behind a request and to make suggestions that fit where the project is going.",
		bodyStructure: "Lead with the fact or decision. Then a **Why:** line (the constraint, deadline or person behind it) and a **How to apply:** line.",
		examples: []string{
			"The user mentions that the payments API is frozen from 2026-03-05 until the audit ends: save the freeze with its dates and reason, so you do not propose API changes during it.",
		},
	},
	{
		name:        "reference",
		scope:       "Usually the team: everyone needs to know where things are.",
		description: "Pointers to information that lives outside the code: issue trackers, dashboards, runbooks, chat channels, documents.",
		whenToSave:  "When you learn where to look something up, or where a kind of work is tracked.",
		howToUse:    "To know where to look, or where to send the user, when that kind of information is needed.",
		examples: []string{
			"The user says alerts for the checkout service are triaged in the #checkout-oncall channel and graphed on the \"checkout-latency\" Grafana board: save both pointers.",
		},
	},
}

func writeTypes(b *strings.Builder, withScope bool) {
	b.WriteString("## Types of memory\n\n")
	b.WriteString("Every memory has one of these four types.\n\n<types>\n")
	for _, t := range typeDocs {
		fmt.Fprintf(b, "<type>\n<name>%s</name>\n", t.name)
		if withScope {
			fmt.Fprintf(b, "<scope>%s</scope>\n", t.scope)
		}
		fmt.Fprintf(b, "<description>%s</description>\n<when_to_save>%s</when_to_save>\n<how_to_use>%s</how_to_use>\n", t.description, t.whenToSave, t.howToUse)
		if t.bodyStructure != "" {
			fmt.Fprintf(b, "<body_structure>%s</body_structure>\n", t.bodyStructure)
		}
		b.WriteString("<examples>\n")
		for _, e := range t.examples {
			fmt.Fprintf(b, "- %s\n", e)
		}
		b.WriteString("</examples>\n</type>\n")
	}
	b.WriteString("</types>\n\n")
}

func writeNotToSave(b *strings.Builder) {
	b.WriteString("## What NOT to save in memory\n\n")
	b.WriteString("- Code patterns, architecture, file paths or project structure: read the code instead.\n")
	b.WriteString("- Git history, or who changed what: `git log` and `git blame` have it.\n")
	b.WriteString("- Recipes for fixing a bug: the fix is in the code and its reason in the commit message.\n")
	b.WriteString("- Anything already written in CLAUDE.md files.\n")
	b.WriteString("- The state of the current task, or anything else that only matters in this conversation.\n\n")
	b.WriteString("These exclusions hold even when the user asks you to save such things. If they ask you to remember a list of pull requests or a log of activity, ask what in it was surprising or worth knowing later, and save that.\n\n")
}

func writeHowToSave(b *strings.Builder, skipIndex, team bool) {
	b.WriteString("## How to save memories\n\n")
	front := "```markdown\n---\nname: {{memory name}}\ndescription: {{one line saying what this memory is about, specific enough to decide later whether it is relevant}}\ntype: {{user, feedback, project or reference}}\n---\n\n{{the memory; for feedback and project memories: the rule or fact, then **Why:** and **How to apply:** lines}}\n```\n\n"
	if skipIndex {
		b.WriteString("Write each memory to a file of its own, named after its topic (for example `user_role.md` or `feedback_testing.md`), with this frontmatter:\n\n")
		b.WriteString(front)
		b.WriteString("- Keep the name, description and type of a memory up to date as it changes.\n")
		b.WriteString("- Organise memories by topic, not by date.\n")
		b.WriteString("- When a memory turns out to be wrong or out of date, correct it or remove it.\n")
		b.WriteString("- Do not create duplicates: check the existing memories first and update one when it fits.\n\n")
		return
	}
	where := "MEMORY.md"
	if team {
		where = "the MEMORY.md of the same directory"
	}
	b.WriteString("Saving a memory takes two steps.\n\n")
	b.WriteString("**Step 1**: write the memory to a file of its own, named after its topic (for example `user_role.md` or `feedback_testing.md`), with this frontmatter:\n\n")
	b.WriteString(front)
	fmt.Fprintf(b, "**Step 2**: add a pointer to that file in %s. MEMORY.md is an index, not a memory: one line per memory, under about 150 characters, in the form `- [Title](file.md) — one-line hook`. Never put memory content or frontmatter in it.\n\n", where)
	b.WriteString("- MEMORY.md is loaded into every conversation, and lines after the 200th are cut off, so keep the index short.\n")
	b.WriteString("- Keep the name, description and type of a memory up to date as it changes.\n")
	b.WriteString("- Organise memories by topic, not by date.\n")
	b.WriteString("- When a memory turns out to be wrong or out of date, correct it or remove it, and its index line.\n")
	b.WriteString("- Do not create duplicates: check the existing memories first and update one when it fits.\n\n")
}

func writeWhenToAccess(b *strings.Builder, team bool) {
	which := "your memories"
	if team {
		which = "your private or team memories"
	}
	b.WriteString("## When to access memories\n\n")
	fmt.Fprintf(b, "- Read %s when they seem relevant to the task, or when the user refers to earlier work.\n", which)
	b.WriteString("- You MUST read them when the user asks you to check, recall or remember something.\n")
	b.WriteString("- If the user tells you to ignore your memory, act as if MEMORY.md were empty: do not cite it, compare against it or mention it.\n")
	b.WriteString("- Memories can be out of date. Before relying on one, check it against the files and state you can see now; when they disagree, trust what you observe, and update or remove the stale memory.\n\n")
}

func writeBeforeRecommending(b *strings.Builder) {
	b.WriteString("## Before recommending from memory\n\n")
	b.WriteString("A memory that names a file, function or flag records what was true when it was written, which may no longer be true.\n\n")
	b.WriteString("- If it names a path, check that the file exists.\n")
	b.WriteString("- If it names a function or a flag, search the code for it.\n")
	b.WriteString("- Do this before the user acts on what you recommend. A memory saying that something exists is not evidence that it exists now.\n")
	b.WriteString("- For the current state of the code, prefer the code itself and `git log` to a snapshot recorded in memory.\n\n")
}

func writeOtherPersistence(b *strings.Builder) {
	b.WriteString("## Memory and other forms of persistence\n\n")
	b.WriteString("Memory is for what future conversations need. Within this conversation, use other tools:\n\n")
	b.WriteString("- To agree with the user on how to carry out non-trivial work, use a plan, not memory, and update the plan when the approach changes.\n")
	b.WriteString("- To keep track of the steps of the current task, use tasks, not memory.\n\n")
}

func writeExtra(b *strings.Builder, extra []string) {
	var lines []string
	for _, g := range extra {
		if strings.TrimSpace(g) != "" {
			lines = append(lines, strings.TrimSpace(g))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Additional guidelines\n\n")
	for _, l := range lines {
		b.WriteString(l + "\n\n")
	}
}

func writeSearching(b *strings.Builder, dir, transcripts string) {
	if transcripts == "" {
		return
	}
	b.WriteString("## Searching past context\n\n")
	b.WriteString("When you need something from earlier work that is not in the index:\n\n")
	fmt.Fprintf(b, "1. Search the memory files: grep for a specific term in `%s` with the glob `*.md`.\n", dir)
	fmt.Fprintf(b, "2. Only as a last resort, search past session transcripts: grep in `%s` with the glob `*.jsonl`. They are large, so use narrow terms.\n\n", withSep(transcripts))
}

// IndexContext renders loaded MEMORY.md text the way it is put in an agent's
// context: a heading naming the file and what it is, then the text. team
// marks the shared team index.
func IndexContext(path, text string, team bool) string {
	if team {
		return fmt.Sprintf("Contents of %s (shared team memory, synced across the organization):\n\n<team-memory-content source=\"shared\">\n%s\n</team-memory-content>", path, text)
	}
	return fmt.Sprintf("Contents of %s (user's auto-memory, persists across conversations):\n\n%s", path, text)
}
