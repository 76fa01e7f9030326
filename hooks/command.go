package hooks

import (
	"strings"
)

// ProgramName is the name memdir's hooks are recognised by: a handler whose
// command runs a program of this name (with or without a directory, or
// ".exe") with "hook" as its first argument is memdir's.
const ProgramName = "memdir"

// HookCommand returns the command line of a handler running `memdir hook`
// with flags: the binary quoted for a POSIX shell when it needs to be (Claude
// Code runs command hooks through bash), then "hook", then the flags.
func HookCommand(binary string, flags ...string) string {
	parts := append([]string{ShellQuote(binary), "hook"}, flags...)
	return strings.Join(parts, " ")
}

// ShellQuote returns s unchanged when a POSIX shell reads it as one word
// as it is, else wrapped in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !isPlainShellRune(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isPlainShellRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:@%+=,-", r)
}

// IsProgram reports whether path names the memdir program: its last
// element, without ".exe", is ProgramName.
func IsProgram(path string) bool {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if len(base) > 4 && strings.EqualFold(base[len(base)-4:], ".exe") {
		base = base[:len(base)-4]
	}
	return base == ProgramName
}

// IsMemdirHook reports whether a command handler runs `memdir hook`: its
// command (optionally after VAR=value assignments) runs the memdir program
// with "hook" as the first argument and nothing but plain arguments after
// it, with no pipe, redirection, list or substitution. args is the
// handler's exec-form argument list, if it has one; then command is the
// program itself.
func IsMemdirHook(command string, args []string) bool {
	var words []string
	if args != nil {
		words = append([]string{command}, args...)
	} else {
		var ok bool
		if words, ok = shellWords(command); !ok {
			return false
		}
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
	}
	return len(words) >= 2 && IsProgram(words[0]) && words[1] == "hook"
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shellWords splits a simple POSIX shell command into words, honouring
// single quotes, double quotes and backslashes. ok is false for anything
// that is more than one simple command (unquoted | & ; < > ( ) ` $ or a
// newline) or whose quotes do not close.
func shellWords(s string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '$' || s[i] == '`':
					return nil, false
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case strings.IndexByte("|&;<>()`$\n#*?[~{", c) >= 0 && !(inWord && (c == '#' || c == '~')):
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
