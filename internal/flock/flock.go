// Package flock takes exclusive, advisory, cross-process locks.
//
// On Unix the lock is flock(2) on an open descriptor, so it is released by the
// kernel when the process dies: a crash never leaves a stale lock behind. It is
// reliable between processes on one machine; on network filesystems flock may
// be emulated or unsupported, and memdir does not promise mutual exclusion there.
//
// On Windows it is LockFileEx, released by the system in the same way. Where
// neither exists (AIX, Plan 9, js/wasm, wasip1) it falls back to a lock file
// created with O_EXCL, taken over when older than ten minutes; see
// flock_other.go for what that fallback cannot promise.
package flock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Lock is a held lock. Unlock releases it.
type Lock struct {
	f    *os.File
	path string
}

// Path returns the path that was locked.
func (l *Lock) Path() string { return l.path }

// Unlock releases the lock. It is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	cerr := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return cerr
}

// Acquire takes an exclusive lock on path, waiting until it is free or ctx is
// done. path may be a directory (Unix: the directory itself is locked, so no
// lock file is created) or a regular file, which is created if missing.
func Acquire(ctx context.Context, path string) (*Lock, error) {
	f, err := openLockTarget(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		return &Lock{f: f, path: path}, nil
	}
	// Contended: poll with a growing pause until the lock is free or ctx is
	// done. A blocking flock in a goroutine could not be called off: one
	// abandoned after ctx ended would still take the lock when the holder
	// released it, for a moment that other processes would see as held.
	delay := time.Millisecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-timer.C:
		}
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return &Lock{f: f, path: path}, nil
		}
		delay = min(2*delay, maxPollDelay)
		timer.Reset(delay)
	}
}

// maxPollDelay bounds the pause between two tries of a contended lock.
const maxPollDelay = 10 * time.Millisecond

// TryAcquire takes the lock only if it is free; ok reports whether it did.
func TryAcquire(path string) (l *Lock, ok bool, err error) {
	f, err := openLockTarget(path)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	ok, err = tryLock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, false, nil
	}
	return &Lock{f: f, path: path}, true, nil
}
