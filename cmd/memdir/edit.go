package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/cli"
)

var editCmd = &cli.Command{
	Name:  "edit",
	Args:  "[--type TYPE] [--team] [--json] NAME",
	Short: "open a memory in $VISUAL or $EDITOR, creating it when missing",
	Long: `Edit opens a memory in your editor: $VISUAL, else $EDITOR, else vi. The
variable may hold arguments ("code --wait"); it is run by the shell with the
file's path appended, on the terminal memdir runs on.

NAME is the memory's file path, the path without ".md", or its name. When no
memory matches, a new file is created (never over an existing one) from a
template with name, an empty description and --type, and opened; a file left
exactly as the template was is removed again, since it was never filled in.
The new file is <type>_<name>.md, or NAME itself when NAME is a path ending
in .md; --team puts it under team/.

After the editor exits, edit checks the frontmatter again and reports what is
wrong, naming the file: no frontmatter, YAML that does not parse, an empty
name or description (errors, exit 4), and a missing or unknown type
(warnings). The file is always kept as you wrote it. A team memory is
edited as a private copy outside team/ and written back only if it holds
nothing the secret scanner flags; otherwise team/ is left unchanged, the
error names the kind of secret (never the secret), and the copy is kept at
the path it gives (exit 4). When name and description are present, the memory's
MEMORY.md line is written from them (added, or replaced in place). The
file's previous content and index line are journaled first, so
'memdir undo' reverts the edit.

` + locationHelp + `

Examples:
  memdir edit testing-policy
  memdir edit --type feedback "deploys go through Argo"
  VISUAL="code --wait" memdir edit user_role.md`,
	Setup: cli.Setup(runEdit),
}

// editOptions holds the flag values of memdir edit.
type editOptions struct {
	lf     locationFlags
	typ    string
	asJSON bool
}

func (o *editOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, true)
	o.lf.creates = true
	fs.StringVar(&o.typ, "type", "", "type of a new memory: user, feedback, project or reference")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

