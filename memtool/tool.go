package memtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/memdir/memdir"
)

// Name is the tool name the Anthropic API uses for the memory tool.
const Name = "memory"

// Defaults for [Options].
const (
	DefaultMaxFileBytes = 1 << 20
	DefaultMaxViewChars = 100_000
)

// maxLines is the documented line limit of a viewed file: line numbers are
// six digits wide.
const maxLines = 999_999

// Options configures a [Tool]. The zero value (or nil) gives the defaults.
type Options struct {
	// MaxFileBytes caps the size of a file produced by create, str_replace or
	// insert. Zero means DefaultMaxFileBytes (1 MiB).
	MaxFileBytes int
	// MaxViewChars caps the characters view returns; longer output is cut at
	// a line boundary with a note saying how to page on with view_range. Zero
	// means DefaultMaxViewChars.
	MaxViewChars int
	// BeforeChange is called with the root-relative slash path of a file or
	// directory just before a command modifies or deletes it (for journaling,
	// so changes can be undone). For create it is the file about to appear;
	// for rename it is called for the source and then the destination. An
	// error aborts the command before anything on disk has changed.
	BeforeChange func(relPath string) error
	// AfterChange is called after a successful modification with the command
	// name ("create", "str_replace", "insert", "delete", "rename") and the
	// root-relative paths involved (source then destination for rename).
	AfterChange func(op string, relPaths ...string)
	// AfterView is called after a successful view of a file (not of a
	// directory) with its root-relative slash path, to count the file as
	// used (see CountViews). It must not call back into the
	// Tool.
	AfterView func(relPath string)
	// Rewrite, when set, is given the content create, str_replace or insert
	// is about to write to a .md file and returns what is written instead
	// (memdir uses it to record code anchors; see memdir.AnchorContent).
	Rewrite func(relPath string, data []byte) []byte
	// ReadOnly allows only the view command.
	ReadOnly bool
	// Write, when set, sees the complete new content of every file that
	// create, str_replace or insert is about to write, with the file's
	// current content (nil when the file does not exist yet). It returns
	// the content to write, which may differ (memdir adds a provenance
	// record), or an error, which stops the command before anything changed
	// and whose text goes to the model. memdir.Dir.WriteGuard makes one that
	// screens the content and holds a suspicious write for review.
	Write func(relPath string, old, content []byte) ([]byte, error)
	// TeamDir is the root-relative slash path of the team-memory directory,
	// whose files are synced to every collaborator: create, str_replace and
	// insert refuse content there that the secret scanner flags, and rename
	// refuses to move such a file (or a directory holding one) into it. The
	// error names the rule and the file, never the secret, and wraps a
	// *memdir.SecretError. Empty means "team" (memdir.TeamDirName), right for
	// a tool bound to an auto-memory directory; "." makes the whole root team
	// memory, for a tool bound to a team directory itself.
	TeamDir string
}

// Tool runs memory-tool commands against one directory. It is safe for
// concurrent use; commands that change files are serialised within the Tool
// and views wait for them.
// The callbacks run while that lock is held and must not call back into the
// Tool.
//
// Across processes the Tool takes no lock of its own: each write is atomic,
// so readers never see a torn file, but two processes editing the same file
// at once can lose one edit. Callers that run several writers hold a
// directory lock (internal/flock) around their runs.
type Tool struct {
	root *os.Root
	opts Options

	mu     sync.RWMutex // writers exclusive, views shared; guards closed
	closed bool
}

// New returns a Tool bound to root, which must be an existing directory.
// All access goes through an os.Root opened on it, so nothing outside root
// can be reached even through symbolic links.
func New(root string, opts *Options) (*Tool, error) {
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("memory tool: directory %s does not exist; create it first: %w", root, memdir.ErrNotFound)
		}
		return nil, fmt.Errorf("memory tool: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("memory tool: %s is not a directory: %w", root, memdir.ErrInvalid)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("memory tool: %w", err)
	}
	t := &Tool{root: r}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.MaxFileBytes <= 0 {
		t.opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if t.opts.MaxViewChars <= 0 {
		t.opts.MaxViewChars = DefaultMaxViewChars
	}
	if t.opts.TeamDir == "" {
		t.opts.TeamDir = memdir.TeamDirName
	}
	t.opts.TeamDir = strings.Trim(path.Clean("/"+t.opts.TeamDir), "/")
	if t.opts.TeamDir == "" {
		t.opts.TeamDir = "."
	}
	return t, nil
}

