package team_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

// event is one callback from Watch.
type event struct {
	pull *team.PullResult
	push *team.PushResult
	err  error
}

type watchRun struct {
	events chan event
	cancel context.CancelFunc
	done   chan error
}

func startWatch(t *testing.T, c *team.Client) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchRun{events: make(chan event, 100), cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- c.Watch(ctx, &team.WatchOptions{
			Debounce: 20 * time.Millisecond,
			OnPull:   func(r *team.PullResult, err error) { w.events <- event{pull: r, err: err} },
			OnPush:   func(r *team.PushResult, err error) { w.events <- event{push: r, err: err} },
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-w.done
	})
	return w
}

// next waits for the next callback. The deadline only guards against a
// hung test; nothing here asserts on timing.
func (w *watchRun) next(t *testing.T) event {
	t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no callback from Watch within 30 s")
		return event{}
	}
}

// nextPush skips pushes that found nothing to send (the pull's own writes
// trigger one).
func (w *watchRun) nextPush(t *testing.T) event {
	t.Helper()
	for {
		ev := w.next(t)
		if ev.err != nil || ev.push != nil && (ev.push.Requests > 0 || len(ev.push.Pushed) > 0) {
			return ev
		}
	}
}

func TestWatchPushesChanges(t *testing.T) {
	e := newHTTPEnv(t, nil)
	ctx := context.Background()
	e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"from-server.md": "S"}})
	dir := filepath.Join(e.dir, "team") // does not exist yet: Watch creates it
	w := startWatch(t, e.client(t, dir, false))
	if ev := w.next(t); ev.err != nil || ev.pull == nil || len(ev.pull.Written) != 1 {
		t.Fatalf("initial pull = %+v", ev)
	}
	memdirtest.WriteFiles(t, dir, map[string]string{"new/dir/a.md": "A"})
	ev := w.nextPush(t)
	if ev.err != nil || ev.push.Pushed[0] != "new/dir/a.md" {
		t.Fatalf("push after a write = %+v", ev)
	}
	// A file in the directory created above is seen too.
	memdirtest.WriteFiles(t, dir, map[string]string{"new/dir/b.md": "B"})
	if ev := w.nextPush(t); ev.err != nil || ev.push.Pushed[0] != "new/dir/b.md" {
		t.Fatalf("push after a write in a new directory = %+v", ev)
	}
	if got := e.server(t); got["new/dir/a.md"] != "A" || got["new/dir/b.md"] != "B" {
		t.Errorf("server = %v", got)
	}
}

func TestWatchSuppressesAfterPermanentFailure(t *testing.T) {
	e := newHTTPEnv(t, nil)
	dir := e.dir
	w := startWatch(t, e.client(t, dir, true)) // read-only: every push is 403
	if ev := w.next(t); ev.pull == nil || ev.err != nil {
		t.Fatalf("initial pull = %+v", ev)
	}
	memdirtest.WriteFiles(t, dir, map[string]string{"a.md": "A"})
	if ev := w.nextPush(t); !errors.Is(ev.err, team.ErrForbidden) {
		t.Fatalf("push with a read-only token = %+v, want ErrForbidden", ev)
	}
	memdirtest.WriteFiles(t, dir, map[string]string{"b.md": "B"})
	if ev := w.nextPush(t); !errors.Is(ev.err, team.ErrPushSuppressed) {
		t.Fatalf("push after a permanent failure = %+v, want ErrPushSuppressed", ev)
	}
	// Removing a file lifts the suppression: the next push is tried (and
	// fails again the same way).
	os.Remove(filepath.Join(dir, "b.md"))
	if ev := w.nextPush(t); !errors.Is(ev.err, team.ErrForbidden) {
		t.Fatalf("push after a removal = %+v, want a real attempt (ErrForbidden)", ev)
	}
}

func TestWatchFlushesOnShutdown(t *testing.T) {
	e := newHTTPEnv(t, nil)
	c := e.client(t, e.dir, false)
	ctx, cancel := context.WithCancel(context.Background())
	pulled := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, &team.WatchOptions{
			Debounce: time.Hour, // only the shutdown flush can push
			OnPull:   func(*team.PullResult, error) { close(pulled) },
		})
	}()
	<-pulled
	memdirtest.WriteFiles(t, e.dir, map[string]string{"last-words.md": "bye"})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch returned %v", err)
	}
	if got := e.server(t); got["last-words.md"] != "bye" {
		t.Errorf("server after shutdown = %v, want the final push", got)
	}
}

// TestWatchPushesWhatChangedBeforeItStarted: a file written before the
// watch began (while no watch ran, or between a caller's own pull and the
// watcher's start, as 'memdir sync watch' pulls first) makes no event; it
// is pushed once the watch starts, without another change.
func TestWatchPushesWhatChangedBeforeItStarted(t *testing.T) {
	e := newHTTPEnv(t, nil)
	memdirtest.WriteFiles(t, e.dir, map[string]string{"offline.md": "written while nothing watched"})
	w := startWatch(t, e.client(t, e.dir, false))
	if ev := w.next(t); ev.err != nil || ev.pull == nil {
		t.Fatalf("initial pull = %+v", ev)
	}
	if ev := w.nextPush(t); ev.err != nil || len(ev.push.Pushed) != 1 || ev.push.Pushed[0] != "offline.md" {
		t.Fatalf("first push = %+v, want offline.md", ev)
	}
	if got := e.server(t); got["offline.md"] != "written while nothing watched" {
		t.Errorf("server = %v", got)
	}
}
