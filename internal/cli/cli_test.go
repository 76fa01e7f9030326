package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/errs"
)

type echoOptions struct{ json bool }

func (o *echoOptions) Declare(fs *flag.FlagSet) { fs.BoolVar(&o.json, "json", false, "print JSON") }

var echoCmd = &Command{
	Name: "echo", Args: "[--json] WORD...", Short: "print the words", Long: "Prints its arguments.",
	Setup: Setup(func(_ context.Context, env *Env, o *echoOptions, args []string) error {
		if len(args) == 0 {
			return Usagef("no words")
		}
		if args[0] == "fail" {
			return fmt.Errorf("echo %s: %w", args[1], errs.ErrNotFound)
		}
		return Emit(env, o.json, args, func(w io.Writer) error { _, err := fmt.Fprintln(w, strings.Join(args, " ")); return err })
	}),
}

func runEcho(p *Program, args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := p.Run(context.Background(), echoCmd, args, &Env{Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), code
}

func TestRun(t *testing.T) {
	multi, single := &Program{Name: "memdir"}, &Program{Name: "memdir-echo", Single: true, Intro: "intro\n"}
	for _, tt := range []struct {
		p           *Program
		args        []string
		out, errOut string
		code        int
	}{
		{multi, []string{"a", "--json", "b"}, "[\n  \"a\",\n  \"b\"\n]\n", "", ExitOK},
		{multi, []string{"--", "--json"}, "--json\n", "", ExitOK},
		{multi, nil, "", "memdir echo: no words\nUsage: memdir echo [--json] WORD...\nRun 'memdir help echo' for details.\n", ExitUsage},
		{single, nil, "", "memdir-echo: no words\nUsage: memdir-echo [--json] WORD...\nRun 'memdir-echo --help' for details.\n", ExitUsage},
		{multi, []string{"--nope"}, "", "memdir echo: unknown flag --nope\nUsage: memdir echo [--json] WORD...\nRun 'memdir help echo' for details.\n", ExitUsage},
		{multi, []string{"fail", "x"}, "", "memdir echo: echo x: not found\n", ExitNotFound},
	} {
		out, errOut, code := runEcho(tt.p, tt.args...)
		if diff := cmp.Diff([]any{tt.out, tt.errOut, tt.code}, []any{out, errOut, code}); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tt.p.Name, tt.args, diff)
		}
	}
	out, _, code := runEcho(single, "--help")
	if code != ExitOK || !strings.HasPrefix(out, "intro\nUsage: memdir-echo [--json] WORD...\n\nPrints its arguments.\n\nFlags:\n  --json\n") || !strings.HasSuffix(out, ExitCodesHelp+"\n") {
		t.Errorf("--help: exit %d:\n%s", code, out)
	}
}

func TestExitCodeOf(t *testing.T) {
	modelErr := errors.New("model failed")
	p := &Program{ExitCode: func(err error) (int, bool) {
		if errors.Is(err, modelErr) {
			return ExitModel, true
		}
		return 0, false
	}}
	for _, tt := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&ExitError{Code: ExitProblems}, ExitProblems},
		{Usagef("x"), ExitUsage},
		{fmt.Errorf("run: %w", context.Canceled), ExitCanceled},
		{fmt.Errorf("a: %w", errs.ErrNotFound), ExitNotFound},
		{fmt.Errorf("a: %w", errs.ErrInvalid), ExitInvalid},
		{fmt.Errorf("a: %w", errs.ErrExists), ExitExists},
		{fmt.Errorf("a: %w", errs.ErrLocked), ExitLocked},
		{fmt.Errorf("a: %w", errs.ErrDisabled), ExitDisabled},
		// The program's own kinds come before the sentinels.
		{errors.Join(modelErr, errs.ErrInvalid), ExitModel},
		{errors.New("other"), ExitFailure},
	} {
		if got := p.ExitCodeOf(tt.err); got != tt.want {
			t.Errorf("ExitCodeOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// The JSON hook sees every value printed as JSON, and what Emit is given
// for text output too, with the line that gave it.
func TestJSONHook(t *testing.T) {
	type call struct {
		v    any
		file string
		line int
	}
	var got []call
	restore := SetJSONHook(func(v any, file string, line int) { got = append(got, call{v, filepath.Base(file), line}) })
	var out bytes.Buffer
	env := &Env{Stdout: &out}
	_, _, line, _ := runtime.Caller(0)
	Emit(env, false, 1, func(io.Writer) error { return nil })
	Emit(env, true, 2, nil)
	WriteJSON(&out, 3)
	WriteJSONLine(&out, []int{4})
	restore()
	WriteJSON(&out, 5)
	want := []call{{1, "cli_test.go", line + 1}, {2, "cli_test.go", line + 2}, {3, "cli_test.go", line + 3}, {[]int{4}, "cli_test.go", line + 4}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("hook saw (-want +got):\n%s", diff)
	}
	if want := "2\n3\n[4]\n5\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// A command's own encoder is checked against encoding/json while a hook
// is set.
func TestWriteOwnJSON(t *testing.T) {
	v := map[string]int{"a": 1}
	right := func(w io.Writer) error { _, err := io.WriteString(w, "{\n  \"a\": 1\n}\n"); return err }
	wrong := func(w io.Writer) error { _, err := io.WriteString(w, "{\"a\":1}\n"); return err }
	var out bytes.Buffer
	if err := WriteOwnJSON(&out, v, wrong); err != nil || out.String() != "{\"a\":1}\n" {
		t.Errorf("without a hook: %v, %q; want the encoder's output", err, out.String())
	}
	defer SetJSONHook(func(any, string, int) {})()
	for _, write := range []func(io.Writer) error{right, nil} {
		out.Reset()
		if err := WriteOwnJSON(&out, v, write); err != nil || out.String() != "{\n  \"a\": 1\n}\n" {
			t.Errorf("with a hook: %v, %q", err, out.String())
		}
	}
	out.Reset()
	if err := WriteOwnJSON(&out, v, wrong); err == nil || out.Len() != 0 {
		t.Errorf("a wrong encoder with a hook: %v, printed %q; want an error and nothing printed", err, out.String())
	}
}

// The program's remedies are added to the message it prints.
func TestRunRemedy(t *testing.T) {
	p := &Program{Name: "memdir", Remedy: func(err error, msg string) string {
		if errors.Is(err, errs.ErrNotFound) {
			return msg + " (see 'memdir list')"
		}
		return msg
	}}
	if _, errOut, code := runEcho(p, "fail", "x"); errOut != "memdir echo: echo x: not found (see 'memdir list')\n" || code != ExitNotFound {
		t.Errorf("exit %d, printed %q", code, errOut)
	}
}
