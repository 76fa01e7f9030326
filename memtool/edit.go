package memtool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir"
)

// maxEcho caps how much of old_str an error message repeats back.
const maxEcho = 200

func (t *Tool) create(ctx context.Context, c Command) (string, error) {
	rel, err := resolveArg("create", "path", c.Path)
	if err != nil {
		return "", err
	}
	p := MemoryPath(rel)
	if c.FileText == nil {
		return "", missing("create", "file_text", "the content of the new file")
	}
	if rel == "." {
		// The reference's exclusive open of the directory fails the same way.
		return "", errorf(memdir.ErrExists, "File %s already exists", p)
	}
	fi, err := t.inspect(rel, true)
	if err != nil {
		return "", err
	}
	if fi != nil {
		return "", errorf(memdir.ErrExists, "File %s already exists", p)
	}
	data := []byte(*c.FileText)
	if err := t.checkContent(rel, data); err != nil {
		return "", err
	}
	if data, err = t.guard(rel, nil, data); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := t.before(p, rel); err != nil {
		return "", err
	}
	if err := t.mkdirParents(rel); err != nil {
		return "", err
	}
	if err := t.writeFile(rel, data, true); err != nil {
		return "", err
	}
	t.after("create", rel)
	return "File created successfully at: " + p, nil
}

// checkContent enforces the size cap, the text-only rule and, under the team
// directory, the secret guard on a file the tool is about to write at rel.
func (t *Tool) checkContent(rel string, data []byte) error {
	p := MemoryPath(rel)
	if len(data) > t.opts.MaxFileBytes {
		return errorf(memdir.ErrInvalid, "%s would be %s, over the %s limit for a memory file; nothing was written. Keep memories short: split the content or drop what is outdated.",
			p, humanSize(int64(len(data))), humanSize(int64(t.opts.MaxFileBytes)))
	}
	if isBinary(data) {
		return errorf(memdir.ErrInvalid, "The new content of %s is not UTF-8 text (it contains a NUL byte or invalid UTF-8); nothing was written.", p)
	}
	if t.inTeam(rel) {
		return secretError(p, data)
	}
	return nil
}

// guard runs the Write hook, if any, on content about to be written at rel.
func (t *Tool) guard(rel string, old, data []byte) ([]byte, error) {
	if t.opts.Write == nil {
		return data, nil
	}
	out, err := t.opts.Write(rel, old, data)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Nothing was written to %s: %v", MemoryPath(rel), err), Err: err}
	}
	return out, nil
}

// loadText resolves the path of an editing command and reads the text file,
// with the reference's messages for a missing path and for one that is not
// a file.
func (t *Tool) loadText(cmd string, c Command) (rel string, text string, err error) {
	rel, err = resolveArg(cmd, "path", c.Path)
	if err != nil {
		return "", "", err
	}
	p := MemoryPath(rel)
	fi, err := t.inspect(rel, false)
	if err != nil {
		return "", "", err
	}
	if fi == nil {
		return "", "", errNotExistLong(p)
	}
	if !fi.Mode().IsRegular() {
		return "", "", errNotFile(p)
	}
	data, err := t.readFile(rel, max(maxViewFileBytes, int64(t.opts.MaxFileBytes)))
	if err != nil {
		return "", "", err
	}
	if err := checkText(p, data); err != nil {
		return "", "", err
	}
	return rel, string(data), nil
}

