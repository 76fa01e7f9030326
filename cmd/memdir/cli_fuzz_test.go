package main

import (
	"strings"
	"testing"
)

// FuzzCLISave saves arbitrary fields, the body given with --body or on
// standard input, then reads the memory back with show and removes it
// (so that the directory, and each run, stays small): each command
// succeeds or exits with a documented code and a message, never panics.
func FuzzCLISave(f *testing.F) {
	for _, s := range []struct {
		name, desc, typ, body string
		stdin                 bool
	}{
		{"testing policy", "run the tests", "feedback", "Why: x\n", false},
		{"a\xffb", "d", "user", "b", false},
		{"n", "d\x00", "user", "b", true},
		{"n", "d", "project", "---\nname: x\n---\n", true},
		{"../../x", "d", "reference", "", false},
		{"team/x", "d: e", "USER", "\xff\xfe", true},
		{"", "", "", "", true},
		{strings.Repeat("n", 300), "d", "user", "b", false},
	} {
		f.Add(s.name, s.desc, s.typ, s.body, s.stdin)
	}
	w := newMemWorld(f)
	f.Fuzz(func(t *testing.T, name, desc, typ, body string, stdin bool) {
		args := []string{"save", "--name", name, "--description", desc, "--type", typ}
		w.stdinTerminal, w.stdin = !stdin, ""
		if stdin {
			w.stdin = body
		} else {
			args = append(args, "--body", body)
		}
		checkExit(t, w, args...)
		w.stdinTerminal = true
		checkExit(t, w, "show", "--json", name)
		checkExit(t, w, "rm", name)
	})
}

// FuzzCLIArgs runs the commands that work on the memory directory alone
// with arbitrary arguments and standard input. Arguments that could
// reach outside the test's directories (paths, other directories) or a
// network (models, URLs) are dropped.
func FuzzCLIArgs(f *testing.F) {
	commands := []string{"list", "show", "save", "rm", "mv", "index", "doctor", "log", "path", "anchors", "review", "undo", "prompt", "recall", "config", "completion", "settings"}
	for _, s := range []struct {
		cmd   uint8
		args  string
		stdin string
	}{
		{0, "--type\x00feedback\x00--sort\x00unused\x00--limit\x00-1", ""},
		{1, "--json\x00a", ""},
		{2, "--name\x00a\x00--description\x00d\x00--type\x00user", "body"},
		{3, "a", ""},
		{4, "a\x00b", ""},
		{6, "--fix\x00--compact", ""},
		{7, "show\x002", ""},
		{7, "append", "\x1b[2J\xff"},
		{9, "refresh\x00a", ""},
		{10, "accept\x00x", ""},
		{11, "--force", ""},
		{12, "--mode\x00team\x00--extra\x00\xff", ""},
		{13, "deploy\x00--budget\x00-5\x00--tools\x00Bash,,", ""},
		{15, "names", ""},
		{16, "set\x00autoMemoryEnabled=false", ""},
		{5, "--limit=9223372036854775808", ""},
	} {
		f.Add(s.cmd, s.args, s.stdin)
	}
	w := newMemWorld(f)
	f.Fuzz(func(t *testing.T, cmd uint8, args, stdin string) {
		argv := []string{commands[int(cmd)%len(commands)]}
		for a := range strings.SplitSeq(args, "\x00") {
			l := strings.ToLower(a)
			if strings.HasPrefix(a, "/") || strings.Contains(a, "..") || strings.Contains(a, "~") ||
				strings.Contains(l, "dir") || strings.Contains(l, "project") || strings.Contains(l, "agent") || strings.Contains(l, "file") ||
				strings.Contains(l, "model") || strings.Contains(l, "url") || strings.Contains(l, "embed") || strings.Contains(l, ":") {
				continue
			}
			argv = append(argv, a)
		}
		if argv[0] == "recall" {
			argv = append(argv, "--no-model")
		}
		w.stdin, w.stdinTerminal = stdin, stdin == ""
		checkExit(t, w, argv...)
	})
}

// checkExit runs memdir and fails on an exit code memdir does not
// document, or a failure without a message.
func checkExit(t *testing.T, w *memWorld, args ...string) {
	t.Helper()
	_, errOut, code := w.run(t, args...)
	switch code {
	case 0, 3, 6:
	case 1, 2, 4, 5, 7, 8, 9:
		if strings.TrimSpace(errOut) == "" {
			t.Fatalf("memdir %q: exit %d with no message", args, code)
		}
	default:
		t.Fatalf("memdir %q: exit %d, not a documented code\n%s", args, code, errOut)
	}
}
