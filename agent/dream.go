package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/prompt"
)

// Consolidation defaults, as Claude Code's autoDream has them.
const (
	DreamMinHours     = 24
	DreamMinSessions  = 5
	DreamScanInterval = 10 * time.Minute
	// DreamLockStale is how long a consolidation lock protects a holder
	// whose process may have died without cleaning up.
	DreamLockStale = time.Hour
	// ConsolidateLockName is the lock file in the memory directory. Its body
	// is the holder's PID and its modification time the last consolidation.
	ConsolidateLockName = ".consolidate-lock"
)

// DreamOptions configure a consolidation.
type DreamOptions struct {
	// Model runs the consolidation. Required.
	Model llm.Model
	// Dir is the memory directory. Required.
	Dir *memdir.Dir
	// TranscriptDir holds the project's session transcripts; the session
	// gate counts them and the agent may search them read-only.
	TranscriptDir string
	// CurrentSession is not counted by the session gate.
	CurrentSession string
	// Enabled is the autoDreamEnabled setting, resolved by the caller.
	Enabled bool
	// Force skips the enabled, time, throttle and session gates, as a
	// consolidation asked for by hand does; the lock still applies.
	Force bool
	// MinHours, MinSessions and ScanInterval override the gates' defaults.
	MinHours     float64
	MinSessions  int
	ScanInterval time.Duration
	// StateDir keeps the scan throttle between processes. Required unless
	// Force is set.
	StateDir string
	// MaxTurns caps the model calls (default DefaultMaxTurns).
	MaxTurns int
	Now      func() time.Time
	// PID is written into the lock (default os.Getpid()).
	PID     int
	OnEvent func(Event)
	Logger  *slog.Logger
}