// replaceFile writes the edited content of an existing file, after the
// checks and the BeforeChange hook.
func (t *Tool) replaceFile(ctx context.Context, op, rel, content string) error {
	p := MemoryPath(rel)
	data := []byte(content)
	if err := t.checkContent(rel, data); err != nil {
		return err
	}
	if t.opts.Write != nil {
		old, err := t.readFile(rel, max(maxViewFileBytes, int64(t.opts.MaxFileBytes)))
		if err != nil {
			return err
		}
		if old == nil {
			old = []byte{}
		}
		if data, err = t.guard(rel, old, data); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.before(p, rel); err != nil {
		return err
	}
	if err := t.writeFile(rel, data, false); err != nil {
		return err
	}
	t.after(op, rel)
	return nil
}

func (t *Tool) strReplace(ctx context.Context, c Command) (string, error) {
	if c.OldStr == nil {
		return "", missing("str_replace", "old_str", "the exact text to replace")
	}
	if c.NewStr == nil {
		return "", missing("str_replace", "new_str", "the replacement text, which may be empty")
	}
	rel, text, err := t.loadText("str_replace", c)
	if err != nil {
		return "", err
	}
	p := MemoryPath(rel)
	old, repl := *c.OldStr, *c.NewStr
	if old == "" {
		return "", errorf(memdir.ErrInvalid, "old_str is empty; give the exact text in %s to replace.", p)
	}
	switch n := strings.Count(text, old); {
	case n == 0:
		return "", errorf(memdir.ErrNotFound, "No replacement was performed, old_str `%s` did not appear verbatim in %s.", echo(old), p)
	case n > 1:
		return "", errorf(memdir.ErrInvalid, "No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique",
			echo(old), occurrenceLines(text, old))
	}
	at := strings.Index(text, old)
	content := text[:at] + repl + text[at+len(old):]
	if err := t.replaceFile(ctx, "str_replace", rel, content); err != nil {
		return "", err
	}
	// As in the reference: the lines of the new content (split on "\n", so
	// a final newline leaves an empty last line) from two before to two
	// after the line where the replacement starts.
	line := 1 + strings.Count(content[:at], "\n")
	from, to := max(1, line-2), min(strings.Count(content, "\n")+1, line+2)
	var b strings.Builder
	b.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):")
	if shownEnd, _ := numberLines(&b, content, from, to, t.opts.MaxViewChars); shownEnd < to {
		fmt.Fprintf(&b, "\n[Snippet truncated at the %s-character view limit.]", thousands(t.opts.MaxViewChars))
	}
	return b.String(), nil
}

// occurrenceLines lists, comma separated, the 1-based line on which each
// occurrence of sub starts, searching on from one byte past the previous
// match as the reference does (so overlapping matches are listed too).
func occurrenceLines(s, sub string) string {
	var nums []string
	line, last := 1, 0
	for off := 0; off <= len(s); {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			break
		}
		pos := off + i
		line += strings.Count(s[last:pos], "\n")
		last = pos
		nums = append(nums, strconv.Itoa(line))
		off = pos + 1
	}
	return strings.Join(nums, ", ")
}

// echo shortens model text repeated in an error so that a huge old_str does
// not flood the context.
func echo(s string) string {
	if utf8.RuneCountInString(s) <= maxEcho {
		return s
	}
	return truncateRunes(s, maxEcho) + "…"
}

func (t *Tool) insert(ctx context.Context, c Command) (string, error) {
	if c.InsertLine == nil {
		return "", missing("insert", "insert_line", "the line after which to insert; 0 inserts at the top")
	}
	if c.InsertText == nil {
		return "", missing("insert", "insert_text", "the text to insert")
	}
	rel, text, err := t.loadText("insert", c)
	if err != nil {
		return "", err
	}
	p := MemoryPath(rel)
	// The file's lines, split on "\n" (a "\r" stays with its line), without
	// the empty one a final newline leaves.
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := *c.InsertLine
	if n < 0 || n > len(lines) {
		return "", errorf(memdir.ErrInvalid, "Invalid `insert_line` parameter: %d. It should be within the range [0, %d].", n, len(lines))
	}
	// As in the reference: the text, without its trailing newlines, becomes
	// the line(s) after line n, and the file ends with a newline. Unlike the
	// reference, a blank last line of the file is kept.
	lines = slices.Insert(lines, n, strings.TrimRight(*c.InsertText, "\n"))
	content := strings.Join(lines, "\n")
	if !strings.HasSuffix(content, "\n") || n < len(lines)-1 {
		content += "\n"
	}
	if err := t.replaceFile(ctx, "insert", rel, content); err != nil {
		return "", err
	}
	return fmt.Sprintf("The file %s has been edited.", p), nil
}

