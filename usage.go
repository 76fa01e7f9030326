package memdir

import (
	"os"
	"path/filepath"
	"time"

	"github.com/memdir/memdir/usage"
)

// Uses returns the directory's use log, nil when counting is off
// (Options.NoUses).
func (d *Dir) Uses() *usage.Log { return d.uses }

// defaultUses returns the use log Options ask for (see Options.Uses).
func defaultUses(dir string, opts *Options, j *Journal, now func() time.Time) (*usage.Log, error) {
	switch {
	case opts.NoUses:
		return nil, nil
	case opts.Uses != nil:
		return opts.Uses, nil
	case opts.Journal != nil:
		return usage.New(filepath.Clean(j.Dir())+".uses.log", &usage.Options{Now: now}), nil
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p, err := usage.DefaultPath(dir, lookup)
	if err != nil {
		return nil, err
	}
	return usage.New(p, &usage.Options{Now: now}), nil
}
