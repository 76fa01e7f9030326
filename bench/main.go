// Command bench runs memdir's whole-process performance comparisons and
// prints a table of ratios: each figure is the median CPU time (user +
// system, from the child's rusage; steadier than wall time on a shared
// machine) of a process, divided by that of a reference process run in the
// same session, the two taking turns run by run. Run it through bench/run; it is not part of CI.
//
//	hook      memdir hook (UserPromptSubmit) ÷ memdir --version
//	recall    memdir recall --json, warm ÷ SQLite FTS5 BM25 in a fresh python3
//	save      memdir save at N memories ÷ at 200
//	checkpoint memdir checkpoint snapshot of 1,000 unchanged files, new
//	          process, after 1 and 100 snapshots ÷ stat(1) of the files,
//	          by memdir and by the lean memdir-checkpoint (-checkpoint);
//	          memdir --version and the snapshot done in-process by a new
//	          History ÷ stat(1), to tell start-up from the snapshot's work;
//	          and what the snapshot adds to memdir hook, where Claude Code
//	          users take it (hook minus hook --no-checkpoint) ÷ stat(1)
//	list      memdir list --json ÷ a process reading 30 lines of each file
//	prompt    memdir hook on every memory indexed (MEMORY.md and
//	          MEMORY-more.md, as doctor --compact leaves them) ÷ memdir
//	          --version, in the user's three cases: warm (nothing changed),
//	          the first prompt after one memory was rewritten (by rename,
//	          as memdir and editors write), and the first prompt ever (no
//	          index: the state directory removed before each run)
//	ui        the UI's GET /api/memories (wall, from a client process) ÷
//	          memdir list --json (wall), on the same directory, every
//	          memory indexed
//
// The save and ui parts use directories with every memory indexed, as
// 'memdir doctor --fix --compact' leaves them (MEMORY.md and
// MEMORY-more.md); save at 200, 2,000 and 20,000 take turns run by run.
//
// Corpora are generated once into the cache directory (-cache) and reused.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/internal/evalset"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "floor" {
		floor(os.Args[2])
		return
	}
	if len(os.Args) > 3 && os.Args[1] == "get" {
		get(os.Args[2], os.Args[3])
		return
	}
	memdirBin := flag.String("memdir", "", "the memdir binary to measure")
	leanBin := flag.String("checkpoint", "", "the memdir-checkpoint binary to measure (default: memdir-checkpoint beside -memdir, when there)")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "memdir-bench"), "where generated corpora are kept")
	evalPath := flag.String("eval", "testdata/eval/recall-dev.json", "the recall set the corpus is generated from")
	runs := flag.Int("runs", 7, "runs per measurement (the median is reported)")
	only := flag.String("only", "", "comma-separated parts to run: hook,recall,save,checkpoint,list,ui,prompt,hybrid (default all)")
	uiSizes := flag.String("ui-sizes", "2000,20000", "corpus sizes for the UI listing")
	sizesFlag := flag.String("recall-sizes", "2000,20000,100000", "corpus sizes for the recall comparison")
	promptSizes := flag.String("prompt-sizes", "200,2000,20000,100000", "corpus sizes for the prompt cases")
	firstRuns := flag.Int("first-runs", 3, "runs of the first prompt ever (a full index build each)")
	hybridSizes := flag.String("hybrid-sizes", "2000,20000", "corpus sizes for the hybrid hook (vectors of a fake embedder, all cached)")
	flag.Parse()
	if *memdirBin == "" {
		fmt.Fprintln(os.Stderr, "bench: -memdir is required")
		os.Exit(2)
	}
	set, err := evalset.Load(*evalPath)
	check(err)
	b := &bench{bin: *memdirBin, lean: *leanBin, cache: *cache, runs: *runs, corpus: benchcorpus.New(set)}
	if b.lean == "" {
		if p := filepath.Join(filepath.Dir(b.bin), "memdir-checkpoint"); fileExists(p) {
			b.lean = p
		}
	}
	for _, q := range set.Queries {
		b.queries = append(b.queries, q.Query)
	}
	b.self, err = os.Executable()
	check(err)
	want := func(p string) bool { return *only == "" || slices.Contains(strings.Split(*only, ","), p) }
	check(os.MkdirAll(b.cache, 0o700))
	fmt.Printf("memdir bench: %s, %d runs each, median CPU (user+sys) per process\n\n", *memdirBin, b.runs)
	fmt.Printf("%-44s %10s %10s %8s %10s\n", "measurement", "cpu ms", "ref ms", "ratio", "max RSS")
	if want("hook") {
		for _, n := range []int{200, 2000, 20000} {
			rs := b.interleave(b.hook(n, "", "", nil), command(nil, b.bin, "--version"))
			b.row(fmt.Sprintf("hook UserPromptSubmit, %d ÷ --version", n), rs[0], rs[1])
		}
	}
	if want("recall") {
		for _, n := range sizeList(*sizesFlag) {
			r, f := b.recall(n)
			b.row(fmt.Sprintf("recall --json warm, %d ÷ FTS5 python3", n), r, f)
		}
	}
	if want("save") {
		sizes := []int{200, 2000, 20000}
		var saves []func(int) *exec.Cmd
		for _, n := range sizes {
			saves = append(saves, b.save(n))
		}
		rs := b.interleave(saves...)
		b.row("save at 200, all indexed (reference)", rs[0], rs[0])
		for i, n := range sizes[1:] {
			b.row(fmt.Sprintf("save at %d ÷ at 200, all indexed", n), rs[i+1], rs[0])
		}
	}
	if want("checkpoint") {
		c := b.checkpoints()
		b.row("checkpoint snapshot after 1 ÷ stat(1)", c.one, c.stat1)
		b.row("checkpoint snapshot after 100 ÷ stat(1)", c.hundred, c.stat)
		if b.lean != "" {
			b.row("memdir-checkpoint snapshot after 1 ÷ stat(1)", c.leanOne, c.stat1)
			b.row("memdir-checkpoint snapshot after 100 ÷ stat(1)", c.leanHundred, c.stat)
			b.row("memdir-checkpoint --version ÷ stat(1)", c.leanVersion, c.stat)
		}
		// What any memdir process costs before it does anything, and the
		// snapshot's own share without it.
		b.row("memdir --version ÷ stat(1)", c.version, c.stat)
		b.row("checkpoint snapshot after 100, in-process ÷ stat(1)", c.inProcess, c.stat)
		b.row("checkpoint snapshot after 100, in the hook ÷ stat(1)", c.inHook, c.stat)
	}
	if want("ui") {
		for _, n := range sizeList(*uiSizes) {
			api, list := b.uiListing(n)
			b.wallRow(fmt.Sprintf("UI GET /api/memories, %d ÷ list --json", n), api, list)
		}
	}
	if want("prompt") {
		for _, n := range sizeList(*promptSizes) {
			b.prompts(n, *firstRuns)
		}
		for _, n := range sizeList(*promptSizes) {
			if n >= 2000 {
				b.promptWithDelta(n, 100)
			}
		}
	}
	if want("hybrid") {
		for _, n := range sizeList(*hybridSizes) {
			b.hybrid(n)
		}
	}
	if want("list") {
		for _, n := range []int{2000, 20000} {
			dir := b.dir(n)
			rs := b.interleave(command(nil, b.bin, "list", "--dir", dir, "--json"), command(nil, b.self, "floor", dir))
			b.row(fmt.Sprintf("list --json, %d ÷ I/O floor", n), rs[0], rs[1])
		}
	}
}

