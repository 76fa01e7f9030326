package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
)

// TestServeProcess runs real `memdir serve` processes, built from this
// package: the memory a full GET costs the server, and a SIGKILL in the
// middle of concurrent pushes, on SQLite and PostgreSQL.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs servers")
	}
	// MEMDIR_TEST_SERVE_BIN runs the checks against another build (an
	// older release, to compare).
	bin := os.Getenv("MEMDIR_TEST_SERVE_BIN")
	if bin == "" {
		bin = memdirtest.BuildProgram(t, ".", "memdir")
	}
	t.Run("GetMemoryBound", func(t *testing.T) { testGetMemoryBound(t, bin) })
	t.Run("Replicas/postgres", func(t *testing.T) {
		dsn := memdirtest.PostgresDSN(t)
		a, b := newServerProc(t, bin, dsn), newServerProc(t, bin, dsn)
		token := a.token(t, "acme/widgets", false)
		a.start(t)
		b.start(t)
		var remotes []team.Repos
		for _, p := range []*serverProc{a, b} {
			r, err := team.NewRemote(p.url(), token, &team.RemoteOptions{MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			remotes = append(remotes, r)
		}
		memdirtest.TestTeamReplicas(t, "acme/widgets", remotes[0], remotes[1])
	})
	t.Run("KillUnderLoad/sqlite", func(t *testing.T) {
		testKillUnderLoad(t, bin, "sqlite:"+filepath.Join(t.TempDir(), "team.db"))
	})
	t.Run("KillUnderLoad/postgres", func(t *testing.T) {
		testKillUnderLoad(t, bin, memdirtest.PostgresDSN(t))
	})
}

// serverProc is one `memdir serve` process; start may be called again
// after kill, on the same address.
type serverProc struct {
	bin, db, addr string
	logPath       string
	cmd           *exec.Cmd
	done          chan struct{} // closed when cmd has exited
}

func newServerProc(t *testing.T, bin, db string) *serverProc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &serverProc{bin: bin, db: db, addr: addr, logPath: filepath.Join(t.TempDir(), "serve.log")}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.kill(t)
		}
	})
	return p
}

func (p *serverProc) env(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
}

func (p *serverProc) url() string { return "http://" + p.addr }

