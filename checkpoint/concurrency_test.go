package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMain doubles as a worker process for TestConcurrentProcesses: with
// CHECKPOINT_TEST_WORKER set, the test binary runs one worker and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv("CHECKPOINT_TEST_WORKER"); spec != "" {
		var config, cwd, session, prefix string
		var n int
		if _, err := fmt.Sscanf(spec, "%q %q %q %q %d", &config, &cwd, &session, &prefix, &n); err != nil {
			fmt.Fprintln(os.Stderr, "bad CHECKPOINT_TEST_WORKER:", err)
			os.Exit(2)
		}
		h, err := New(config, session, &Options{Cwd: cwd})
		if err == nil {
			err = work(h, cwd, prefix, n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// work plays n turns of playTurn.
func work(h *History, cwd, prefix string, n int) error {
	for i := range n {
		if err := playTurn(h, cwd, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
			return err
		}
	}
	return nil
}

// playTurn plays one turn: create and track a file of its own, edit the
// shared file, take a snapshot.
func playTurn(h *History, cwd, name string) error {
	ctx := context.Background()
	if _, err := h.Track(ctx, name, name); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cwd, name), []byte("content of "+name+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := h.Track(ctx, "shared", name); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cwd, "shared"), []byte(name+"\n"), 0o644); err != nil {
		return err
	}
	r, err := h.Snapshot(ctx, name)
	if err != nil {
		return err
	}
	return r.Err()
}

// checkConcurrentResult reads the session afresh and checks that no update
// was lost: every snapshot has a distinct sequence, each worker's snapshot i
// includes its files 0..i, and every backup holds what its file held.
func checkConcurrentResult(t *testing.T, e env, session string, prefixes []string, n int) {
	t.Helper()
	// What the writers left: before a reader can rewrite it.
	checkStateMatchesLog(t, e.history(t, session))
	h := e.history(t, session)
	all := snapshots(t, h)
	if want := 1 + len(prefixes)*n; len(all) != want {
		t.Fatalf("%d snapshots, want %d", len(all), want)
	}
	for i, s := range all {
		if s.Sequence != i+1 {
			t.Errorf("snapshot %d has sequence %d", i, s.Sequence)
		}
	}
	for _, s := range all[1:] {
		var prefix string
		var k int
		for _, p := range prefixes {
			if rest, ok := strings.CutPrefix(s.MessageID, p+"-"); ok {
				prefix = p
				k, _ = strconv.Atoi(rest)
			}
		}
		for j := 0; j <= k; j++ {
			name := fmt.Sprintf("%s-%d", prefix, j)
			b, ok := s.Files[name]
			if !ok {
				t.Errorf("snapshot %s lacks %s", s.MessageID, name)
				continue
			}
			want := "content of " + name + "\n"
			if !b.Exists() {
				t.Errorf("snapshot %s: %s has a null entry %+v", s.MessageID, name, b)
				continue
			}
			got, err := os.ReadFile(filepath.Join(h.Dir(), b.Name))
			if err != nil || string(got) != want {
				t.Errorf("snapshot %s: backup of %s = %q, %v; want %q", s.MessageID, name, got, err, want)
			}
		}
		if _, ok := s.Files["shared"]; !ok {
			t.Errorf("snapshot %s lacks the shared file", s.MessageID)
		}
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharedHistory=%v", shared), func(t *testing.T) {
			e := newEnv(t)
			const n = 15
			prefixes := []string{"g1", "g2"}
			first := e.history(t, "goroutines")
			e.write(t, "shared", "start\n")
			snapshot(t, first, "start")
			var wg sync.WaitGroup
			errs := make([]error, len(prefixes))
			for i, p := range prefixes {
				h := first
				if !shared {
					h = e.history(t, "goroutines")
				}
				wg.Go(func() { errs[i] = work(h, e.cwd, p, n) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			checkConcurrentResult(t, e, "goroutines", prefixes, n)
		})
	}
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	e := newEnv(t)
	const n = 15
	prefixes := []string{"p1", "p2"}
	e.write(t, "shared", "start\n")
	snapshot(t, e.history(t, "processes"), "start")
	var cmds []*exec.Cmd
	for _, p := range prefixes {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("CHECKPOINT_TEST_WORKER=%q %q %q %q %d", e.config, e.cwd, "processes", p, n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker: %v", err)
		}
	}
	checkConcurrentResult(t, e, "processes", prefixes, n)
}
