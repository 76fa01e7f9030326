package evalset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir/internal/atomicfile"
)

// frontmatter is the header of a memory file, in Claude Code's key order.
type frontmatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Type        string `yaml:"type"`
}

// Markdown renders the memory as a memory file: YAML frontmatter with name,
// description and type, a blank line, then the body.
func (m Memory) Markdown() ([]byte, error) {
	fm, err := yaml.Marshal(frontmatter{Name: m.Name, Description: m.Description, Type: m.Type})
	if err != nil {
		return nil, fmt.Errorf("memory %s: encode frontmatter: %w", m.File, err)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n\n")
	b.WriteString(m.Body)
	if m.Body != "" && m.Body[len(m.Body)-1] != '\n' {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// WriteDir writes every memory of the set as a file under dir (which must
// exist), creating subdirectories, and sets each file's modification time
// to ref minus its age. Memory files that would land outside dir are
// refused.
func (s *Set) WriteDir(dir string, ref time.Time) error {
	for _, m := range s.Memories {
		rel := filepath.FromSlash(m.File)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("memory %q: path is not local to the directory", m.File)
		}
		data, err := m.Markdown()
		if err != nil {
			return err
		}
		path := filepath.Join(dir, rel)
		if err := atomicfile.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("memory %s: %w", m.File, err)
		}
		if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("memory %s: %w", m.File, err)
		}
		mt := m.ModTime(ref)
		if err := os.Chtimes(path, mt, mt); err != nil {
			return fmt.Errorf("memory %s: set modification time: %w", m.File, err)
		}
	}
	return nil
}

// sortMemories orders memories newest first, then by file name.
func sortMemories(ms []Memory) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].AgeDays != ms[j].AgeDays {
			return ms[i].AgeDays < ms[j].AgeDays
		}
		return ms[i].File < ms[j].File
	})
}
