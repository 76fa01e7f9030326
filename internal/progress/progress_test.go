package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixedClock is a clock that moves only when told.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

func TestEveryStepAtOnce(t *testing.T) {
	var b bytes.Buffer
	c := &fixedClock{time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)}
	r := Start(&b, "sync pull", Options{Now: c.now})
	r.Step("downloading", 0, 0)
	c.t = c.t.Add(3 * time.Second)
	r.Step("bringing in entries", 1200, 20000)
	r.Update(20000, 20000)
	r.Stop()
	r.Stop() // twice is harmless
	want := []string{
		"sync pull: working, 0s",
		"sync pull: downloading, 0s",
		"sync pull: bringing in entries 1,200/20,000 (6%), 3s",
		"sync pull: bringing in entries 20,000/20,000 (100%), 3s",
		"sync pull: bringing in entries 20,000/20,000 (100%), done in 3s",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestTerminalRewritesOneLine(t *testing.T) {
	var b bytes.Buffer
	c := &fixedClock{time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)}
	r := Start(&b, "embed", Options{Terminal: true, Now: c.now})
	r.Step("embedding memories", 10, 100)
	r.Update(5, 0)
	r.Stop()
	got := b.String()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "done in 0s\n") || strings.Count(got, "\r") != 4 {
		t.Errorf("terminal output %q: want lines rewritten in place, one newline at the end", got)
	}
	if !strings.Contains(got, "\rembed: embedding memories 5, 0s     ") {
		t.Errorf("a shorter line does not erase the longer one: %q", got)
	}
}

// Work that ends before the first line is due shows nothing.
func TestQuickWorkIsSilent(t *testing.T) {
	var b bytes.Buffer
	r := Start(&b, "recall", Options{Delay: time.Hour, Every: time.Hour})
	r.Step("reading memories", 1, 2)
	r.Stop()
	r = Start(&b, "recall", Options{Delay: time.Hour})
	r.Update(1, 2)
	r.Stop()
	if b.Len() != 0 {
		t.Errorf("quick work printed %q", b.String())
	}
}

func TestNilReporterDoesNothing(t *testing.T) {
	var r *Reporter
	r.Step("x", 1, 2)
	r.Update(1, 2)
	f := r.Step // a method value of a nil reporter, as commands pass it
	f("y", 0, 0)
	r.Stop()
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// With a timer, as commands run it: stopping twice (a deferred Stop after
// an early one) is harmless, and work stopped before the delay is silent.
func TestStopTwiceWithATimer(t *testing.T) {
	var b bytes.Buffer
	r := Start(&b, "sync push", Options{Delay: time.Hour, Every: time.Millisecond})
	r.Step("pushing", 1, 2)
	r.Stop()
	r.Stop()
	if b.Len() != 0 {
		t.Errorf("printed %q", b.String())
	}
}

// lockedBuffer is a buffer the ticker writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The timer shows the current state though the work reports nothing new
// (a download): the test waits for the lines to come, however slowly,
// and asserts nothing about when.
func TestTimerShowsAStalledStep(t *testing.T) {
	var b lockedBuffer
	r := Start(&b, "sync pull", Options{Delay: time.Nanosecond, Every: time.Millisecond})
	r.Step("downloading", 0, 0)
	for strings.Count(b.String(), "sync pull: downloading") < 2 {
		time.Sleep(time.Millisecond)
	}
	r.Stop()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "sync pull: downloading, done in ") {
		t.Errorf("last line %q", last)
	}
}
