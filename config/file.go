package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
)

// FilePath returns the config file [Load] reads, and whether the user named
// it through MEMDIR_CONFIG (so that its absence is an error). A relative
// MEMDIR_CONFIG is taken from dir, or from the working directory when dir
// is "".
func FilePath(lookupEnv memdir.LookupEnvFunc, dir string) (path string, named bool, err error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	if p, ok := lookupEnv("MEMDIR_CONFIG"); ok && p != "" {
		if !filepath.IsAbs(p) {
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return "", false, fmt.Errorf("config file %s (from MEMDIR_CONFIG) is relative and the working directory is unknown: %w", p, err)
				}
			}
			p = filepath.Join(dir, p)
		}
		return p, true, nil
	}
	cdir, err := locate.ConfigDir(lookupEnv)
	if err != nil {
		return "", false, err
	}
	return filepath.Join(cdir, "config.yaml"), false, nil
}

// maxFileSize bounds the config file: anything larger is not a config file.
const maxFileSize = 1 << 20

func (c *Config) loadFile(lookupEnv memdir.LookupEnvFunc, dir string) error {
	path, named, err := FilePath(lookupEnv, dir)
	if err != nil {
		return err
	}
	c.File = path
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("config file %s (from MEMDIR_CONFIG) does not exist: %w", path, memdir.ErrNotFound)
	case err != nil:
		return fmt.Errorf("config file: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("config file %s is not a regular file: %w", path, memdir.ErrInvalid)
	case fi.Size() > maxFileSize:
		return fmt.Errorf("config file %s is %d bytes, more than a config file can be (%d): %w", path, fi.Size(), maxFileSize, memdir.ErrInvalid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	c.FileFound = true
	return c.parseFile(path, data)
}

// parseFile reads the YAML config. It walks the node tree rather than
// decoding into a struct so that an unknown or misplaced key is reported by
// its dotted name and line.
func (c *Config) parseFile(path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s is not valid YAML: %v: %w", path, err, memdir.ErrInvalid)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // only comments
	}
	fileKeys := map[string]Key{}
	sections := map[string]bool{}
	for _, k := range keys {
		if k.InFile {
			fileKeys[k.Name] = k
			if sec, _, ok := strings.Cut(k.Name, "."); ok {
				sections[sec] = true
			}
		}
	}
	known := strings.Join(keyNames(func(k Key) bool { return k.InFile }), ", ")
	var walk func(prefix string, n *yaml.Node) error
	walk = func(prefix string, n *yaml.Node) error {
		if n.Kind != yaml.MappingNode {
			what := "the file"
			if prefix != "" {
				what = "section " + strings.TrimSuffix(prefix, ".")
			}
			return fmt.Errorf("config file %s line %d: %s must be a mapping of keys to values: %w", path, n.Line, what, memdir.ErrInvalid)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			name := prefix + kn.Value
			if seen[name] {
				return fmt.Errorf("config file %s line %d: key %s appears twice: %w", path, kn.Line, name, memdir.ErrInvalid)
			}
			seen[name] = true
			if prefix == "" && sections[kn.Value] {
				if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
					continue // an empty section
				}
				if err := walk(name+".", vn); err != nil {
					return err
				}
				continue
			}
			k, ok := fileKeys[name]
			if !ok {
				return fmt.Errorf("config file %s line %d: unknown key %s (known keys: %s): %w", path, kn.Line, name, known, memdir.ErrInvalid)
			}
			if vn.Kind != yaml.ScalarNode {
				return fmt.Errorf("config file %s line %d: key %s must have a single value: %w", path, vn.Line, name, memdir.ErrInvalid)
			}
			if vn.Tag == "!!null" {
				continue
			}
			*k.field(c) = Setting{Value: strings.TrimSpace(vn.Value), Source: fmt.Sprintf("%s:%d", path, vn.Line)}
		}
		return nil
	}
	return walk("", root)
}
