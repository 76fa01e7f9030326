// Package progress shows how far a long piece of work has got, the one way
// every memdir command does: on a terminal, one live line rewritten in
// place; on anything else (a pipe, a log file, CI), a plain line every few
// seconds, so that a log shows the work is alive without filling up.
// Nothing is shown for work that finishes before the first line is due, so
// quick runs stay silent.
//
// Libraries do not print: they take a callback of the shape
// func(stage string, done, total int) (recall.IndexOptions.Progress,
// team.ClientOptions.Progress, doctor.FixOptions.Progress), and commands
// pass [Reporter.Step]. The commands make their Reporter with
// cli.Env.Progress, which reads the timing from the environment and knows
// when to stay quiet.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Default timing.
const (
	// DefaultDelay is how long work runs before its first line: within
	// the two seconds a user waits before wondering, and long enough
	// that quick work (a warm recall) shows nothing.
	DefaultDelay = time.Second
	// DefaultEvery is the interval between lines when the output is not
	// a terminal.
	DefaultEvery = 5 * time.Second
	// TerminalEvery is how often the live line is redrawn on a terminal.
	TerminalEvery = 200 * time.Millisecond
)

// Options set how a Reporter shows progress.
type Options struct {
	// Terminal rewrites one line in place (carriage return, erase line)
	// instead of printing a line each time.
	Terminal bool
	// Delay is how long the work runs before anything is shown; 0 shows
	// the first line at once.
	Delay time.Duration
	// Every is the interval between lines (redraws on a terminal). 0
	// shows every step as it is reported, from the caller's goroutine,
	// with no timer at all: what tests use, so that what they see never
	// depends on how fast the machine is.
	Every time.Duration
	// Now is the clock of the elapsed time shown; nil means time.Now.
	Now func() time.Time
}

// Reporter shows the progress of one piece of work on a writer. A nil
// *Reporter does nothing, so code can report unconditionally. Its methods
// are safe to call from several goroutines.
type Reporter struct {
	w    io.Writer
	opts Options
	now  func() time.Time

	mu      sync.Mutex
	start   time.Time
	label   string
	stage   string
	done    int
	total   int
	shown   bool // a line was printed
	live    int  // width of the live line on a terminal, to erase it
	stopped bool

	quit     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// Start begins reporting the work named label ("sync pull", "embed") on w.
// Call Stop when the work ends, however it ends.
func Start(w io.Writer, label string, opts Options) *Reporter {
	r := &Reporter{w: w, opts: opts, now: opts.Now, label: label}
	if r.now == nil {
		r.now = time.Now
	}
	r.start = r.now()
	if opts.Delay <= 0 {
		r.mu.Lock()
		r.draw(false)
		r.mu.Unlock()
	}
	if opts.Every > 0 {
		r.quit = make(chan struct{})
		r.wg.Add(1)
		go r.tick()
	}
	return r
}

// tick draws the current state after the delay and then at every
// interval, so that a line appears even while the work reports nothing
// (a download, one long step).
func (r *Reporter) tick() {
	defer r.wg.Done()
	if r.opts.Delay > 0 {
		t := time.NewTimer(r.opts.Delay)
		select {
		case <-t.C:
		case <-r.quit:
			t.Stop()
			return
		}
		r.mu.Lock()
		r.draw(false)
		r.mu.Unlock()
	}
	tk := time.NewTicker(r.opts.Every)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			r.mu.Lock()
			r.draw(false)
			r.mu.Unlock()
		case <-r.quit:
			return
		}
	}
}

// Step reports that the work is at stage ("reading memories"), done of
// total items; total 0 means unknown. Its signature is that of the
// libraries' Progress callbacks.
func (r *Reporter) Step(stage string, done, total int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stage, r.done, r.total = stage, done, total
	r.drawNow()
}

// Update reports done of total items in the current stage, for callbacks
// that have no stage (recall.EmbedOptions.Progress).
func (r *Reporter) Update(done, total int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done, r.total = done, total
	r.drawNow()
}

// drawNow draws a step as it is reported, when there is no timer (Every
// 0) and the delay has passed.
func (r *Reporter) drawNow() {
	if r.opts.Every > 0 || r.stopped {
		return
	}
	if r.opts.Delay > 0 && r.now().Sub(r.start) < r.opts.Delay {
		return
	}
	r.draw(false)
}

// Stop ends the report: a line was shown, the last state is shown once
// more, marked done (on a terminal, the live line is finished). Work that
// ended before its first line shows nothing at all.
func (r *Reporter) Stop() {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		if r.quit != nil {
			close(r.quit)
			r.wg.Wait()
		}
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	if r.shown {
		r.draw(true)
	}
	r.stopped = true
}

// draw prints the current state; r.mu is held.
func (r *Reporter) draw(final bool) {
	if r.stopped {
		return
	}
	line := r.line(final)
	if r.opts.Terminal {
		pad := ""
		if n := r.live - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(r.w, "\r%s%s%s", line, pad, end)
		r.live = len(line)
	} else {
		fmt.Fprintln(r.w, line)
	}
	r.shown = true
}

// line is "sync pull: bringing in entries 1,200/20,000 (6%), 12s".
func (r *Reporter) line(final bool) string {
	var parts []string
	if r.stage != "" {
		parts = append(parts, r.stage)
	}
	switch {
	case r.total > 0:
		parts = append(parts, fmt.Sprintf("%s/%s (%d%%)", Count(r.done), Count(r.total), percent(r.done, r.total)))
	case r.done > 0:
		parts = append(parts, Count(r.done))
	}
	if len(parts) == 0 {
		parts = append(parts, "working")
	}
	elapsed := r.now().Sub(r.start).Round(time.Second)
	if final {
		return fmt.Sprintf("%s: %s, done in %s", r.label, strings.Join(parts, " "), elapsed)
	}
	return fmt.Sprintf("%s: %s, %s", r.label, strings.Join(parts, " "), elapsed)
}

func percent(done, total int) int {
	p := done * 100 / total
	return min(max(p, 0), 100)
}

// Count formats n with thousands separators: 20,000.
func Count(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
