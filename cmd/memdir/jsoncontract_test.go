package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/jsoncheck"
)

// The JSON contract (docs/json.md): everything a command prints as JSON
// is a typed value whose keys are snake_case, or another program's own
// spelling (jsoncheck.Foreign). It is checked on what the commands really
// print: while the tests of this package run, a hook in internal/cli
// records every value a command gives to cli.Emit, cli.WriteJSON,
// cli.WriteJSONLine or cli.WriteOwnJSON (Emit's value is recorded for
// text output too), with the line that gave it. After the tests,
// TestMain checks
//
//   - the keys of every recorded type (jsoncheck.BadKeys, which also walks
//     what interfaces hold);
//   - that no command prints a map at the top: its keys are nobody's
//     type, so nothing would check them;
//   - that every call of those functions in the commands' sources (this
//     package and internal/checkpointcmd) was reached by some test, so a
//     command cannot escape the check by being untested;
//   - that those sources encode JSON in no other way (but in the own
//     encoders cli.WriteOwnJSON checks against encoding/json).
//
// The last two need the whole package's tests to run and pass: with -run
// or -skip, or after a failure, they are left out.

// jsonCommandSources are the directories holding commands, relative to
// this package.
var jsonCommandSources = []string{".", "../../internal/checkpointcmd"}

// ownJSONEncoders are the functions that may encode JSON themselves: what
// they write goes through cli.WriteOwnJSON, which compares it with
// encoding/json's while the hook is set.
var ownJSONEncoders = map[string]bool{"writeListJSON": true}

// withoutJSONHook removes the hook for a benchmark, which would otherwise
// measure the checks too.
func withoutJSONHook(b *testing.B) { b.Cleanup(cli.SetJSONHook(nil)) }

// jsonRecord is what the hook saw.
var jsonRecord struct {
	sync.Mutex
	problems map[string]bool // with the values printed
	lines    map[string]bool // "file:line" of every call seen
}

func TestMain(m *testing.M) {
	flag.Parse()
	jsonRecord.problems, jsonRecord.lines = map[string]bool{}, map[string]bool{}
	restore := cli.SetJSONHook(func(v any, file string, line int) {
		if strings.HasSuffix(file, "_test.go") {
			return // a test's own use, not a command's output
		}
		var problems []string
		at := fmt.Sprintf("%s:%d", filepath.Base(file), line)
		if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Map {
			problems = append(problems, fmt.Sprintf("%s prints a %s: use a struct, whose keys can be checked", at, t))
		}
		for _, b := range jsoncheck.BadKeys(v) {
			problems = append(problems, fmt.Sprintf("%s prints %s: not snake_case (nor in jsoncheck.Foreign)", at, b))
		}
		jsonRecord.Lock()
		defer jsonRecord.Unlock()
		jsonRecord.lines[fmt.Sprintf("%s:%d", file, line)] = true
		for _, p := range problems {
			jsonRecord.problems[p] = true
		}
	})
	code := m.Run()
	restore()
	// What no test reached is known only when every test ran, and passed
	// (a failed test may have stopped early).
	full := code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == ""
	if problems := jsonContractProblems(full); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "--- FAIL: the JSON contract (docs/json.md):\n\t%s\n", strings.Join(problems, "\n\t"))
		if code == 0 {
			fmt.Println("FAIL")
			code = 1
		}
	}
	os.Exit(code)
}

// jsonContractProblems returns what the hook found wrong; full adds the
// checks that need every test to have run.
func jsonContractProblems(full bool) []string {
	jsonRecord.Lock()
	defer jsonRecord.Unlock()
	var problems []string
	for p := range jsonRecord.problems {
		problems = append(problems, p)
	}
	if full {
		calls, others, err := jsonCallSites()
		if err != nil {
			return append(problems, err.Error())
		}
		for _, c := range calls {
			if !c.reached(jsonRecord.lines) {
				problems = append(problems, fmt.Sprintf("%s: no test reaches this cli.%s, so what it prints is not checked", c.pos, c.fn))
			}
		}
		problems = append(problems, others...)
	}
	sort.Strings(problems)
	return problems
}

// jsonCall is a call of cli.Emit, cli.WriteJSON or cli.WriteJSONLine.
type jsonCall struct {
	fn         string
	pos        string // file:line, for the message
	file       string // absolute
	start, end int    // the lines the call spans
}

// reached reports whether the hook saw the call: its line is the call's
// first, but any line of it will do.
func (c jsonCall) reached(lines map[string]bool) bool {
	for l := c.start; l <= c.end; l++ {
		if lines[fmt.Sprintf("%s:%d", c.file, l)] {
			return true
		}
	}
	return false
}

// jsonCallSites finds, in the commands' non-test sources, the calls of the
// cli package's JSON functions, and the other ways of encoding JSON.
func jsonCallSites() (calls []jsonCall, others []string, err error) {
	fset := token.NewFileSet()
	for _, dir := range jsonCommandSources {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, nil, err
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			abs, err := filepath.Abs(name)
			if err != nil {
				return nil, nil, err
			}
			f, err := parser.ParseFile(fset, abs, nil, 0)
			if err != nil {
				return nil, nil, err
			}
			for _, decl := range f.Decls {
				fn := ""
				if d, ok := decl.(*ast.FuncDecl); ok {
					fn = d.Name.Name
				}
				found := jsonCallsIn(decl, fset, abs)
				calls = append(calls, found.calls...)
				if !ownJSONEncoders[fn] {
					others = append(others, found.others...)
				}
			}
		}
	}
	if len(calls) == 0 {
		return nil, nil, fmt.Errorf("found no call of cli.Emit in %q: the contract test looks in the wrong place", jsonCommandSources)
	}
	return calls, others, nil
}

// jsonCalls is what jsonCallsIn found.
type jsonCalls struct {
	calls  []jsonCall
	others []string
}

// jsonCallsIn finds the calls of the cli JSON functions and of the JSON
// encoders in one declaration of file.
func jsonCallsIn(decl ast.Decl, fset *token.FileSet, file string) (found jsonCalls) {
	ast.Inspect(decl, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		pos := fset.Position(call.Pos())
		short := fmt.Sprintf("%s:%d", filepath.Join(filepath.Base(filepath.Dir(file)), filepath.Base(file)), pos.Line)
		switch {
		case pkg.Name == "json" && (sel.Sel.Name == "Marshal" || sel.Sel.Name == "MarshalIndent" || sel.Sel.Name == "NewEncoder"):
			found.others = append(found.others, fmt.Sprintf("%s: json.%s: print JSON with cli.Emit, cli.WriteJSON or cli.WriteJSONLine, which the contract test sees", short, sel.Sel.Name))
		case pkg.Name == "cli" && (sel.Sel.Name == "Emit" || sel.Sel.Name == "WriteJSON" || sel.Sel.Name == "WriteJSONLine" || sel.Sel.Name == "WriteOwnJSON"):
			found.calls = append(found.calls, jsonCall{fn: sel.Sel.Name, pos: short, file: file, start: pos.Line, end: fset.Position(call.End()).Line})
		}
		return true
	})
	return found
}
