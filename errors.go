package memdir

import (
	"fmt"

	"github.com/memdir/memdir/internal/errs"
)

// Sentinel errors that callers branch on. Everything else is a wrapped error whose
// message names the file or key involved. They are defined in a leaf
// package, so that packages below the root (checkpoint) return the same
// values.
var (
	// ErrNotFound reports that a memory, index entry or directory does not exist.
	ErrNotFound = errs.ErrNotFound
	// ErrExists reports that a write would overwrite something it must not.
	ErrExists = errs.ErrExists
	// ErrInvalid reports unusable input: a bad memory name, frontmatter, path or option.
	ErrInvalid = errs.ErrInvalid
	// ErrLocked reports that another process holds a lock that is not stale.
	ErrLocked = errs.ErrLocked
	// ErrDisabled reports that auto memory is turned off by the environment or settings.
	ErrDisabled = errs.ErrDisabled
)

// MemoryNotFoundError reports a reference (a name or a path) that matches
// no memory of the directory Dir. It wraps ErrNotFound.
type MemoryNotFoundError struct {
	Ref string
	Dir string
}

func (e *MemoryNotFoundError) Error() string {
	return fmt.Sprintf("memory %q: %v in %s", e.Ref, ErrNotFound, e.Dir)
}

func (e *MemoryNotFoundError) Unwrap() error { return ErrNotFound }

// RunNotFoundError reports a journal run id that matches no run. It wraps
// ErrNotFound.
type RunNotFoundError struct{ ID string }

func (e *RunNotFoundError) Error() string { return fmt.Sprintf("run %q: %v", e.ID, ErrNotFound) }

func (e *RunNotFoundError) Unwrap() error { return ErrNotFound }
