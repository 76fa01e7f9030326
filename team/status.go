package team

import (
	"errors"
	"net/http"

	"github.com/memdir/memdir"
)

// statusTable maps domain errors to HTTP statuses and error types, in
// both directions: the Handler picks the first entry whose error matches
// (errors.Is), so specific errors come before the general ones they wrap;
// the Remote picks the last entry with the status it received (the most
// general one), refined by the error details where a status has several
// meanings (413, 400).
var statusTable = []struct {
	err     error
	status  int
	errType string
}{
	{ErrNotModified, http.StatusNotModified, ""},
	{ErrUnauthorized, http.StatusUnauthorized, "authentication_error"},
	{ErrForbidden, http.StatusForbidden, "permission_error"},
	{ErrNotFound, http.StatusNotFound, "not_found_error"},
	{ErrMethodNotAllowed, http.StatusMethodNotAllowed, "method_not_allowed_error"},
	{ErrConflict, http.StatusPreconditionFailed, "conflict_error"},
	{ErrTooManyEntries, http.StatusRequestEntityTooLarge, "request_too_large"},
	{ErrTooLarge, http.StatusRequestEntityTooLarge, "request_too_large"},
	{errUnsupportedMedia, http.StatusUnsupportedMediaType, "invalid_request_error"},
	{ErrSecret, http.StatusUnprocessableEntity, "secret_detected_error"},
	{ErrInvalidKey, http.StatusBadRequest, "invalid_request_error"},
	{ErrInvalidRepo, http.StatusBadRequest, "invalid_request_error"},
	{memdir.ErrInvalid, http.StatusBadRequest, "invalid_request_error"},
	{ErrUnavailable, http.StatusServiceUnavailable, "overloaded_error"},
}

var errUnsupportedMedia = errors.New("the request body must be application/json")

// statusOf returns the status and error type for err; unknown errors are
// 500.
func statusOf(err error) (int, string) {
	for _, e := range statusTable {
		if errors.Is(err, e.err) {
			return e.status, e.errType
		}
	}
	return http.StatusInternalServerError, "api_error"
}

// errorOf returns the domain error for a status the Remote received, using
// the details of the error body where they say more.
func errorOf(status int, info *ErrorInfo) error {
	d := info.Details
	if d != nil {
		switch {
		case d.ErrorCode == CodeTooManyEntries:
			return &TooManyEntriesError{Max: d.MaxEntries, Received: d.ReceivedEntries}
		case d.ErrorCode == CodeSecretDetected:
			return &SecretError{Findings: d.Secrets}
		case d.ErrorCode == CodeEntryTooLarge || d.ErrorCode == CodeBodyTooLarge:
			return &TooLargeError{Key: d.Key}
		case d.ErrorCode == CodeInvalidKey:
			return &KeyError{Key: d.Key, Reason: info.Message}
		}
	}
	if status == http.StatusTooManyRequests || status >= 500 {
		return ErrUnavailable
	}
	for i := len(statusTable) - 1; i >= 0; i-- {
		if statusTable[i].status == status {
			return statusTable[i].err
		}
	}
	return errors.New(http.StatusText(status))
}
