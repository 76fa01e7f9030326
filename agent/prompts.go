package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/transcript"
)

// ExtractPromptOptions shape the extraction instructions.
type ExtractPromptOptions struct {
	NewMessages int
	MaxTurns    int
	Team        bool
	SkipIndex   bool
	Today       time.Time
}

// ExtractionInstructions is the extraction agent's brief, appended to the
// memory system prompt. It tells the agent what it is for, what it may use,
// how to spend its few turns, and how to avoid duplicates.
func ExtractionInstructions(o *ExtractPromptOptions) string {
	var b strings.Builder
	b.WriteString("# Your task: memory extraction\n\n")
	fmt.Fprintf(&b, "You are not talking with the user. You are a background process that reads the latest part of a conversation between the user and an AI coding assistant (about the last %d messages, given to you below) and updates the persistent memory described above, so that future conversations benefit from what was learned in this one.\n\n", o.NewMessages)
	b.WriteString("- Work only from those messages. Do not look for confirmation elsewhere: you cannot read the project's files, search its code or run commands, and you do not need to.\n")
	b.WriteString("- Your only tool is the memory tool, on the memory directory shown as `/memories`: view, create, str_replace, insert, delete and rename. Deleting memories is not for this task; correct a wrong memory instead.\n")
	fmt.Fprintf(&b, "- You have at most %d turns, so spend them well: in your first turn, view everything you need at once (MEMORY.md and any memory you might update); in your second turn, make all your changes at once. Do not alternate between reading and writing.\n", o.MaxTurns)
	b.WriteString("- Most conversations contain nothing worth remembering. If this one does not, change nothing and say so in one sentence.\n")
	b.WriteString("- Save only what fits one of the four types and will matter in a later conversation. Apply the rules above on what not to save.\n")
	b.WriteString("- Before creating a memory, check the existing ones listed in the request: update an existing memory that covers the topic rather than adding a duplicate.\n")
	if !o.Today.IsZero() {
		fmt.Fprintf(&b, "- Today is %s. Write dates as absolute dates (\"next Thursday\" becomes a date).\n", o.Today.Format("Monday 2006-01-02"))
	}
	if o.SkipIndex {
		b.WriteString("- Write each memory to a file of its own with the frontmatter shown above; the index is kept for you.\n")
	} else {
		b.WriteString("- For each memory, write the file with the frontmatter shown above and add or update its line in MEMORY.md, as described above.\n")
	}
	if o.Team {
		b.WriteString("- Put each memory in the private or the team directory as its type suggests, and never put secrets, credentials or personal data in team memory.\n")
	}
	b.WriteString("\nWhen you are done, reply with one short sentence saying what you saved, or that nothing was worth saving.\n")
	return b.String()
}

// extractionRequest is the user message of an extraction: the existing
// memories, then the conversation.
func extractionRequest(manifest, conversation string) string {
	var b strings.Builder
	if strings.TrimSpace(manifest) != "" {
		b.WriteString("## Existing memory files\n\n")
		b.WriteString(strings.TrimSuffix(manifest, "\n"))
		b.WriteString("\n\nCheck this list before writing: update an existing file rather than create a duplicate.\n\n")
	} else {
		b.WriteString("## Existing memory files\n\nThere are none yet.\n\n")
	}
	b.WriteString("## The conversation\n\n")
	b.WriteString(conversation)
	return b.String()
}

// conversationBudget caps the rendered conversation, in bytes.
const conversationBudget = 120_000

// Limits on what one block contributes to a rendered conversation.
const (
	renderTextMax   = 8_000
	renderInputMax  = 600
	renderResultMax = 1_200
)

// RenderConversation writes messages as plain text for a model to read:
// who said what, which tools were called with which input, and what they
// returned, each shortened. When the whole exceeds budget bytes, the oldest
// messages are left out and a note says how many; the newest message is
// always kept.
func RenderConversation(msgs []transcript.Message, budget int) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if s := renderMessage(m); s != "" {
			parts = append(parts, s)
		}
	}
	total, start := 0, len(parts)
	for start > 0 && (start == len(parts) || total+len(parts[start-1]) <= budget) {
		start--
		total += len(parts[start])
	}
	var b strings.Builder
	if start > 0 {
		fmt.Fprintf(&b, "(The %d earliest messages are left out for length.)\n\n", start)
	}
	b.WriteString(strings.Join(parts[start:], "\n"))
	return b.String()
}