// Close releases the directory handle. Commands run after Close fail.
func (t *Tool) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	return t.root.Close()
}

// Command is the input of one memory-tool call, as the Anthropic API sends
// it in a tool_use block. Which fields matter depends on Command.
type Command struct {
	Command    string  `json:"command"`
	Path       string  `json:"path,omitempty"`
	ViewRange  []int   `json:"view_range,omitempty"`
	FileText   *string `json:"file_text,omitempty"`
	OldStr     *string `json:"old_str,omitempty"`
	NewStr     *string `json:"new_str,omitempty"`
	InsertLine *int    `json:"insert_line,omitempty"`
	InsertText *string `json:"insert_text,omitempty"`
	OldPath    string  `json:"old_path,omitempty"`
	NewPath    string  `json:"new_path,omitempty"`
}

// Commands lists the command names in the order the documentation gives them.
var Commands = []string{"view", "create", "str_replace", "insert", "delete", "rename"}

// Execute decodes a tool_use input and runs it. Malformed input yields an
// error naming the bad or missing key.
func (t *Tool) Execute(ctx context.Context, input json.RawMessage) (string, error) {
	c, err := Decode(input)
	if err != nil {
		return "", err
	}
	return t.Run(ctx, c)
}

// Decode parses a tool_use input into a Command. Unknown keys are ignored,
// as models sometimes add their own; keys of the wrong type are reported by
// name.
func Decode(input json.RawMessage) (Command, error) {
	var c Command
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return c, errorf(memdir.ErrInvalid, "The memory tool input must be a JSON object with a \"command\" key.")
	}
	if err := json.Unmarshal(trimmed, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return c, errorf(memdir.ErrInvalid, "Invalid memory tool input: key %q must be %s, not a JSON %s.", te.Field, expectedType(te.Field), te.Value)
		}
		return c, errorf(memdir.ErrInvalid, "The memory tool input is not valid JSON: %v.", err)
	}
	return c, nil
}

func expectedType(key string) string {
	switch key {
	case "view_range":
		return "an array of two integers"
	case "insert_line":
		return "an integer"
	default:
		return "a string"
	}
}

// Run executes one command. On failure the error's text is the message for
// the model (send it as the tool result with is_error set); it wraps
// memdir.ErrNotFound, ErrExists or ErrInvalid where one applies.
func (t *Tool) Run(ctx context.Context, c Command) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch c.Command {
	case "view":
		t.mu.RLock()
		defer t.mu.RUnlock()
		if t.closed {
			return "", errClosed
		}
		return t.view(ctx, c)
	case "create", "str_replace", "insert", "delete", "rename":
	case "":
		return "", errorf(memdir.ErrInvalid, "The memory tool input has no \"command\" key; use one of %s.", strings.Join(Commands, ", "))
	default:
		return "", errorf(memdir.ErrInvalid, "Unknown memory tool command %s; use one of %s.", shown(c.Command), strings.Join(Commands, ", "))
	}
	if t.opts.ReadOnly {
		return "", errorf(memdir.ErrInvalid, "The memory directory is read-only here; only the view command is allowed.")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return "", errClosed
	}
	switch c.Command {
	case "create":
		return t.create(ctx, c)
	case "str_replace":
		return t.strReplace(ctx, c)
	case "insert":
		return t.insert(ctx, c)
	case "delete":
		return t.delete(ctx, c)
	default:
		return t.rename(ctx, c)
	}
}

var errClosed = errorf(os.ErrClosed, "The memory tool has been closed.")

// missing reports a key the command needs but did not get.
func missing(cmd, key, what string) error {
	return errorf(memdir.ErrInvalid, "The %s command needs the %q key (%s).", cmd, key, what)
}

// resolveArg resolves a required path argument of cmd.
func resolveArg(cmd, key, p string) (string, error) {
	if p == "" {
		return "", missing(cmd, key, "a path starting with "+Prefix)
	}
	return Resolve(p)
}

// before runs the BeforeChange hook for each path; the first error aborts.
func (t *Tool) before(shownPath string, rels ...string) error {
	if t.opts.BeforeChange == nil {
		return nil
	}
	for _, rel := range rels {
		if err := t.opts.BeforeChange(rel); err != nil {
			return &Error{
				Msg: fmt.Sprintf("The change to %s was stopped before anything was modified: %v", shownPath, err),
				Err: err,
			}
		}
	}
	return nil
}

func (t *Tool) after(op string, rels ...string) {
	if t.opts.AfterChange != nil {
		t.opts.AfterChange(op, rels...)
	}
}