func (p *serverProc) token(t *testing.T, repo string, readOnly bool) string {
	t.Helper()
	args := []string{"serve", "token", "create", "--repo", repo, "--json", "--db", p.db}
	if readOnly {
		args = append(args, "--read-only")
	}
	cmd := exec.Command(p.bin, args...)
	cmd.Env = p.env(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	var tok struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(out, &tok); err != nil || tok.Secret == "" {
		t.Fatalf("token create output %q: %v", out, err)
	}
	return tok.Secret
}

// start starts the server and waits until /readyz answers 200.
func (p *serverProc) start(t *testing.T) {
	t.Helper()
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(p.bin, "serve", "--addr", p.addr, "--db", p.db, "--max-entries", "100000", "--log-format", "text")
	cmd.Env = p.env(t)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	for i := 0; ; i++ {
		select {
		case <-done:
			p.cmd = nil
			b, _ := os.ReadFile(p.logPath)
			t.Fatalf("memdir serve exited at start: %v\n%s", cmd.ProcessState, b)
		default:
		}
		resp, err := http.Get(p.url() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if i > 3000 { // a hung start fails the test instead of hanging it
			t.Fatalf("memdir serve not ready on %s", p.addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *serverProc) kill(t *testing.T) {
	t.Helper()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("memdir serve (pid %d) did not die after SIGKILL", cmd.Process.Pid)
	}
}

// procKB reads a "Name:  N kB" field of /proc/PID/status.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read memory use from: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if name, rest, ok := strings.Cut(sc.Text(), ":"); ok && name == field {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status %s: %q", pid, field, rest)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// words is the vocabulary of the generated memories.
var words = strings.Fields("the build uses make and go test race deploy on friday never database migration " +
	"schema index latency client server retry token cache memory team sync pull push conflict merge " +
	"review release branch main feature flag config yaml json api endpoint handler store postgres sqlite")

func memoryText(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size + 100)
	fmt.Fprintf(&b, "---\nname: note %d\ndescription: what we learned\ntype: project\n---\n", r.IntN(1_000_000))
	for b.Len() < size {
		for range 12 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\n")
	}
	return b.String()
}

// testGetMemoryBound seeds a repository of MEMDIR_TEST_RSS_REPO_MB
// megabytes (default 24; the target is stated at 100), starts the
// server, and runs four concurrent full GETs with a read-only token. The
// server's peak RSS (VmHWM) minus its RSS at idle must stay within 100 MB.
// Before GETs were streamed, four GETs of a 96 MB repository took it from
// 27 MB to 1.65 GB.
func testGetMemoryBound(t *testing.T, bin string) {
	mb := 24
	if v := os.Getenv("MEMDIR_TEST_RSS_REPO_MB"); v != "" {
		var err error
		if mb, err = strconv.Atoi(v); err != nil || mb <= 0 {
			t.Fatalf("MEMDIR_TEST_RSS_REPO_MB=%q: want a positive number of megabytes", v)
		}
	}
	const entrySize = 25_000
	path := filepath.Join(t.TempDir(), "team.db")
	store, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	total, n := 0, 0
	for total < mb<<20 {
		batch := map[string]string{}
		for range 200 {
			c := memoryText(r, entrySize)
			batch[fmt.Sprintf("topic-%d/note-%05d.md", n%40, n)] = c
			total += len(c)
			n++
		}
		if _, err := store.Put(context.Background(), "acme/widgets", &team.Update{Entries: batch}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	p := newServerProc(t, bin, "sqlite:"+path)
	token := p.token(t, "acme/widgets", true)
	p.start(t)
	get := func(view string) (int64, error) {
		req, _ := http.NewRequest("GET", p.url()+team.APIPath+"?repo=acme/widgets"+view, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return io.Copy(io.Discard, resp.Body)
	}
	if _, err := get("&view=hashes"); err != nil {
		t.Fatal(err)
	}
	pid := p.cmd.Process.Pid
	idle := procKB(t, pid, "VmRSS")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			got, err := get("")
			if err == nil && got < int64(total) {
				err = fmt.Errorf("GET returned %d bytes, the repository holds %d", got, total)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("full GET: %v", err)
		}
	}
	peak := procKB(t, pid, "VmHWM")
	above := float64(peak-idle) / 1024
	t.Logf("repository %d entries, %.1f MB; server RSS idle %.1f MB, peak %.1f MB during 4 concurrent full GETs: %.1f MB above idle",
		n, float64(total)/(1<<20), float64(idle)/1024, float64(peak)/1024, above)
	if above > 100 {
		t.Errorf("4 concurrent full GETs of a %d MB repository took the server %.1f MB above idle; the bound is 100 MB", mb, above)
	}
}

// testKillUnderLoad runs 8 pushers against a server for a few seconds,
// SIGKILLs the server in the middle and restarts it, then checks that
// every acknowledged write is there and every checksum matches.
func testKillUnderLoad(t *testing.T, bin, db string) {
	const (
		pushers  = 8
		killAt   = 1200 * time.Millisecond
		loadFor  = 3500 * time.Millisecond
		afterMin = 16 // acknowledged writes after the restart, at least
	)
	p := newServerProc(t, bin, db)
	token := p.token(t, "acme/widgets", false)
	p.start(t)
	content := func(i, j int) string {
		return fmt.Sprintf("---\nname: pusher %d write %d\ntype: project\n---\n", i, j) + strings.Repeat(fmt.Sprintf("line of write %d by pusher %d\n", j, i), 30)
	}
	var (
		stop      atomic.Bool
		restarted atomic.Bool
		afterAcks atomic.Int64
		acked     [pushers][]int
		attempted [pushers]int
	)
	var wg sync.WaitGroup
	for i := range pushers {
		remote, err := team.NewRemote(p.url(), token, &team.RemoteOptions{MaxRetries: -1, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for j := 1; !stop.Load(); j++ {
				attempted[i] = j
				_, err := remote.Put(context.Background(), "acme/widgets", &team.Update{Entries: map[string]string{
					fmt.Sprintf("p%d/%05d.md", i, j): content(i, j),
					fmt.Sprintf("p%d/latest.md", i):  strconv.Itoa(j),
				}})
				if err != nil {
					time.Sleep(5 * time.Millisecond) // the server is down or restarting
					continue
				}
				acked[i] = append(acked[i], j)
				if restarted.Load() {
					afterAcks.Add(1)
				}
			}
		})
	}
	start := time.Now()
	time.Sleep(killAt)
	p.kill(t)
	p.start(t)
	restarted.Store(true)
	for time.Since(start) < loadFor || afterAcks.Load() < afterMin {
		if time.Since(start) > 60*time.Second {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("only %d writes acknowledged after the restart", afterAcks.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()

	remote, err := team.NewRemote(p.url(), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := remote.Get(ctx, "acme/widgets", nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := range pushers {
		total += len(acked[i])
		for _, j := range acked[i] {
			if got, want := d.Content.Entries[fmt.Sprintf("p%d/%05d.md", i, j)], content(i, j); got != want {
				t.Errorf("acknowledged write %d of pusher %d: got %d bytes, want %d", j, i, len(got), len(want))
			}
		}
		latest, _ := strconv.Atoi(d.Content.Entries[fmt.Sprintf("p%d/latest.md", i)])
		if n := len(acked[i]); n > 0 && (latest < acked[i][n-1] || latest > attempted[i]) {
			t.Errorf("pusher %d: latest.md = %d, last acknowledged %d, last attempted %d", i, latest, acked[i][n-1], attempted[i])
		}
	}
	verifyChecksums(t, "current version", d)
	versions := 0
	for before := int64(0); ; {
		h, err := remote.History(ctx, "acme/widgets", &team.HistoryOptions{Before: before, Limit: team.MaxHistoryLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			break
		}
		for _, v := range h {
			if want := d.Version - int64(versions); v.Version != want {
				t.Fatalf("history lists version %d where %d belongs", v.Version, want)
			}
			if versions%97 == 0 || versions < 3 {
				old, err := remote.Get(ctx, "acme/widgets", &team.GetOptions{Version: v.Version})
				if err != nil {
					t.Fatal(err)
				}
				if old.Checksum != v.Checksum || len(old.Content.Entries) != v.EntryCount {
					t.Errorf("version %d: checksum %s and %d entries, history says %s and %d", v.Version, old.Checksum, len(old.Content.Entries), v.Checksum, v.EntryCount)
				}
				verifyChecksums(t, fmt.Sprintf("version %d", v.Version), old)
			}
			versions++
			before = v.Version
		}
	}
	if int64(versions) != d.Version || versions < total {
		t.Errorf("%d versions in the history, current version %d, %d writes acknowledged", versions, d.Version, total)
	}
	t.Logf("%d pushers: %d writes acknowledged (%d after the SIGKILL and restart), %d versions, %d entries", pushers, total, afterAcks.Load(), versions, len(d.Content.Entries))
}

// verifyChecksums recomputes the entry and repository checksums of d.
func verifyChecksums(t *testing.T, what string, d *team.Data) {
	t.Helper()
	if len(d.Content.Entries) != len(d.Content.EntryChecksums) {
		t.Errorf("%s: %d entries, %d entry checksums", what, len(d.Content.Entries), len(d.Content.EntryChecksums))
	}
	for k, v := range d.Content.Entries {
		if sum := team.EntryChecksum(v); d.Content.EntryChecksums[k] != sum {
			t.Errorf("%s: entry %s: checksum %s, content hashes to %s", what, k, d.Content.EntryChecksums[k], sum)
		}
	}
	if sum := team.RepoChecksum(d.Content.EntryChecksums); sum != d.Checksum {
		t.Errorf("%s: checksum %s, entries hash to %s", what, d.Checksum, sum)
	}
}