func renderMessage(m transcript.Message) string {
	var b strings.Builder
	switch {
	case m.IsCompactSummary:
		b.WriteString("[Summary of the earlier conversation]\n")
	case m.IsToolResult():
		b.WriteString("[Tool results]\n")
	case m.Role == llm.RoleUser && m.IsMeta:
		b.WriteString("[Harness message]\n")
	case m.Role == llm.RoleUser:
		b.WriteString("User:\n")
	default:
		b.WriteString("Assistant:\n")
	}
	wrote := false
	for _, blk := range m.Content {
		switch blk.Type {
		case llm.BlockText:
			text := blk.Text
			if m.Role == llm.RoleUser {
				text = transcript.StripWrappers(text)
			}
			if text = strings.TrimSpace(text); text != "" {
				b.WriteString(cut(text, renderTextMax) + "\n")
				wrote = true
			}
		case llm.BlockToolUse:
			fmt.Fprintf(&b, "(called %s %s)\n", blk.ToolName, cut(compactJSON(blk.Input), renderInputMax))
			wrote = true
		case llm.BlockToolResult:
			label := "result"
			if blk.IsError {
				label = "error"
			}
			fmt.Fprintf(&b, "(%s: %s)\n", label, cut(strings.TrimSpace(blk.Text), renderResultMax))
			wrote = true
		}
	}
	if !wrote {
		return ""
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// cut shortens s to about n bytes on a rune boundary, saying how much was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf(" […%d more bytes]", len(s)-i)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// DreamPromptOptions shape the consolidation prompt.
type DreamPromptOptions struct {
	// MemoryDir is the memory directory, TranscriptDir the session logs.
	MemoryDir, TranscriptDir string
	// Sessions lists the sessions since the last consolidation (automatic
	// runs); empty for a run started by hand.
	Sessions []string
	Today    time.Time
	// Usage is how often each memory was surfaced to an agent, from the
	// directory's use log (see usage.Log), least used first; counting
	// began at UsageSince. Empty means no usage section.
	Usage      []DreamMemoryUse
	UsageSince time.Time
	// Stale lists the memories whose anchored code changed since they were
	// written, with a change summary per file; they come first.
	Stale []doctor.StaleMemory
}

// DreamMemoryUse is one memory's line in the dream prompt's usage table.
type DreamMemoryUse struct {
	Path     string
	Uses     int
	LastUsed time.Time // zero when never surfaced
	Changed  time.Time // the file's modification time
}

// dreamUsageLines caps the usage table: the least used memories are the ones
// to look at.
const dreamUsageLines = 200

// DreamPrompt is the consolidation agent's brief: four phases (orient,
// gather, consolidate, prune and index) in memdir's words.
func DreamPrompt(o *DreamPromptOptions) string {
	var b strings.Builder
	b.WriteString("# Dream: consolidating memory\n\n")
	b.WriteString("You are not talking with the user. You are a background process making a reflective pass over the assistant's persistent memory: fold what was learned recently into durable, well organised memories, and leave the index tidy, so that future conversations find what they need quickly.\n\n")
	fmt.Fprintf(&b, "The memory directory is `%s`; you reach it through the memory tool as `/memories`. It already exists.\n", o.MemoryDir)
	if o.TranscriptDir != "" {
		fmt.Fprintf(&b, "Past session transcripts (large JSONL files, one per session) are in the project directory your read-only tools see (`grep`, `glob`, `ls`, `read_file`): `%s`. Search them narrowly; never read them whole.\n", o.TranscriptDir)
	}
	if !o.Today.IsZero() {
		fmt.Fprintf(&b, "Today is %s.\n", o.Today.Format("Monday 2006-01-02"))
	}
	if len(o.Stale) > 0 {
		b.WriteString("\n## First: memories the code has moved away from\n\n")
		b.WriteString("These memories name project files that changed, or no longer exist, since the memory was written. Check each one before anything else: read it, weigh it against the change below and against the recent logs and transcripts, then either correct it, narrow it to what still holds, or remove it if it is plainly obsolete. If nothing you can see says whether it still holds, leave its facts as they are and add one line saying the code changed on the given date and the memory needs checking. Never invent what the new code does.\n\n")
		for _, m := range o.Stale {
			fmt.Fprintf(&b, "- `/memories/%s`:\n", m.Path)
			for _, a := range m.Anchors {
				fmt.Fprintf(&b, "  - `%s` %s: %s\n", a.Path, a.State, a.Summary)
			}
		}
	}
	b.WriteString("\n## Phase 1: orient\n\n")
	b.WriteString("- View `/memories` and read MEMORY.md.\n")
	b.WriteString("- Skim the topic files, enough to know what is already covered and to avoid creating duplicates.\n")
	b.WriteString("- If `/memories/logs/` exists, note the daily logs since the last consolidation.\n")
	b.WriteString("\n## Phase 2: gather recent signal\n\nIn this order of priority:\n\n")
	b.WriteString("1. The daily logs (`/memories/logs/YYYY/MM/YYYY-MM-DD.md`): the raw notes of recent sessions, meant to be distilled.\n")
	b.WriteString("2. Memories that have drifted: facts that later notes or transcripts contradict.\n")
	b.WriteString("3. The transcripts, searched with narrow terms for what the logs and memories point at (for instance `grep` for a specific name with the glob `*.jsonl`). Do not read transcripts exhaustively.\n")
	b.WriteString("\n## Phase 3: consolidate\n\n")
	b.WriteString("- Write or update memory files at the top level of the memory directory, in the format the memory instructions describe (frontmatter with name, description and type; Why and How to apply lines for feedback and project memories).\n")
	b.WriteString("- Merge new facts into the existing memory on the topic rather than creating another.\n")
	b.WriteString("- Turn relative dates into absolute dates.\n")
	b.WriteString("- Correct or remove facts that newer information contradicts. A memory you delete is kept in memdir's journal and can be restored, but prefer correcting it when part of it still holds.\n")
	b.WriteString("- Leave the daily logs as they are: they are append-only records.\n")
	b.WriteString("\n## Phase 4: prune and index\n\n")
	fmt.Fprintf(&b, "- Keep MEMORY.md under %d lines and about %s: one line per memory, under about 150 characters, in the form `- [Title](file.md) — one-line hook`.\n", memdir.MaxIndexLines, memdir.FormatFileSize(memdir.MaxIndexChars))
	b.WriteString("- Remove lines that point at files that no longer exist, and add lines for memories that have none.\n")
	b.WriteString("- Shorten lines over about 200 characters, moving the detail into the topic file.\n")
	b.WriteString("- Resolve contradictions between memories.\n")
	writeDreamUsage(&b, o)
	b.WriteString("\nWhen you are done, reply with a brief summary of what you changed, or say that nothing needed changing.\n")
	if len(o.Sessions) > 0 {
		b.WriteString("\n## Additional context\n\n")
		b.WriteString("Your tools are limited to the memory tool and read-only `read_file`, `grep`, `glob` and `ls`; there is no shell, so do not try one.\n\n")
		fmt.Fprintf(&b, "Sessions since the last consolidation (%d):\n", len(o.Sessions))
		for _, s := range o.Sessions {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

// writeDreamUsage adds the usage figures: a signal for the prune phase, never
// a reason to delete on its own.
func writeDreamUsage(b *strings.Builder, o *DreamPromptOptions) {
	if len(o.Usage) == 0 {
		return
	}
	day := func(t time.Time) string { return t.UTC().Format("2006-01-02") }
	b.WriteString("\n## How often each memory is used\n\n")
	fmt.Fprintf(b, "memdir counts every time a memory is surfaced to an agent (recall, the prompt hook, a memory-tool view), since %s. Treat these figures as a hint, not a rule: a memory rarely or never surfaced may have a description that does not say when it applies (sharpen it), may duplicate another (merge them), or may be obsolete (correct or remove it only when its content is no longer true). Never delete a memory only because it is unused; a rarely needed fact can still be right and valuable.\n\n", day(o.UsageSince))
	rows := o.Usage
	if len(rows) > dreamUsageLines {
		rows = rows[:dreamUsageLines]
	}
	for _, u := range rows {
		last := "never surfaced"
		if !u.LastUsed.IsZero() {
			last = "last surfaced " + day(u.LastUsed)
		}
		fmt.Fprintf(b, "- %s: %d uses, %s, changed %s\n", u.Path, u.Uses, last, day(u.Changed))
	}
	if n := len(o.Usage) - len(rows); n > 0 {
		fmt.Fprintf(b, "- … and %d more memories, each used at least %d times\n", n, rows[len(rows)-1].Uses)
	}
}