// DreamResult reports a consolidation.
type DreamResult struct {
	// Skipped is true when a gate stopped the run; Gate names it and
	// Reason says why.
	Skipped bool   `json:"skipped"`
	Gate    string `json:"gate,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// LastConsolidated is when the previous consolidation ran (zero for never).
	LastConsolidated time.Time `json:"last_consolidated,omitzero"`
	// Sessions lists the sessions touched since then.
	Sessions []string `json:"sessions"`
	// Changed and Removed list the memory files the run changed and
	// removed (all restorable with 'memdir undo').
	Changed []string  `json:"changed"`
	Removed []string  `json:"removed"`
	RunID   string    `json:"run,omitempty"`
	Usage   llm.Usage `json:"usage"`
	Turns   int       `json:"turns"`
	// Summary is the agent's closing message.
	Summary string  `json:"summary,omitempty"`
	Agent   *Result `json:"-"`
	// Stale lists the memories whose anchored code had changed, which the
	// agent was asked to check first.
	Stale []doctor.StaleMemory `json:"stale,omitempty"`
}

// Dream consolidates the memory directory, as Claude Code's autoDream does,
// after checking its gates cheapest first: the enabled setting; at least
// MinHours (24) since the last consolidation; at most one session scan per
// ScanInterval (10 minutes); at least MinSessions (5) sessions touched since
// then, not counting the current one; and the consolidation lock. A run
// that fails rolls the lock back so the next attempt is not delayed. Every
// file the agent changes or deletes is journaled first: a dream never loses
// a memory for good.
func Dream(ctx context.Context, opts *DreamOptions) (*DreamResult, error) {
	if opts == nil || opts.Model == nil || opts.Dir == nil {
		return nil, fmt.Errorf("dream: a model and a memory directory are required: %w", memdir.ErrInvalid)
	}
	o := *opts
	if o.MinHours <= 0 {
		o.MinHours = DreamMinHours
	}
	if o.MinSessions <= 0 {
		o.MinSessions = DreamMinSessions
	}
	if o.ScanInterval <= 0 {
		o.ScanInterval = DreamScanInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if !o.Force && o.StateDir == "" {
		return nil, fmt.Errorf("dream: a state directory is required for the scan throttle: %w", memdir.ErrInvalid)
	}
	d := o.Dir
	now := o.Now()
	res := &DreamResult{Sessions: []string{}, Changed: []string{}, Removed: []string{}}
	lockPath := d.Abs(ConsolidateLockName)
	lastAt := lockTime(lockPath)
	res.LastConsolidated = lastAt
	skip := func(gate, reason string) (*DreamResult, error) {
		res.Skipped, res.Gate, res.Reason = true, gate, reason
		return res, nil
	}

	if !o.Force {
		if !o.Enabled {
			return skip("enabled", "automatic consolidation is off (autoDreamEnabled); turn it on in settings, or run it by hand with --force")
		}
		if !lastAt.IsZero() {
			if h := now.Sub(lastAt).Hours(); h < o.MinHours {
				return skip("time", fmt.Sprintf("the last consolidation was %.1f hours ago; the next is due after %g hours", h, o.MinHours))
			}
		}
		ok, err := scanAllowed(o.StateDir, d.Path(), now, o.ScanInterval)
		if err != nil {
			return nil, err
		}
		if !ok {
			return skip("throttle", fmt.Sprintf("sessions were counted less than %s ago", o.ScanInterval))
		}
	}
	sessions, err := SessionsSince(o.TranscriptDir, lastAt, o.CurrentSession)
	if err != nil {
		return nil, err
	}
	res.Sessions = sessions
	if !o.Force && len(sessions) < o.MinSessions {
		return skip("sessions", fmt.Sprintf("%s since the last consolidation; it waits for %d", plural(len(sessions), "session", "sessions"), o.MinSessions))
	}

	if err := d.Ensure(); err != nil {
		return nil, err
	}
	// The consolidation runs under the directory lock, as one journaled run
	// ('memdir undo' reverts all it changed).
	var skipped *DreamResult
	ran := false // the consolidation started: res is the caller's to see
	var prior time.Time
	run, err := d.Change(ctx, "dream", nil, func(rec *memdir.Recorder) error {
		var holder int
		var err error
		prior, holder, err = acquireConsolidationLock(lockPath, now, o.PID)
		if err != nil {
			return err
		}
		if holder != 0 {
			skipped, err = skip("lock", fmt.Sprintf("another consolidation is running (PID %d)", holder))
			return err
		}
		ran = true
		return runDream(ctx, &o, res, rec)
	})
	if skipped != nil {
		return skipped, err
	}
	if !ran {
		return nil, err
	}
	if run != nil && len(run.ChangedFiles()) > 0 {
		res.RunID = run.ID
	}
	if err != nil {
		// A failed consolidation (or one the journal could not record) is
		// tried again: the lock gets back its earlier time.
		if rerr := rollbackConsolidationLock(lockPath, prior); rerr != nil {
			return res, errors.Join(err, rerr)
		}
		return res, err
	}
	return res, nil
}

func runDream(ctx context.Context, o *DreamOptions, res *DreamResult, rec *memdir.Recorder) error {
	d := o.Dir
	memPrompt, err := prompt.Build(&prompt.Options{Mode: prompt.Individual, Dir: d.Path()})
	if err != nil {
		return err
	}
	project := ""
	if fi, err := os.Stat(o.TranscriptDir); err == nil && fi.IsDir() {
		project = o.TranscriptDir
	}
	var sessions []string
	if !o.Force {
		sessions = res.Sessions
	}
	stale, err := doctor.StaleMemories(ctx, d)
	if err != nil {
		return fmt.Errorf("dream: checking anchors: %w", err)
	}
	res.Stale = stale
	po := &DreamPromptOptions{MemoryDir: d.Path(), TranscriptDir: project, Sessions: sessions, Today: o.Now(), Stale: stale}
	if po.Usage, po.UsageSince, err = dreamUsage(ctx, d); err != nil {
		// The figures are a hint: the run goes on without them.
		if o.Logger != nil {
			o.Logger.Warn("dream: no usage figures", "err", err)
		}
	}
	system := memPrompt + "\n" + DreamPrompt(po)
	out, runErr := Run(ctx, &Options{
		Model: o.Model, System: system, MemoryDir: d.Path(), AnchorRoot: d.ProjectRoot(), ProjectDir: project, MaxTurns: o.MaxTurns,
		BeforeChange: journalChange(d, rec), OnEvent: o.OnEvent, Logger: o.Logger,
		Write: d.WriteGuard(&memdir.Provenance{By: memdir.ByDream}),
	}, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("Begin the consolidation.")}}})
	res.Agent = out
	if out != nil {
		res.Usage, res.Turns, res.Summary = out.Usage, out.Turns, out.Text
		rec.AddUsage(out.Usage)
		for _, f := range out.Files {
			switch {
			case f.Removed:
				res.Removed = append(res.Removed, f.Path)
			case !f.Index:
				res.Changed = append(res.Changed, f.Path)
			}
		}
	}
	rec.SetSummary(fmt.Sprintf("dream: improved %s", plural(len(res.Changed)+len(res.Removed), "memory", "memories")))
	return runErr
}

// lockTime is the last consolidation: the lock file's modification time, or
// zero when there is none.
func lockTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// acquireConsolidationLock takes Claude Code's consolidation lock: it is held
// when its modification time is under an hour old and its body names a
// running process; otherwise memdir writes its PID and reads it back to make
// sure no other writer won. It returns the previous modification time (zero
// when there was no lock), or the holder's PID when the lock is held. The
// caller holds the memory directory's flock, which serialises memdir
// processes; the read-back guards against other tools.
func acquireConsolidationLock(path string, now time.Time, pid int) (prior time.Time, holder int, err error) {
	fi, statErr := os.Stat(path)
	if statErr == nil {
		prior = fi.ModTime()
		body, _ := os.ReadFile(path)
		if p, perr := strconv.Atoi(strings.TrimSpace(string(body))); perr == nil && p > 0 && p != pid &&
			now.Sub(fi.ModTime()) < DreamLockStale && processRunning(p) {
			return prior, p, nil
		}
	} else if !errors.Is(statErr, fs.ErrNotExist) {
		return time.Time{}, 0, fmt.Errorf("consolidation lock %s: %w", path, statErr)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)), 0o600); err != nil {
		return time.Time{}, 0, fmt.Errorf("consolidation lock %s: %w", path, err)
	}
	if err := os.Chtimes(path, now, now); err != nil {
		return time.Time{}, 0, fmt.Errorf("consolidation lock %s: %w", path, err)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("consolidation lock %s: %w", path, err)
	}
	if p, _ := strconv.Atoi(strings.TrimSpace(string(body))); p != pid {
		return prior, p, nil
	}
	return prior, 0, nil
}

// rollbackConsolidationLock undoes acquireConsolidationLock after a failed
// run: no lock before means none now; otherwise an empty body with the
// previous time, so the time gate is where it was.
func rollbackConsolidationLock(path string, prior time.Time) error {
	if prior.IsZero() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("roll back consolidation lock %s: %w", path, err)
		}
		return nil
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return fmt.Errorf("roll back consolidation lock %s: %w", path, err)
	}
	return os.Chtimes(path, prior, prior)
}

// RecordConsolidation stamps the consolidation lock with the current time,
// as a consolidation run by hand does before it starts.
func RecordConsolidation(dir *memdir.Dir, now time.Time) error {
	if err := dir.Ensure(); err != nil {
		return err
	}
	path := dir.Abs(ConsolidateLockName)
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}
	return os.Chtimes(path, now, now)
}

// scanAllowed records a session scan and reports whether the last one was at
// least interval ago.
func scanAllowed(stateDir, memDir string, now time.Time, interval time.Duration) (bool, error) {
	p := filepath.Join(stateDir, "dream", locate.SanitizePath(memDir, locate.HashBun)+".json")
	var st struct {
		LastScan time.Time `json:"last_scan"`
	}
	if data, err := os.ReadFile(p); err == nil {
		json.Unmarshal(data, &st)
	}
	if !st.LastScan.IsZero() && now.Sub(st.LastScan) < interval && !now.Before(st.LastScan) {
		return false, nil
	}
	st.LastScan = now
	data, _ := json.Marshal(st)
	if err := atomicfile.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return false, fmt.Errorf("dream: %w", err)
	}
	if err := atomicfile.WriteFile(p, data, 0o600); err != nil {
		return false, fmt.Errorf("dream: %w", err)
	}
	return true, nil
}

var sessionFileRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\.jsonl$`)
})

