package memtool

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/memdir/memdir"
)

// inTeam reports whether rel is the team directory or inside it.
func (t *Tool) inTeam(rel string) bool {
	td := t.opts.TeamDir
	return td == "." || rel == td || strings.HasPrefix(rel, td+"/")
}

// secretError refuses content for the team file shown as p when the
// scanner flags it. The message names the rules and the file only.
func secretError(p string, data []byte) error {
	err := memdir.CheckTeamContent(p, data)
	var se *memdir.SecretError
	if !errors.As(err, &se) {
		return err
	}
	return &Error{
		Msg: fmt.Sprintf("Error: Content contains potential secrets (%s) and cannot be written to team memory at %s. Team memory is shared with all repository collaborators, so nothing was written. Remove the sensitive content and try again.",
			labels(se), p),
		Err: se,
	}
}

func labels(se *memdir.SecretError) string {
	ls := make([]string, len(se.Findings))
	for i, m := range se.Findings {
		ls[i] = m.Label
	}
	return strings.Join(ls, ", ")
}

// checkMoveIntoTeam scans what a rename would move into the team directory
// at newP: the file oldRel, or every regular file under the directory
// oldRel. Links are moved as links and not followed (push skips them).
func (t *Tool) checkMoveIntoTeam(oldRel string, fi fs.FileInfo, newP string) error {
	limit := max(maxViewFileBytes, int64(t.opts.MaxFileBytes))
	scan := func(rel string) error {
		data, err := t.readFile(rel, limit)
		if err != nil {
			return err
		}
		dest := newP
		if rel != oldRel {
			dest = newP + "/" + strings.TrimPrefix(rel, oldRel+"/")
		}
		return secretError(dest, data)
	}
	switch {
	case fi.Mode().IsRegular():
		return scan(oldRel)
	case !fi.IsDir():
		return nil
	}
	return fs.WalkDir(t.root.FS(), oldRel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return ioError("read", MemoryPath(p), err)
		}
		if d.Type().IsRegular() && !strings.HasPrefix(path.Base(p), tempPrefix) {
			return scan(p)
		}
		return nil
	})
}