func (t *Tool) delete(ctx context.Context, c Command) (string, error) {
	rel, err := resolveArg("delete", "path", c.Path)
	if err != nil {
		return "", err
	}
	p := MemoryPath(rel)
	if rel == "." {
		return "", errorf(memdir.ErrInvalid, "Cannot delete the %s directory itself", Prefix)
	}
	fi, err := t.inspect(rel, true)
	if err != nil {
		return "", err
	}
	if fi == nil {
		return "", errNotExist(p)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := t.before(p, rel); err != nil {
		return "", err
	}
	if fi.IsDir() {
		err = t.removeDir(rel)
	} else {
		// A link is removed itself; its target is never touched.
		if err = t.root.Remove(native(rel)); err != nil {
			err = ioError("delete", p, err)
		} else {
			err = t.syncDir(path.Dir(rel))
		}
	}
	if err != nil {
		return "", err
	}
	t.after("delete", rel)
	return "Successfully deleted " + p, nil
}

// removeDir deletes a directory tree so that it disappears at once: it is
// first renamed to a hidden tombstone next to it, then removed. A failure
// half-way leaves only the hidden tombstone, which the error names.
func (t *Tool) removeDir(rel string) error {
	p := MemoryPath(rel)
	tomb := path.Join(path.Dir(rel), fmt.Sprintf("%s%016x.deleted", tempPrefix, rand.Uint64()))
	if err := renameNoReplace(t.root, rel, tomb); err != nil {
		return ioError("delete", p, err)
	}
	if err := t.syncDir(path.Dir(rel)); err != nil {
		return err
	}
	if err := t.root.RemoveAll(native(tomb)); err != nil {
		return &Error{
			Msg: fmt.Sprintf("%s is gone, but removing its contents failed (%v); they remain in the hidden directory %s.", p, unwrapPath(err), path.Base(tomb)),
			Err: err,
		}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (t *Tool) rename(ctx context.Context, c Command) (string, error) {
	oldRel, err := resolveArg("rename", "old_path", c.OldPath)
	if err != nil {
		return "", err
	}
	newRel, err := resolveArg("rename", "new_path", c.NewPath)
	if err != nil {
		return "", err
	}
	oldP, newP := MemoryPath(oldRel), MemoryPath(newRel)
	if oldRel == "." {
		return "", errorf(memdir.ErrInvalid, "Cannot rename %s itself, the memory directory; rename the files inside it instead.", Prefix)
	}
	// The reference checks both paths, then that the destination is free,
	// then that the source exists.
	fi, err := t.inspect(oldRel, true)
	if err != nil {
		return "", err
	}
	dst, err := t.inspect(newRel, true)
	if err != nil {
		return "", err
	}
	if dst != nil {
		return "", errDestExists(newP)
	}
	if fi == nil {
		return "", errNotExist(oldP)
	}
	if fi.IsDir() && strings.HasPrefix(newRel+"/", oldRel+"/") {
		return "", errorf(memdir.ErrInvalid, "Cannot move the directory %s into itself (%s).", oldP, newP)
	}
	if t.inTeam(newRel) && !t.inTeam(oldRel) {
		if err := t.checkMoveIntoTeam(oldRel, fi, newP); err != nil {
			return "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := t.before(oldP, oldRel, newRel); err != nil {
		return "", err
	}
	if err := t.mkdirParents(newRel); err != nil {
		return "", err
	}
	if err := renameNoReplace(t.root, oldRel, newRel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", errDestExists(newP)
		}
		return "", ioError("rename", oldP, err)
	}
	if err := t.syncDir(path.Dir(oldRel)); err != nil {
		return "", err
	}
	if path.Dir(newRel) != path.Dir(oldRel) {
		if err := t.syncDir(path.Dir(newRel)); err != nil {
			return "", err
		}
	}
	t.after("rename", oldRel, newRel)
	return fmt.Sprintf("Successfully renamed %s to %s", oldP, newP), nil
}

func errDestExists(p string) error {
	return errorf(memdir.ErrExists, "The destination %s already exists", p)
}