func runEdit(ctx context.Context, env *cli.Env, o *editOptions, args []string) error {
	if len(args) != 1 {
		return cli.Usagef("edit takes one memory name")
	}
	t := memdir.Type("")
	if o.typ != "" {
		if t = memdir.ParseType(o.typ); t == "" {
			return cli.Usagef("--type %q: want user, feedback, project or reference", o.typ)
		}
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	res, err := editMemory(ctx, env, d, args[0], t, o.lf.team)
	if err != nil {
		return err
	}
	return reportEdit(env, d, res, args[0], o.asJSON)
}

// editResult is what 'memdir edit' did.
type editResult struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
	// Outcome is "saved", "unchanged", "discarded" (a new file left as the
	// template) or "removed" (the editor deleted the file).
	Outcome  string   `json:"outcome"`
	Index    bool     `json:"index_updated"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	RunID    string   `json:"run_id,omitempty"`
}

// editTarget finds the memory NAME refers to, or the path a new one gets.
func editTarget(ctx context.Context, d *memdir.Dir, name string, t memdir.Type, team bool) (rel string, exists bool, err error) {
	rel, err = d.Resolve(ctx, name)
	if err == nil && (!team || strings.HasPrefix(rel, teamPrefix)) {
		return rel, true, nil
	}
	if err != nil && !errors.Is(err, memdir.ErrNotFound) {
		return "", false, err
	}
	if strings.HasSuffix(name, ".md") || strings.Contains(name, "/") {
		rel = name
		if !strings.HasSuffix(rel, ".md") {
			rel += ".md"
		}
	} else {
		rel = memdir.FileNameFor(name, t)
	}
	if team && !strings.HasPrefix(rel, teamPrefix) {
		rel = teamPrefix + rel
	}
	rel, err = memdir.CleanMemoryFilePath(rel)
	return rel, false, err
}

// editTemplate is the content of a new memory before the editor opens it.
func editTemplate(name string, t memdir.Type) []byte {
	m := &memdir.Memory{Name: name}
	head := m.Format() // name quoted as YAML needs, description empty
	var b bytes.Buffer
	front := strings.TrimSuffix(string(head), "---\n\n")
	front = strings.Replace(front, "description: \"\"\n",
		"# One line saying what this memory is about; recall reads it to decide relevance.\ndescription: \n", 1)
	b.WriteString(front)
	b.WriteString("# user, feedback, project or reference\n")
	fmt.Fprintf(&b, "type: %s\n---\n\n", t)
	if t == memdir.TypeFeedback || t == memdir.TypeProject {
		b.WriteString("\n\n**Why:** \n**How to apply:** \n")
	}
	return b.Bytes()
}

// editMemory runs memdir edit on the memory name refers to (a new one of
// type t when none does), as one journal run: the file and its index
// line are recorded, the editor runs, and what it left is checked,
// placed and indexed.
func editMemory(ctx context.Context, env *cli.Env, d *memdir.Dir, name string, t memdir.Type, team bool) (*editResult, error) {
	rel, exists, err := editTarget(ctx, d, name, t, team)
	if err != nil {
		return nil, err
	}
	indexRel, link := memdir.IndexFor(rel)
	e := &memoryEdit{d: d, rel: rel, exists: exists, isTeam: indexRel != memdir.EntrypointName, indexRel: indexRel, link: link}
	ix, err := d.ReadIndex(e.isTeam)
	if err != nil {
		return nil, err
	}
	e.res = &editResult{Path: rel}
	defer e.removeCopy()
	// The run spans the editor session without the directory lock, which
	// would stall every other writer while the user types; each write takes
	// it (editIndex, placeTeamFile, removeTeamFile).
	run, err := d.Change(ctx, "edit", &memdir.ChangeOptions{Unlocked: true}, func(rec *memdir.Recorder) error {
		if err := e.record(rec, ix); err != nil {
			return err
		}
		if err := e.prepare(name, t); err != nil {
			return err
		}
		before, _ := os.ReadFile(e.file)
		if err := e.openEditor(ctx, env); err != nil {
			return err
		}
		after, err := os.ReadFile(e.file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return e.removed(ctx)
		case err != nil:
			return fmt.Errorf("read %s after editing: %w", e.file, err)
		case e.isNew() && bytes.Equal(after, e.template):
			return e.discard()
		case !e.isNew() && bytes.Equal(after, before):
			e.res.Outcome = "unchanged"
		default:
			e.res.Outcome = "saved"
		}
		return e.save(ctx, after)
	})
	if err != nil {
		return nil, err
	}
	if run != nil && len(run.ChangedFiles()) > 0 {
		e.res.RunID = run.ID
	}
	return e.res, nil
}

// A memoryEdit is one memdir edit of the memory at rel.
type memoryEdit struct {
	d        *memdir.Dir
	rel      string
	exists   bool   // the memory existed before the edit
	isTeam   bool   // it is a team memory
	indexRel string // the index that lists it
	link     string // its link in that index
	res      *editResult
	// file is what the editor opens: the memory itself, or a team
	// memory's private copy (copyFile too), which keepCopy keeps after
	// the edit.
	file, copyFile string
	keepCopy       bool
	// template is what a new file held before the editor opened it; nil
	// for an existing memory.
	template []byte
}

// record notes the file and its index lines as they are, for undo.
func (e *memoryEdit) record(rec *memdir.Recorder, ix *memdir.Index) error {
	rec.SetSummary("edit " + e.rel)
	if err := rec.Before(e.rel); err != nil {
		return err
	}
	var lines []string
	for _, ie := range ix.Find(e.link) {
		lines = append(lines, ie.String())
	}
	rec.NoteIndexLines(e.rel, lines)
	return nil
}

// prepare sets the file the editor opens. A team file is edited as a
// copy outside team/: a sync watcher must not push a half-written file,
// and what the user saves is checked for secrets before it reaches team/.
// A new private memory is created from the template, unless someone else
// created it meanwhile: then theirs is edited.
func (e *memoryEdit) prepare(name string, t memdir.Type) error {
	e.file = e.d.Abs(e.rel)
	if e.isTeam {
		var err error
		if e.file, e.template, err = teamEditCopy(e.d, e.rel, e.exists, name, t); err != nil {
			return err
		}
		e.copyFile = e.file
		return nil
	}
	if e.exists {
		return nil
	}
	e.template = editTemplate(nameForTemplate(name), t)
	created, err := e.d.CreateExclusive(e.rel, e.template)
	if err != nil {
		return err
	}
	e.res.Created = created
	if !created {
		e.template = nil
	}
	return nil
}

// openEditor runs the editor on the file. When it fails on a file this
// edit created, the file goes if it still holds the template.
func (e *memoryEdit) openEditor(ctx context.Context, env *cli.Env) error {
	err := runEditor(ctx, env, e.file)
	if err != nil && e.res.Created {
		if cur, rerr := os.ReadFile(e.file); rerr == nil && bytes.Equal(cur, e.template) {
			os.Remove(e.file)
		}
	}
	return err
}

// isNew reports whether the editor was given a new file: one this edit
// created, or a new team memory's copy.
func (e *memoryEdit) isNew() bool { return e.res.Created || e.isTeam && !e.exists }

// removed handles a file the editor deleted: a team memory goes from
// team/ too, and the index line goes.
func (e *memoryEdit) removed(ctx context.Context) error {
	e.res.Outcome = "removed"
	if e.isTeam && e.exists {
		if err := removeTeamFile(ctx, e.d, e.rel); err != nil {
			return err
		}
	}
	return editIndex(ctx, e.d, e.indexRel, func(ix *memdir.Index) bool { return len(ix.Remove(e.link)) > 0 }, e.res)
}

// discard removes a new file the editor left as the template (a team
// memory's copy goes with its directory).
func (e *memoryEdit) discard() error {
	e.res.Outcome = "discarded"
	if e.isTeam {
		return nil
	}
	if err := os.Remove(e.file); err != nil {
		return fmt.Errorf("remove the unfilled template %s: %w", e.file, err)
	}
	return nil
}

// save places a saved team memory's text in team/, if it holds no secret
// (else the copy is kept), checks the memory, and writes its index line
// when name and description allow.
func (e *memoryEdit) save(ctx context.Context, after []byte) error {
	if e.isTeam && e.res.Outcome == "saved" {
		if err := memdir.CheckTeamContent(e.rel, after); err != nil {
			e.keepCopy = true
			return fmt.Errorf("%w; %s is unchanged and your edited text is kept outside team memory in %s", err, e.d.Abs(e.rel), e.file)
		}
		var err error
		if e.res.Created, err = placeTeamFile(ctx, e.d, e.rel, after, e.exists); err != nil {
			e.keepCopy = true
			return fmt.Errorf("%w; your edited text is kept in %s", err, e.file)
		}
	}
	m := checkEdited(after, e.res)
	if m == nil {
		return nil
	}
	line := memdir.IndexEntry{Title: m.Name, File: e.link, Hook: m.Description}.String()
	return editIndex(ctx, e.d, e.indexRel, func(ix *memdir.Index) bool { return ix.Upsert(e.link, line) }, e.res)
}

// removeCopy removes a team memory's private copy, unless it is kept.
func (e *memoryEdit) removeCopy() {
	if e.copyFile != "" && !e.keepCopy {
		os.RemoveAll(filepath.Dir(e.copyFile))
	}
}

// nameForTemplate turns what the user typed into a memory name: a path
// becomes its file stem.
func nameForTemplate(name string) string {
	if strings.HasSuffix(name, ".md") || strings.Contains(name, "/") {
		return strings.TrimSuffix(path.Base(name), ".md")
	}
	return name
}

// editorCommand builds the editor process for file: $VISUAL, else $EDITOR,
// else vi. On Unix the variable is a shell snippet, as git and Claude Code
// treat it, so "code --wait" works; the path is passed as an argument, never
// pasted into the snippet.
func editorCommand(ctx context.Context, env *cli.Env, file string) (*exec.Cmd, string) {
	editor := strings.TrimSpace(env.Getenv("VISUAL"))
	if editor == "" {
		editor = strings.TrimSpace(env.Getenv("EDITOR"))
	}
	if editor == "" {
		editor = "vi"
		if runtime.GOOS == "windows" {
			editor = "notepad"
		}
	}
	if runtime.GOOS == "windows" {
		f := strings.Fields(editor)
		return exec.CommandContext(ctx, f[0], append(f[1:], file)...), editor
	}
	return exec.CommandContext(ctx, "/bin/sh", "-c", editor+` "$@"`, editor, file), editor
}

func runEditor(ctx context.Context, env *cli.Env, file string) error {
	cmd, editor := editorCommand(ctx, env, file)
	// The editor gets memdir's own terminal: the standard streams are
	// *os.File in real use, so the child inherits them directly.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the editor (%s) failed on %s: %v; set VISUAL or EDITOR to an editor that waits until you close the file", editor, file, err)
	}
	return nil
}

// checkEdited validates an edited memory, recording errors and warnings in
// res. It returns the parsed memory when the index line can be written from
// it (name and description present), or nil.
func checkEdited(content []byte, res *editResult) *memdir.Memory {
	if bytes.IndexByte(content, 0) >= 0 {
		res.Errors = append(res.Errors, "the file holds NUL bytes: a memory is Markdown text")
		return nil
	}
	if len(content) > memdir.MaxMemoryFileBytes {
		res.Errors = append(res.Errors, fmt.Sprintf("the file is %s, over the %s memdir reads: split it", memdir.FormatFileSize(len(content)), memdir.FormatFileSize(memdir.MaxMemoryFileBytes)))
	}
	m, prob := memdir.ParseMemory(content)
	switch {
	case prob != nil && !prob.Recovered:
		res.Errors = append(res.Errors, prob.Error())
	case prob != nil:
		res.Warnings = append(res.Warnings, prob.Error()+"; quote values that hold ': ' or ' #'")
	case !m.HasFrontmatter():
		res.Errors = append(res.Errors, "no frontmatter: the file must start with a --- block holding name, description and type")
	}
	if m.HasFrontmatter() || prob != nil {
		if strings.TrimSpace(m.Name) == "" {
			res.Errors = append(res.Errors, "name is empty")
		}
		if strings.TrimSpace(m.Description) == "" {
			res.Errors = append(res.Errors, "description is empty: recall decides relevance from it")
		}
		switch {
		case m.RawType == "":
			res.Warnings = append(res.Warnings, "type is missing: use user, feedback, project or reference")
		case m.Type == "":
			res.Warnings = append(res.Warnings, fmt.Sprintf("type %q is not user, feedback, project or reference", m.RawType))
		}
	}
	if len(res.Errors) > 0 {
		return nil
	}
	return m
}

// editIndex changes MEMORY.md (or team/MEMORY.md) under the directory lock
// and replaces it atomically when change reports a difference.
func editIndex(ctx context.Context, d *memdir.Dir, indexRel string, change func(*memdir.Index) bool, res *editResult) error {
	return d.WithLock(ctx, func() error {
		changed, err := d.UpdateIndex(indexRel != memdir.EntrypointName, change)
		if changed {
			res.Index = true
		}
		return err
	})
}

func reportEdit(env *cli.Env, d *memdir.Dir, res *editResult, name string, asJSON bool) error {
	if err := cli.Emit(env, asJSON, res, func(w io.Writer) error {
		file := d.Abs(res.Path)
		switch res.Outcome {
		case "discarded":
			fmt.Fprintf(w, "Nothing saved: %s was left as the template, so it was removed.\n", file)
		case "removed":
			fmt.Fprintf(w, "The editor removed %s", file)
			if res.Index {
				fmt.Fprint(w, "; its MEMORY.md line is gone too")
			}
			fmt.Fprintln(w, ".")
		case "unchanged":
			fmt.Fprintf(w, "%s is unchanged", file)
			if res.Index {
				fmt.Fprint(w, "; its MEMORY.md line was brought in step")
			}
			fmt.Fprintln(w, ".")
		default:
			what := "Saved"
			if res.Created {
				what = "Created"
			}
			fmt.Fprintf(w, "%s %s", what, file)
			if res.Index {
				fmt.Fprint(w, " and its MEMORY.md line")
			}
			fmt.Fprintln(w, ".")
		}
		if res.RunID != "" {
			fmt.Fprintf(w, "Undo with: memdir undo %s\n", res.RunID)
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(env.Stderr, "warning: %s: %s\n", res.Path, w)
		}
		for _, e := range res.Errors {
			fmt.Fprintf(env.Stderr, "problem: %s: %s\n", res.Path, e)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%s has %s, so its MEMORY.md line was not written; the file is kept as you wrote it: run 'memdir edit %s' again to fix it: %w",
			d.Abs(res.Path), cli.Plural(len(res.Errors), "problem", "problems"), res.Path, memdir.ErrInvalid)
	}
	return nil
}

// teamEditCopy makes the private copy a team memory is edited in: a file
// named like the memory in a new 0700 temporary directory, holding the
// memory's content or, for a new one, the template (which it returns).
func teamEditCopy(d *memdir.Dir, rel string, exists bool, name string, t memdir.Type) (file string, template []byte, err error) {
	var content []byte
	if exists {
		if content, err = os.ReadFile(d.Abs(rel)); err != nil {
			return "", nil, fmt.Errorf("read %s: %w", d.Abs(rel), err)
		}
	} else {
		template = editTemplate(nameForTemplate(name), t)
		content = template
	}
	dir, err := os.MkdirTemp("", "memdir-edit-")
	if err != nil {
		return "", nil, fmt.Errorf("make a private copy of %s to edit: %w", rel, err)
	}
	file = filepath.Join(dir, path.Base(rel))
	if err := atomicfile.WriteFile(file, content, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("make a private copy of %s to edit: %w", rel, err)
	}
	return file, template, nil
}

// placeTeamFile writes the edited content of a team memory into team/,
// atomically and under the directory lock. A new memory is created only if
// nobody created the file meanwhile (ErrExists). created reports a new file.
func placeTeamFile(ctx context.Context, d *memdir.Dir, rel string, content []byte, exists bool) (created bool, err error) {
	err = d.WithLock(ctx, func() error {
		root, err := os.OpenRoot(d.Path())
		if err != nil {
			return err
		}
		defer root.Close()
		if !exists {
			// Every memdir writer takes the lock, so checking first is safe.
			if _, err := root.Lstat(rel); err == nil {
				return fmt.Errorf("%s was created by someone else while you edited: %w", d.Abs(rel), memdir.ErrExists)
			}
			if err := root.MkdirAll(path.Dir(rel), 0o700); err != nil {
				return fmt.Errorf("create %s: %w", d.Abs(rel), err)
			}
		}
		return atomicfile.WriteFileIn(root, rel, content, 0o600)
	})
	return err == nil && !exists, err
}

// removeTeamFile deletes a team memory whose copy the editor deleted.
func removeTeamFile(ctx context.Context, d *memdir.Dir, rel string) error {
	return d.WithLock(ctx, func() error {
		if err := os.Remove(d.Abs(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", d.Abs(rel), err)
		}
		return nil
	})
}
