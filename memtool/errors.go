package memtool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/memdir/memdir"
)

// Error is a failed command. Its text (Msg) is written for the model and is
// what a caller sends back as the tool result with is_error set. Err is the
// cause: one of memdir's sentinels (ErrNotFound, ErrExists, ErrInvalid) or an
// underlying error, for callers that branch with errors.Is.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errorf(cause error, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Err: cause}
}

// ioError reports an unexpected filesystem failure. It keeps only the system
// error text ("permission denied"), never the host path, which the model must
// not learn.
func ioError(what, path string, err error) error {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		cause = le.Err
	}
	return &Error{Msg: fmt.Sprintf("Could not %s %s: %v", what, path, cause), Err: err}
}

// Messages shared by several commands, in the reference SDK helpers' words
// (see the package comment).
func errNotExistLong(path string) error {
	return errorf(memdir.ErrNotFound, "The path %s does not exist. Please provide a valid path.", path)
}

func errNotExist(path string) error {
	return errorf(memdir.ErrNotFound, "The path %s does not exist", path)
}

func errNotFile(path string) error {
	return errorf(memdir.ErrInvalid, "The path %s is not a file.", path)
}
