package transcript

import "strings"

// droppedTags wrap content Claude Code injects into user records: reminders
// for the model, slash-command bookkeeping, output of local commands and
// shell mode. None of it is the human's words.
var droppedTags = []string{
	"system-reminder",
	"command-name",
	"command-message",
	"local-command-stdout",
	"local-command-stderr",
	"local-command-caveat",
	"bash-input",
	"bash-stdout",
	"bash-stderr",
	"user-prompt-submit-hook",
}

// unwrappedTags wrap words the human did type: the arguments of a slash
// command. The tags go, the text stays.
var unwrappedTags = []string{"command-args"}

// StripWrappers removes Claude Code's injected sections (see
// [Message.HumanText]) from user text, collapses the blank lines they
// leave and trims the result. A tag that is opened and never closed is left
// alone, so ordinary text that mentions a tag survives.
func StripWrappers(s string) string {
	if !strings.Contains(s, "<") {
		return strings.TrimSpace(s)
	}
	for _, tag := range droppedTags {
		s = cutTagged(s, tag, false)
	}
	for _, tag := range unwrappedTags {
		s = cutTagged(s, tag, true)
	}
	return collapseBlankLines(strings.TrimSpace(s))
}

// cutTagged removes every <tag>...</tag> section of s, or, with keep, only
// the tags around the text.
func cutTagged(s, tag string, keep bool) string {
	open, end := "<"+tag+">", "</"+tag+">"
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+len(open):], end)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		if keep {
			b.WriteString(s[i+len(open) : i+len(open)+j])
		}
		s = s[i+len(open)+j+len(end):]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
}

// collapseBlankLines turns runs of blank lines into one blank line.
func collapseBlankLines(s string) string {
	if !strings.Contains(s, "\n\n\n") && !strings.Contains(s, "\n \n") {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if blank {
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
