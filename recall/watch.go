package recall

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// recallWatch tells a long-lived Index whether its directory changed
// since the last refresh, from file-system notifications.
type recallWatch struct {
	mu     sync.Mutex
	root   string
	w      *fsnotify.Watcher
	dirty  bool
	broken bool // notifications can no longer be trusted: always refresh
}

// Watch makes Refresh cheap for a long-lived process: after it, Refresh
// does nothing until the file system reports a change below the directory
// (through fsnotify), and then refreshes as usual, by stat. Should
// notifications fail (the directory is removed, the kernel's queue
// overflows), every Refresh falls back to stat-ing the files. Close stops
// watching. Watch fails when the directory does not exist or notifications
// are unavailable; Refresh then works as without it.
func (x *Index) Watch() error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	err = filepath.WalkDir(x.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == x.dir {
				return err
			}
			return nil
		}
		if e.IsDir() {
			return w.Add(p)
		}
		return nil
	})
	if err != nil {
		w.Close()
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watch != nil {
		x.watch.close()
	}
	x.watch = &recallWatch{root: filepath.Clean(x.dir), w: w, dirty: true}
	return nil
}

// Close stops watching the directory (see Watch).
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watch == nil {
		return nil
	}
	err := x.watch.close()
	x.watch = nil
	return err
}

func (rw *recallWatch) close() error { return rw.w.Close() }

// begin drains the pending notifications and reports whether a refresh is
// needed, clearing the flag: changes from now on set it again.
func (rw *recallWatch) begin() bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for {
		select {
		case ev, ok := <-rw.w.Events:
			if !ok {
				rw.broken = true // closed: a closed channel is always ready
				return true
			}
			rw.dirty = true
			if filepath.Clean(ev.Name) == rw.root && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				rw.broken = true // the directory itself went away
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					if err := rw.w.Add(ev.Name); err != nil {
						rw.broken = true
					}
				}
			}
		case err, ok := <-rw.w.Errors:
			// A lost event (overflow) or a closed watcher: no longer trust
			// the notifications.
			if !ok {
				rw.broken = true
				return true
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rw.broken = true
			}
			rw.dirty = true
		default:
			d := rw.dirty || rw.broken
			rw.dirty = false
			return d
		}
	}
}
