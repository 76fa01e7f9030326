package memdir

import "errors"

// Sentinel errors that callers branch on. Everything else is a wrapped error whose
// message names the file or key involved.
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
