// Package migrate loads the numbered SQL migrations that the team store
// adapters embed. Applying them is the adapter's job, because locking
// differs: SQLite serialises with an immediate transaction, PostgreSQL with
// an advisory lock, so two server replicas starting at once apply each
// migration exactly once.
package migrate

import (
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema change, identified by the number its file name
// starts with ("0001_init.sql" is version 1).
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// TableName is the table, in each database, that records applied versions.
const TableName = "memdir_schema_migrations"

// Load reads every *.sql file at the top of fsys, sorted by version. Two
// files with the same version are an error.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