// sizeList parses a comma-separated list of corpus sizes, exiting on a bad
// one.
func sizeList(s string) []int {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		out = append(out, n)
	}
	return out
}

type bench struct {
	bin, self, cache string
	lean             string // memdir-checkpoint, or "" to leave it out
	runs             int
	corpus           *benchcorpus.Corpus
	queries          []string
	qi               int
}

type result struct {
	cpu, wall time.Duration
	rss       int64 // KiB, the peak of one more run (see peakRSS); 0 when unknown
}

func (b *bench) row(name string, r, ref result) {
	rss := "n/a"
	if r.rss > 0 {
		rss = fmt.Sprintf("%.0fMB", float64(r.rss)/1024)
	}
	fmt.Printf("%-44s %10.1f %10.1f %8.2f %10s\n", name, ms(r.cpu), ms(ref.cpu), float64(r.cpu)/float64(ref.cpu), rss)
}

// wallRow is row for wall times.
func (b *bench) wallRow(name string, r, ref result) {
	fmt.Printf("%-44s %10.1f %10.1f %8.2f %10s\n", name, ms(r.wall), ms(ref.wall), float64(r.wall)/float64(ref.wall), "(wall)")
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// dir returns a cached corpus of n memories, generating it the first time.
func (b *bench) dir(n int) string {
	dir := filepath.Join(b.cache, fmt.Sprintf("corpus-%d", n))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	fmt.Fprintf(os.Stderr, "bench: generating %d memories in %s\n", n, dir)
	check(b.corpus.Write(dir, n))
	check(os.WriteFile(done, nil, 0o600))
	settle()
	return dir
}

// settle waits out the recall index's racy window (two seconds, see
// docs/performance.md): files changed within it are read again by every
// refresh, so measuring right after generating a corpus would measure
// that, not what a user's prompt costs.
func settle() { time.Sleep(3 * time.Second) }

// indexedDir returns a cached corpus of n memories with every one
// indexed, as 'memdir doctor --fix --compact' leaves a directory.
func (b *bench) indexedDir(n int) string {
	dir := filepath.Join(b.cache, fmt.Sprintf("corpus-indexed-%d", n))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	fmt.Fprintf(os.Stderr, "bench: generating %d indexed memories in %s\n", n, dir)
	check(b.corpus.WriteIndexed(context.Background(), dir, n))
	check(os.WriteFile(done, nil, 0o600))
	settle()
	return dir
}

// copyDir makes a fresh copy of a cached corpus (every memory indexed),
// for measurements that write into it.
func (b *bench) copyDir(n int, name string) string {
	src := b.indexedDir(n)
	dst := filepath.Join(b.cache, name)
	os.RemoveAll(dst)
	check(exec.Command("cp", "-a", src, dst).Run())
	return dst
}

// interleave runs b.runs+1 rounds of commands, the first a warm-up, each
// made by its next (given its run's number), and returns per command the
// median CPU and wall time of the measured runs and the peak RSS of one
// more run (peakRSS); a failing command ends the benchmark. The commands run in turn within
// each round, so that a measurement and its reference see the same
// load on a shared machine instead of one its quiet minute and the other
// its busy one.
func (b *bench) interleave(nexts ...func(run int) *exec.Cmd) []result {
	cpus := make([][]time.Duration, len(nexts))
	walls := make([][]time.Duration, len(nexts))
	rss := make([]int64, len(nexts))
	for r := 0; r <= b.runs; r++ {
		for i, next := range nexts {
			cmd := next(r)
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			wall := time.Since(t0)
			check(errOut(err, out))
			if r == 0 {
				continue // warm-up
			}
			cpu, _ := childUsage(cmd.ProcessState)
			cpus[i] = append(cpus[i], cpu)
			walls[i] = append(walls[i], wall)
		}
	}
	for i, next := range nexts {
		rss[i] = peakRSS(next(b.runs + 1))
	}
	res := make([]result, len(nexts))
	for i := range nexts {
		slices.Sort(cpus[i])
		slices.Sort(walls[i])
		res[i] = result{cpus[i][len(cpus[i])/2], walls[i][len(walls[i])/2], rss[i]}
	}
	return res
}

// command returns a maker of one command, the same every run.
func command(env []string, name string, args ...string) func(int) *exec.Cmd {
	return func(int) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
}

func (b *bench) query() string {
	q := b.queries[b.qi%len(b.queries)]
	b.qi++
	return q
}

// isolatedEnv gives memdir its own state, config and home directories.
func (b *bench) isolatedEnv(name string) []string {
	home := filepath.Join(b.cache, "home-"+name)
	os.MkdirAll(home, 0o700)
	return []string{
		"HOME=" + home, "MEMDIR_STATE_DIR=" + filepath.Join(home, "state"),
		"MEMDIR_CONFIG_DIR=" + filepath.Join(home, "config"), "MEMDIR_DATA_DIR=" + filepath.Join(home, "data"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, "claude"),
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=",
	}
}

// hook makes the commands of memdir hook's UserPromptSubmit on the corpus
// of n memories, with args added: a new session each run unless session is
// set, with cwd (and env added to the environment) then the session's.
func (b *bench) hook(n int, session, cwd string, env []string, args ...string) func(int) *exec.Cmd {
	dir := b.dir(n)
	env = append(append(b.isolatedEnv(fmt.Sprintf("hook-%d", n)), "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="+dir), env...)
	if cwd == "" {
		cwd = dir
	}
	i := 0
	return func(run int) *exec.Cmd {
		i++
		id := session
		if id == "" {
			id = fmt.Sprintf("bench-%d", i)
		}
		// The query is the run's, so that commands interleaved in one
		// round answer the same prompt.
		in, _ := json.Marshal(map[string]any{
			"session_id": id, "hook_event_name": "UserPromptSubmit",
			"cwd": cwd, "prompt": b.queries[run%len(b.queries)], "prompt_id": fmt.Sprintf("p%d-%s", i, strings.Join(args, "")),
		})
		cmd := exec.Command(b.bin, append([]string{"hook"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(string(in))
		return cmd
	}
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

func (b *bench) recall(n int) (mem, fts result) {
	dir := b.dir(n)
	db := filepath.Join(b.cache, fmt.Sprintf("fts-%d.sqlite", n))
	if _, err := os.Stat(db); err != nil {
		fmt.Fprintf(os.Stderr, "bench: building the FTS5 database for %d memories\n", n)
		cmd := exec.Command(systemPython, "-c", ftsBuild, dir, db)
		out, err := cmd.CombinedOutput()
		check(errOut(err, out))
	}
	env := b.isolatedEnv(fmt.Sprintf("recall-%d", n))
	// The same queries for both, one per run.
	qs := make([]string, b.runs+1)
	for i := range qs {
		qs[i] = b.query()
	}
	argv := func(env []string, a func(string) []string) func(int) *exec.Cmd {
		return func(r int) *exec.Cmd {
			a := a(qs[r%len(qs)])
			cmd := exec.Command(a[0], a[1:]...)
			cmd.Env = append(os.Environ(), env...)
			return cmd
		}
	}
	// Taking turns, on the same query each round.
	rs := b.interleave(argv(env, func(q string) []string {
		return []string{b.bin, "recall", "--dir", dir, "--no-model", "--json", q}
	}), argv(nil, func(q string) []string {
		words := wordRE.FindAllString(q, -1)
		for i, w := range words {
			words[i] = `"` + w + `"`
		}
		return []string{systemPython, "-c", ftsQuery, db, strings.Join(words, " OR ")}
	}))
	return rs[0], rs[1]
}

// systemPython is the FTS5 reference's interpreter: the system's, named
// explicitly, since a python3 found on PATH may be a version manager's
// shim that costs ten times the interpreter's own start.
const systemPython = "/usr/bin/python3"

// prompts measures memdir hook's UserPromptSubmit on n memories, every
// one indexed, against memdir --version, taking turns: warm, the first
// prompt after one memory was rewritten, and the first prompt ever.
func (b *bench) prompts(n, firstRuns int) {
	dir := b.indexedDir(n)
	env := append(b.isolatedEnv(fmt.Sprintf("prompt-%d", n)), "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="+dir)
	state := filepath.Join(b.cache, fmt.Sprintf("home-prompt-%d", n), "state")
	i := 0
	hook := func(prepare func()) func(int) *exec.Cmd { return b.promptHook(dir, env, &i, prepare) }
	version := command(nil, b.bin, "--version")
	// One memory rewritten by rename, as a save or an editor writes it; a
	// new body each time so that its content changes.
	edits := 0
	victim := filepath.Join(dir, b.corpus.Memory(n/2, n).File)
	orig, err := os.ReadFile(victim)
	check(err)
	rewrite := func() {
		edits++
		tmp := victim + ".tmp"
		check(os.WriteFile(tmp, append(append([]byte{}, orig...), fmt.Sprintf("\nedited %d: the zebra crossing\n", edits)...), 0o600))
		check(os.Rename(tmp, victim))
	}
	defer os.WriteFile(victim, orig, 0o600)
	// "Warm" is the index in the page cache, as after a prompt a moment
	// ago: the rows before (another size's first builds, the eviction
	// below) leave parts of it on disk, and a row's first queries then
	// fault postings in (the warm row at 100,000 read 3.0 to 5.0 on one
	// day). The cold case has a row of its own.
	runOnce(hook(nil)) // builds the index when there is none
	cacheIndex(state)
	rs := b.interleave(hook(nil), version)
	b.row(fmt.Sprintf("prompt warm, %d ÷ --version", n), rs[0], rs[1])
	// Later in a session: the hook leaves out the memories it surfaced
	// before. Each run's session is given 40 of them (and no bytes, so
	// that the session's budget does not stop recall).
	sessions := hooks.NewSessionStore(filepath.Join(state, "hooks", "sessions"))
	var surfaced []string
	for k := range 40 {
		surfaced = append(surfaced, filepath.Join(dir, b.corpus.Memory(k*n/40, n).File))
	}
	inSession := func() {
		_, err := sessions.Add(context.Background(), fmt.Sprintf("prompt-%d", i+1), surfaced, 0, time.Now())
		check(err)
	}
	rs = b.interleave(hook(inSession), version)
	b.row(fmt.Sprintf("prompt warm, 40 surfaced before, %d ÷ --version", n), rs[0], rs[1])
	// The index out of the page cache, the binary still in it: a prompt
	// after the machine did other work.
	evicted := func() {
		for _, p := range indexFiles(state) {
			check(evictFile(p))
		}
	}
	if canEvict {
		rs = b.interleave(hook(evicted), version)
		b.row(fmt.Sprintf("prompt, index out of the page cache, %d ÷ --version", n), rs[0], rs[1])
	}
	cacheIndex(state)
	rs = b.interleave(hook(rewrite), version)
	b.row(fmt.Sprintf("prompt after 1 memory rewritten, %d ÷ --version", n), rs[0], rs[1])
	if firstRuns <= 0 {
		return // -first-runs 0: no first builds
	}
	runs := b.runs
	b.runs = firstRuns
	rs = b.interleave(hook(func() { check(os.RemoveAll(state)) }), version)
	b.runs = runs
	b.row(fmt.Sprintf("prompt first ever (no index), %d ÷ --version", n), rs[0], rs[1])
}

// promptWithDelta measures the warm prompt on n memories of which k were
// rewritten since the index's base was written: each process replays
// the delta file over the base (see recall/delta.go), a cost that grows
// with the changes until the delta is merged. On a copy of the corpus,
// with a state of its own, so that the other rows' indexes are left as
// they were.
func (b *bench) promptWithDelta(n, k int) {
	dir := b.copyDir(n, fmt.Sprintf("delta-%d", n))
	name := fmt.Sprintf("delta-%d", n)
	state := filepath.Join(b.cache, "home-"+name, "state")
	check(os.RemoveAll(state))
	env := append(b.isolatedEnv(name), "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="+dir)
	i := 0
	hook := b.promptHook(dir, env, &i, nil)
	run := func() { runOnce(hook) }
	// The copy's files are all new (their change times are now): built
	// at once, every one would be racy, re-read by the next refresh and
	// written as a whole new base, not a delta.
	settle()
	run() // the base
	for j := range k {
		p := filepath.Join(dir, b.corpus.Memory(j*n/k, n).File)
		data, err := os.ReadFile(p)
		check(err)
		check(os.WriteFile(p+".tmp", fmt.Appendf(data, "\nrewritten since the base: %d\n", j), 0o600))
		check(os.Rename(p+".tmp", p))
	}
	settle() // past the racy window, so that the delta is written once
	run()    // writes the delta
	run()
	cacheIndex(state)
	rs := b.interleave(hook, command(nil, b.bin, "--version"))
	b.row(fmt.Sprintf("prompt warm, %d of %d rewritten since the base ÷ --version", k, n), rs[0], rs[1])
}

// runOnce runs the command next makes, unmeasured; a failure ends the
// benchmark.
func runOnce(next func(int) *exec.Cmd) {
	out, err := next(0).CombinedOutput()
	check(errOut(err, out))
}

// indexFiles returns the recall index files (base, delta, cursor, …)
// under the state directory state.
func indexFiles(state string) []string {
	idx, err := filepath.Glob(filepath.Join(state, "recall", "*.idx*"))
	check(err)
	return idx
}

// cacheIndex reads the index files under state through, so that the
// index is in the page cache.
func cacheIndex(state string) {
	for _, p := range indexFiles(state) {
		check(readThrough(p))
	}
}

// readThrough reads the file at path to its end, so that its pages are in
// the page cache.
func readThrough(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// promptHook makes the commands of memdir hook's UserPromptSubmit in the
// memory directory dir with env added, a new session each run (counted in
// *i), prepare run before each when not nil; the query is the run's, so
// that commands interleaved in one round answer the same prompt.
func (b *bench) promptHook(dir string, env []string, i *int, prepare func()) func(int) *exec.Cmd {
	return func(run int) *exec.Cmd {
		if prepare != nil {
			prepare()
		}
		*i++
		in, _ := json.Marshal(map[string]any{
			"session_id": fmt.Sprintf("prompt-%d", *i), "hook_event_name": "UserPromptSubmit",
			"cwd": dir, "prompt": b.queries[run%len(b.queries)], "prompt_id": fmt.Sprintf("p%d", *i),
		})
		cmd := exec.Command(b.bin, "hook")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(string(in))
		return cmd
	}
}

func errOut(err error, out []byte) error {
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

const ftsBuild = `
import os, sqlite3, sys
src, db = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db + ".tmp")
c.execute("create virtual table m using fts5(path unindexed, name, description, body, tokenize='porter unicode61')")
rows = []
for f in sorted(os.listdir(src)):
    if not f.endswith(".md") or f == "MEMORY.md": continue
    t = open(os.path.join(src, f), encoding="utf-8").read()
    parts = t.split("---\n", 2)
    name = desc = ""
    for line in parts[1].splitlines():
        if line.startswith("name:"): name = line[5:].strip()
        if line.startswith("description:"): desc = line[12:].strip()
    rows.append((f, name, desc, parts[2]))
c.executemany("insert into m values (?,?,?,?)", rows)
c.commit(); c.close()
os.rename(db + ".tmp", db)
`

const ftsQuery = `
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("select path, bm25(m, 0, 3.0, 2.0, 1.0) as s from m where m match ? order by s limit 30", (sys.argv[2],)).fetchall()
print(json.dumps(rows))
`

// save makes the commands of a save of a new memory into a copy of the
// indexed corpus of n memories.
func (b *bench) save(n int) func(int) *exec.Cmd {
	dir := b.copyDir(n, fmt.Sprintf("save-%d", n))
	env := b.isolatedEnv(fmt.Sprintf("save-%d", n))
	return func(r int) *exec.Cmd {
		cmd := exec.Command(b.bin, "save", "--dir", dir, "--name", fmt.Sprintf("bench-save-%d", r+1), "--type", "project",
			"--description", "a memory the benchmark saves, with a description of usual length",
			"--body", "Deploys go through the blue/green script; never kubectl apply by hand.")
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
}

type checkpointResults struct {
	one, hundred result // memdir checkpoint snapshot, after 1 and 100
	inProcess    result // a new History's Snapshot in this process, after 100
	inHook       result // what the hook at 2,000 memories spends on it, after 100
	stat1, stat  result // stat(1) of the tracked files, beside one and hundred
	version      result // memdir --version
	// memdir-checkpoint snapshot, after 1 and 100, and its --version
	leanOne, leanHundred, leanVersion result
}

// checkpoints tracks 1,000 files in a session, then measures a new
// process's snapshot after 1 and after 100 snapshots, a snapshot from a new
// History inside this process (the checkpoint package's own cost, without
// memdir's start-up), stat(1) of the same files and memdir --version.
func (b *bench) checkpoints() checkpointResults {
	var c checkpointResults
	root := filepath.Join(b.cache, "checkpoint")
	os.RemoveAll(root)
	proj := filepath.Join(root, "project")
	conf := filepath.Join(root, "claude")
	var files []string
	for i := range 1000 {
		p := filepath.Join(proj, fmt.Sprintf("src/d%02d/f%04d.go", i%50, i))
		check(os.MkdirAll(filepath.Dir(p), 0o700))
		check(os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line of file %d\n", i), 64)), 0o600))
		files = append(files, p)
	}
	ctx := context.Background()
	h, err := checkpoint.New(conf, "bench", &checkpoint.Options{Cwd: proj})
	check(err)
	for _, f := range files {
		_, err := h.Track(ctx, f, "m0")
		check(err)
	}
	// Let the files' change times fall behind the clock, as in a session.
	time.Sleep(2500 * time.Millisecond)
	_, err = h.Snapshot(ctx, "m1")
	check(err)
	env := []string{"CLAUDE_CONFIG_DIR=" + conf}
	k := 0
	snapWith := func(bin string, args ...string) func(int) *exec.Cmd {
		return func(int) *exec.Cmd {
			k++
			cmd := exec.Command(bin, append(args, "snapshot", "--session", "bench", "--message", fmt.Sprintf("x%d", k))...)
			cmd.Dir = proj
			cmd.Env = append(os.Environ(), env...)
			return cmd
		}
	}
	snap := snapWith(b.bin, "checkpoint")
	stat := command(nil, "stat", append([]string{"-c", "%s"}, files...)...)
	version := command(nil, b.bin, "--version")
	// The lean binary's runs take turns with the others; without one, its
	// slots run stat again, which no row reads.
	lean, leanVersion := stat, stat
	if b.lean != "" {
		lean, leanVersion = snapWith(b.lean), command(nil, b.lean, "--version")
	}
	rs := b.interleave(snap, stat, lean)
	c.one, c.stat1, c.leanOne = rs[0], rs[1], rs[2]
	for i := range 100 {
		_, err := h.Snapshot(ctx, fmt.Sprintf("m%d", i+2))
		check(err)
	}
	// The snapshot where users take it: in the hook of each prompt, whose
	// process is started anyway. Its cost there is what the hook spends
	// with checkpoints over what it spends without, on the same session
	// and prompts.
	rs = b.interleave(snap, stat, version,
		b.hook(2000, "bench", proj, env), b.hook(2000, "bench", proj, env, "--no-checkpoint"),
		lean, leanVersion)
	c.hundred, c.stat, c.version = rs[0], rs[1], rs[2]
	c.inHook = result{cpu: max(0, rs[3].cpu-rs[4].cpu)}
	c.leanHundred, c.leanVersion = rs[5], rs[6]
	var cpus []time.Duration
	for r := 0; r <= b.runs; r++ {
		k++
		before := selfCPU()
		fresh, err := checkpoint.New(conf, "bench", &checkpoint.Options{Cwd: proj})
		check(err)
		res, err := fresh.Snapshot(ctx, fmt.Sprintf("x%d", k))
		check(err)
		spent := selfCPU() - before
		if res.Unchanged != len(files) {
			check(fmt.Errorf("in-process snapshot: %d of %d files unchanged", res.Unchanged, len(files)))
		}
		if r > 0 {
			cpus = append(cpus, spent)
		}
	}
	slices.Sort(cpus)
	c.inProcess = result{cpu: cpus[len(cpus)/2]}
	return c
}

// floor is the I/O floor of a list: find every memory file and read its
// first 30 lines, nothing more.
func floor(dir string) {
	lines := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") || e.Name() == "MEMORY.md" {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		sc := bufio.NewScanner(f)
		for n := 0; n < 30 && sc.Scan(); n++ {
			lines++
		}
		f.Close()
		return nil
	})
	fmt.Println(lines)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// uiListing starts memdir ui on the indexed corpus of n memories and
// measures GET /api/memories, made by a client process (this program's
// "get"), against memdir list --json, both in wall time.
func (b *bench) uiListing(n int) (api, list result) {
	dir := b.indexedDir(n)
	env := b.isolatedEnv(fmt.Sprintf("ui-%d", n))
	cmd := exec.Command(b.bin, "ui", "--dir", dir, "--addr", "127.0.0.1:0", "--no-model")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	check(err)
	u, err := url.Parse(strings.TrimSpace(line))
	check(err)
	// Sign in as the page does: the token for the session cookie.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(u.String())
	check(err)
	resp.Body.Close()
	var cookie string
	for _, c := range resp.Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	if cookie == "" {
		check(fmt.Errorf("memdir ui at %s set no cookie (%s)", u.Host, resp.Status))
	}
	apiURL := "http://" + u.Host + "/api/memories"
	rs := b.interleave(command(nil, b.self, "get", apiURL, cookie), command(env, b.bin, "list", "--dir", dir, "--json"))
	return rs[0], rs[1]
}

// get fetches url with the cookie and fails unless the answer is 200.
func get(rawURL, cookie string) {
	req, err := http.NewRequest("GET", rawURL, nil)
	check(err)
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	check(err)
	if resp.StatusCode != http.StatusOK {
		check(fmt.Errorf("GET %s: %s", rawURL, resp.Status))
	}
	fmt.Println(n)
}
