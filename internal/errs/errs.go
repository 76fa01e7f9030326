// Package errs holds the sentinel errors that memdir's callers branch on,
// in a package of their own so that a package which needs them but not the
// rest of the root (checkpoint, and through it the lean memdir-checkpoint
// binary) can use the very same values. The root re-exports each as
// memdir.ErrX; errors.Is matches either name.
package errs

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound reports that a memory, index entry or directory does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists reports that a write would overwrite something it must not.
	ErrExists = errors.New("already exists")
	// ErrInvalid reports unusable input: a bad memory name, frontmatter, path or option.
	ErrInvalid = errors.New("invalid")
	// ErrLocked reports that another process holds a lock that is not stale.
	ErrLocked = errors.New("locked by another process")
	// ErrDisabled reports that auto memory is turned off by the environment or settings.
	ErrDisabled = errors.New("auto memory is disabled")
)

// Unlabelled returns an error whose message is format's alone and that
// errors.Is matches to sentinel: for a message the sentinel's text would
// end as a stray label ("…; give more of it: invalid").
func Unlabelled(sentinel error, format string, args ...any) error {
	return &unlabelled{err: fmt.Errorf(format, args...), sentinel: sentinel}
}

type unlabelled struct{ err, sentinel error }

func (e *unlabelled) Error() string        { return e.err.Error() }
func (e *unlabelled) Unwrap() error        { return e.err }
func (e *unlabelled) Is(target error) bool { return target == e.sentinel }