// SessionsSince lists the sessions whose transcripts (<uuid>.jsonl in dir;
// subagent logs excluded) changed after since, except the current one,
// sorted by id. A missing directory has none.
func SessionsSince(dir string, since time.Time, current string) ([]string, error) {
	if dir == "" {
		return []string{}, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
	}
	out := []string{}
	for _, e := range entries {
		if e.IsDir() || !sessionFileRe().MatchString(e.Name()) {
			continue
		}
		id := strings.TrimSuffix(e.Name(), ".jsonl")
		if id == current {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().After(since) {
			continue
		}
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// dreamUsage lists every memory (daily logs aside) with its use count, least
// used first (never used, then the longest unused, then the oldest), and
// when counting began; nothing when nothing was ever counted.
func dreamUsage(ctx context.Context, d *memdir.Dir) ([]DreamMemoryUse, time.Time, error) {
	st, err := d.Uses().Stats(ctx)
	if err != nil || st.Since.IsZero() {
		return nil, time.Time{}, err
	}
	scan, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, time.Time{}, err
	}
	var out []DreamMemoryUse
	for _, h := range scan.Memories {
		if strings.HasPrefix(h.Path, "logs/") {
			continue
		}
		u := st.Get(h.Path)
		out = append(out, DreamMemoryUse{Path: h.Path, Uses: u.Uses, LastUsed: u.LastUsed, Changed: h.ModTime})
	}
	slices.SortStableFunc(out, func(a, b DreamMemoryUse) int {
		if c := cmp.Compare(a.Uses, b.Uses); c != 0 {
			return c
		}
		if c := a.LastUsed.Compare(b.LastUsed); c != 0 {
			return c
		}
		return a.Changed.Compare(b.Changed)
	})
	return out, st.Since, nil
}
