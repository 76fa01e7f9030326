package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
)

func TestWriteTable(t *testing.T) {
	rows := [][]string{
		{"TYPE", "PATH", "DESCRIPTION"},
		{"user", "user_role.md", "the user is a data scientist investigating logging"},
		{"project", "日本語のメモ.md", "短い"},
	}
	for _, tt := range []struct {
		name string
		opts *tableOptions
		want string
	}{
		{"full", nil, "" +
			"TYPE     PATH             DESCRIPTION\n" +
			"user     user_role.md     the user is a data scientist investigating logging\n" +
			"project  日本語のメモ.md  短い\n"},
		{"fit 50", &tableOptions{Width: 50}, "" +
			"TYPE     PATH             DESCRIPTION\n" +
			"user     user_role.md     the user is a data…\n" +
			"project  日本語のメモ.md  短い\n"},
		// Too narrow for the last column's minimum: the widest other
		// column is cut too.
		{"fit 30", &tableOptions{Width: 30}, "" +
			"TYPE    PATH    DESCRIPTION\n" +
			"user    user_…  the user is…\n" +
			"proje…  日本…   短い\n"},
		{"fit 30, type whole", &tableOptions{Width: 30, Whole: []bool{true}}, "" +
			"TYPE     PATH    DESCRIPTION\n" +
			"user     user_…  the user is…\n" +
			"project  日本…   短い\n"},
	} {
		var b bytes.Buffer
		if err := writeTable(&b, rows, tt.opts); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if tt.opts != nil {
			for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if displayWidth(l) > tt.opts.Width {
					t.Errorf("%s: %q is %d cells wide", tt.name, l, displayWidth(l))
				}
			}
		}
	}
	// Headers on two lines and numbers aligned right, as eval recall has them.
	var b bytes.Buffer
	writeTable(&b, [][]string{{"method", "recall\n@5", "tokens/\nquery"}, {"lexical", "0.850", "12"}, {"llm", "1.000", "1234"}}, &tableOptions{Width: 80, Right: []bool{false, true, true}})
	want := "" +
		"method   recall  tokens/\n" +
		"             @5    query\n" +
		"lexical   0.850       12\n" +
		"llm       1.000     1234\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("two-line headers (-want +got):\n%s", diff)
	}
}

func TestTableWidth(t *testing.T) {
	for _, tt := range []struct {
		env  cli.Env
		want int
	}{
		{cli.Env{}, 0},
		{cli.Env{StdoutIsTerminal: true}, 80},
		{cli.Env{StdoutIsTerminal: true, StdoutColumns: 132}, 132},
		{cli.Env{StdoutIsTerminal: true, LookupEnv: func(k string) (string, bool) { return "100", k == "COLUMNS" }}, 100},
		{cli.Env{LookupEnv: func(k string) (string, bool) { return "100", k == "COLUMNS" }}, 0},
	} {
		if tt.env.LookupEnv == nil {
			tt.env.LookupEnv = func(string) (string, bool) { return "", false }
		}
		if got := tableWidth(&tt.env); got != tt.want {
			t.Errorf("tableWidth(terminal %v, columns %d) = %d, want %d", tt.env.StdoutIsTerminal, tt.env.StdoutColumns, got, tt.want)
		}
	}
}

// TestListAndLogFitTheTerminal checks that list and log lines fit an
// 80-column terminal, and that piped output and --json keep every word.
func TestListAndLogFitTheTerminal(t *testing.T) {
	w := newMemWorld(t)
	desc := "when deploying the dispatch service to production always run the blue green script and never deploy by hand on a Friday"
	w.ok(t, "save", "--name", "deploy policy", "--description", desc, "--type", "feedback", "--body", "Use scripts/bluegreen.sh.")
	for _, args := range [][]string{{"list"}, {"log"}} {
		w.columns = 0
		piped := w.ok(t, args...)
		want := map[string]string{"list": "never deploy by hand on a Friday", "log": "save feedback_deploy_policy.md"}[args[0]]
		if !strings.Contains(piped, want) {
			t.Errorf("memdir %s piped cut the text:\n%s", args[0], piped)
		}
		w.columns = 80
		out := w.ok(t, args...)
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if displayWidth(l) > 80 {
				t.Errorf("memdir %s on an 80-column terminal: %d cells: %q", args[0], displayWidth(l), l)
			}
		}
		if args[0] == "list" {
			if !strings.Contains(out, "…") || strings.Contains(out, "Friday") {
				t.Errorf("memdir list on a terminal did not cut the description with …:\n%s", out)
			}
			if js := w.ok(t, "list", "--json"); !strings.Contains(js, desc) {
				t.Errorf("list --json on a terminal cut the description:\n%s", js)
			}
		}
	}
}

// TestTableFitsEvalRecall lays out eval recall's table as writeTable
// does it for eval (headers on two lines, numbers right-aligned): it fits
// 80 columns without cutting a figure, where one-line headers took ~110.
func TestTableFitsEvalRecall(t *testing.T) {
	rows := [][]string{evalColumns,
		{"ranking", "0.812", "0.433", "0.774", "0.000", "0.000", "-", "0", "-"},
		{"hybrid ranking", "0.688", "0.375", "0.612", "1.000", "0.111", "-", "0", "-"},
		{"selector (model)", "0.938", "0.512", "0.881", "0.950", "0.020", "1.000", "12345", "200 (1200)"},
		{evalLabel("claude-code newest 200"), "-", "-", "-", "-", "-", "0.734", "5213", "176 (200)"},
	}
	var b bytes.Buffer
	if err := writeTable(&b, rows, &tableOptions{Width: 80, Right: evalFigures}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if displayWidth(l) > 80 || strings.Contains(l, "…") {
			t.Errorf("%q: %d cells", l, displayWidth(l))
		}
	}
	if !strings.Contains(b.String(), "200 (1200)\n") || !strings.Contains(b.String(), "claude-code 200") || !strings.Contains(b.String(), "selector (model)") {
		t.Errorf("a figure was cut:\n%s", b.String())
	}
}
