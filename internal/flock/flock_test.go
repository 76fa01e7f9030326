package flock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestAcquireExcludes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	var mu sync.Mutex
	inside, maxInside := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				l, err := Acquire(ctx, dir)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside > maxInside {
					maxInside = inside
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				inside--
				mu.Unlock()
				if err := l.Unlock(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if maxInside != 1 {
		t.Fatalf("%d holders at once, want 1", maxInside)
	}
}

func TestAcquireHonoursContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on held lock = %v, want deadline exceeded", err)
	}
	if _, ok, err := TryAcquire(dir); ok || err != nil {
		t.Fatalf("TryAcquire on held lock = %v, %v; want false, nil", ok, err)
	}
	l.Unlock()
	l2, ok, err := TryAcquire(dir)
	if !ok || err != nil {
		t.Fatalf("TryAcquire after unlock = %v, %v", ok, err)
	}
	l2.Unlock()
}
