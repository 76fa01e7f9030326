package promote

// The report: what a review read and what it proposes, and how a report
// is kept for a later apply.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
)

// Sources names what a review reads.
type Sources struct {
	// MemoryDir is the auto-memory directory; team memory is its team/.
	MemoryDir string `json:"memory_dir"`
	// ProjectRoot holds CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md,
	// and is where promotions are written.
	ProjectRoot string `json:"project_root"`
	// GitRoot, when set, adds the instruction files of every directory from
	// it down to ProjectRoot, as Claude Code loads them.
	GitRoot string `json:"git_root,omitempty"`
	// ConfigHome holds the user's CLAUDE.md and rules/.
	ConfigHome string `json:"config_home"`
}

// SourcesFor returns the sources of a located project.
func SourcesFor(l *locate.Location) Sources {
	return Sources{MemoryDir: filepath.Clean(l.Dir), ProjectRoot: l.ProjectRoot, GitRoot: l.GitRoot, ConfigHome: l.ConfigHome}
}

// Layer is one memory layer.
type Layer string

// The layers a review reads.
const (
	LayerAuto    Layer = "auto"
	LayerTeam    Layer = "team"
	LayerProject Layer = "project"
	LayerLocal   Layer = "local"
	LayerUser    Layer = "user"
)

// Section is one section of the report.
type Section string

// The sections, in report order.
const (
	SectionPromotions Section = "promotions"
	SectionCleanup    Section = "cleanup"
	SectionAmbiguous  Section = "ambiguous"
	SectionNoAction   Section = "no-action"
)

// Sections lists the sections in report order.
var Sections = []Section{SectionPromotions, SectionCleanup, SectionAmbiguous, SectionNoAction}

// Kind says what an item proposes.
type Kind string

// Item kinds and the section each belongs to.
const (
	KindToClaudeMD    Kind = "to-claude-md"       // promotions: a team convention
	KindToLocal       Kind = "to-claude-local-md" // promotions: a personal instruction
	KindToTeam        Kind = "to-team"            // promotions: context the team needs
	KindDuplicate     Kind = "duplicate"          // cleanup: the same text elsewhere
	KindNearDuplicate Kind = "near-duplicate"     // cleanup: nearly the same text elsewhere
	KindOutdated      Kind = "outdated"           // cleanup: every date it names is past
	KindSuperseded    Kind = "superseded"         // cleanup: marked as replaced
	KindConflict      Kind = "conflict"           // ambiguous: entries that contradict
	KindUnclear       Kind = "unclear"            // ambiguous: no clear place
	KindKeep          Kind = "keep"               // no action
)

var kindSection = map[Kind]Section{
	KindToClaudeMD: SectionPromotions, KindToLocal: SectionPromotions, KindToTeam: SectionPromotions,
	KindDuplicate: SectionCleanup, KindNearDuplicate: SectionCleanup, KindOutdated: SectionCleanup, KindSuperseded: SectionCleanup,
	KindConflict: SectionAmbiguous, KindUnclear: SectionAmbiguous, KindKeep: SectionNoAction,
}

// Subject is a memory or an instruction-file entry an item is about.
type Subject struct {
	// Ref names the entry within one review ("M3", "R12").
	Ref   string `json:"ref"`
	Layer Layer  `json:"layer"`
	// File is the absolute path; Display is what the report shows: a
	// memory's path in the memory directory, or an instruction file's path
	// (relative to the project or configuration directory) and line.
	File    string `json:"file"`
	Display string `json:"display"`
	// Path is a memory's path relative to the memory directory ("" for
	// instruction files); Line an instruction entry's first line.
	Path string      `json:"path,omitempty"`
	Line int         `json:"line,omitempty"`
	Name string      `json:"name,omitempty"`
	Type memdir.Type `json:"type,omitempty"`
	// Text is a memory's description, or an instruction entry's text.
	Text string `json:"text"`
	// Sum is a memory file's content sum when the review read it; applying
	// refuses to act on a memory that changed since.
	Sum string `json:"sum,omitempty"`
}

// Item is one proposal of the report.
type Item struct {
	// ID is how --apply names the item: P1 (promotions), C1 (cleanup),
	// A1 (ambiguous), N1 (no action).
	ID       string    `json:"id"`
	Section  Section   `json:"section"`
	Kind     Kind      `json:"kind"`
	Subjects []Subject `json:"subjects"`
	// Target is the instruction file a promotion appends to, or the team
	// path a memory moves to.
	Target string `json:"target,omitempty"`
	// Rule is the line a promotion to CLAUDE.md or CLAUDE.local.md adds.
	Rule string `json:"rule,omitempty"`
	// Remove is the auto memory (path in the memory directory) that
	// applying removes.
	Remove     string  `json:"remove,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	Reason     string  `json:"reason"`
	// Applicable is true when --apply can carry the item out.
	Applicable bool `json:"applicable"`
}

// Method says who classified.
type Method string

// Review methods.
const (
	MethodLexical  Method = "lexical"  // no model configured
	MethodByModel  Method = "model"    // the model classified
	MethodFallback Method = "fallback" // the model failed; lexical report
)

// File is one instruction file the review read.
type File struct {
	Layer   Layer  `json:"layer"`
	Path    string `json:"path"`
	Entries int    `json:"entries"`
}

// Report is the outcome of a review.
type Report struct {
	Generated time.Time `json:"generated"`
	Method    Method    `json:"method"`
	// Fallback says why the model's answer was not used.
	Fallback string    `json:"fallback,omitempty"`
	Usage    llm.Usage `json:"usage"`
	Sources  Sources   `json:"sources"`
	Files    []File    `json:"files"`
	// Memories and Rules count what was reviewed.
	Memories int    `json:"memories"`
	Rules    int    `json:"rules"`
	Items    []Item `json:"items"`
	// Warnings name files that could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// Item returns the item with the given id (case-insensitive).
func (r *Report) Item(id string) (*Item, bool) {
	for i := range r.Items {
		if strings.EqualFold(r.Items[i].ID, id) {
			return &r.Items[i], true
		}
	}
	return nil, false
}

// Section returns the items of one section, in order.
func (r *Report) Section(s Section) []Item {
	var out []Item
	for _, it := range r.Items {
		if it.Section == s {
			out = append(out, it)
		}
	}
	return out
}

// Options adjust Review.
type Options struct {
	// Model classifies; nil means the lexical review alone.
	Model llm.Model
	// Context is the user's additional context, passed to the model.
	Context string
	// Now is the clock that decides which dates are past; nil means time.Now.
	Now func() time.Time
	// NearDuplicate is the similarity (0–1) from which two entries count as
	// near duplicates; 0 means DefaultNearDuplicate.
	NearDuplicate float64
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// DefaultReportPath returns where the last review of a memory directory is
// kept for --apply: <StateDir>/promote/<SanitizePath(dir)>.json.
func DefaultReportPath(memoryDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statePath(lookup, "promote", memoryDir, ".json")
}

// SaveReport writes a report atomically (0600, folders 0700).
func SaveReport(file string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("save review: %w", err)
	}
	return atomicfile.WriteFile(file, append(data, '\n'), 0o600)
}

// LoadReport reads a report written by SaveReport. A missing file is
// ErrNotFound; a damaged one ErrInvalid, naming the file.
func LoadReport(file string) (*Report, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no saved review at %s: %w", file, memdir.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("saved review %s is damaged (%v); run the review again: %w", file, err, memdir.ErrInvalid)
	}
	return &rep, nil
}
