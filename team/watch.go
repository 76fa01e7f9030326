package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memdir/memdir/internal/atomicfile"
)

// ErrPushSuppressed is reported (through WatchOptions.OnPush) instead of
// pushing while pushes are suppressed after a permanent failure.
var ErrPushSuppressed = errors.New("push suppressed after a permanent failure (4xx other than 409/429, or a missing token or repository); remove a file or restart the watch to resume")

// WatchOptions configures Watch. A nil *WatchOptions means the defaults.
type WatchOptions struct {
	// Debounce is how long the directory must stay quiet before a push;
	// 0 means 2 s, as in Claude Code.
	Debounce time.Duration
	// ShutdownTimeout bounds the in-flight and final pushes once ctx is
	// done; 0 means 2 s.
	ShutdownTimeout time.Duration
	// OnPull receives the result of the initial pull.
	OnPull func(*PullResult, error)
	// OnPush receives the result of every push, and ErrPushSuppressed
	// when a push was due but suppressed.
	OnPush func(*PushResult, error)
}

// Watch watches the team directory (recursively, creating it if needed),
// pulls once (conditionally on the last pull's checksum), pushes once
// the debounce interval after it starts (what changed before the watch
// began makes no event) and then after every burst of changes, once the
// directory has been quiet for the debounce interval. After a permanent
// failure ([IsPermanent]) it stops pushing until a file is removed or Watch
// is restarted, so a revoked token does not hammer the server. When ctx is
// done it waits for an in-flight push, makes a final push unless pushes are
// suppressed (an unchanged directory costs no request), and returns nil;
// both are bounded by the shutdown timeout.
//
// Failures of individual pulls and pushes are reported to the callbacks,
// not returned: the watch goes on. Watch returns an error only when it
// cannot watch at all.
func (c *Client) Watch(ctx context.Context, opts *WatchOptions) error {
	o := WatchOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = 2 * time.Second
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 2 * time.Second
	}
	if o.OnPull == nil {
		o.OnPull = func(*PullResult, error) {}
	}
	if o.OnPush == nil {
		o.OnPush = func(*PushResult, error) {}
	}
	if err := atomicfile.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("watch %s: %w", c.dir, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", c.dir, err)
	}
	defer w.Close()
	if err := watchTree(w, c.dir); err != nil {
		return err
	}

	// Pushes outlive ctx by at most the shutdown timeout, so that an
	// in-flight push completes on shutdown.
	pushCtx, cancelPush := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPush()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(o.ShutdownTimeout, cancelPush) })
	defer stop()

	// Conditional: when the caller has just pulled (to journal it, say),
	// this is a 304.
	res, err := c.Pull(ctx, true)
	o.OnPull(res, err)
	suppressed := err != nil && IsPermanent(err)

	push := func() {
		if suppressed {
			o.OnPush(nil, ErrPushSuppressed)
			return
		}
		res, err := c.Push(pushCtx)
		if err != nil && IsPermanent(err) {
			suppressed = true
			c.log.Warn("team memory push failed permanently; pushes suppressed", "repo", c.repo, "error", err)
		}
		o.OnPush(res, err)
	}

	// A push is due from the start: what changed before the watcher was
	// added (while no watch ran, or between a caller's own pull and this
	// one) makes no event, and would otherwise wait for the next change.
	// A push with nothing to send uploads nothing (a client that knows no
	// server checksums yet, after a 304, asks for them first).
	timer := time.NewTimer(o.Debounce)
	pending := !suppressed
	if !pending {
		timer.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			if !suppressed {
				push()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("watch %s: the watcher closed", c.dir)
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					// Files created in the new directory before it was
					// added are found by the push's walk anyway.
					if err := watchTree(w, ev.Name); err != nil {
						c.log.Warn("cannot watch new directory", "path", ev.Name, "error", err)
					}
				}
			}
			if ev.Has(fsnotify.Remove) && suppressed {
				suppressed = false
				c.log.Info("a file was removed; pushes resume", "repo", c.repo)
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			pending = true
			timer.Reset(o.Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("watch %s: the watcher closed", c.dir)
			}
			// Typically an event queue overflow: events were lost, so
			// push; the push walks the whole directory anyway.
			c.log.Warn("watcher error; scheduling a full push", "dir", c.dir, "error", err)
			pending = true
			timer.Reset(o.Debounce)
		case <-timer.C:
			if pending {
				pending = false
				push()
			}
		}
	}
}

// watchTree adds dir and every directory below it to w. Symlinked
// directories are not followed: they are not part of team memory.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return fmt.Errorf("watch %s: %w", dir, err)
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if err := w.Add(p); err != nil {
			return fmt.Errorf("watch %s: %w", p, err)
		}
		return nil
	})
}
