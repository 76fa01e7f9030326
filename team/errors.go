package team

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/memdir/memdir"
)

// Sentinel errors. Callers branch on them with errors.Is; the [Handler] maps
// them to HTTP statuses and the [Remote] maps statuses back, through one
// table (status.go), so a Store and a Remote fail the same way.
var (
	// ErrNotFound: the repository has no team memory yet, the version does
	// not exist, or the token is unknown.
	ErrNotFound = fmt.Errorf("no team memory found: %w", memdir.ErrNotFound)
	// ErrNotModified: a conditional read found the checksum the caller
	// already has.
	ErrNotModified = errors.New("team memory not modified")
	// ErrConflict: the repository changed since the caller read the checksum
	// it sent as If-Match. Refresh the hashes and retry.
	ErrConflict = fmt.Errorf("team memory changed on the server since it was read (checksum mismatch): %w", memdir.ErrExists)
	// ErrTooManyEntries: the update would leave more entries than the server
	// allows. The error is a *TooManyEntriesError carrying the limit.
	ErrTooManyEntries = fmt.Errorf("too many team memory entries: %w", memdir.ErrInvalid)
	// ErrTooLarge: a request body or an entry exceeds the size limits.
	ErrTooLarge = fmt.Errorf("team memory request too large: %w", memdir.ErrInvalid)
	// ErrSecret: an entry looks like it holds a credential. The error is a
	// *SecretError naming the rules, never the value.
	ErrSecret = fmt.Errorf("content contains potential secrets: %w", memdir.ErrInvalid)
	// ErrInvalidKey: a team memory key is unsafe or malformed. The error is
	// a *KeyError naming the key and the reason.
	ErrInvalidKey = fmt.Errorf("invalid team memory key: %w", memdir.ErrInvalid)
	// ErrInvalidRepo: a repository name is not "owner/name".
	ErrInvalidRepo = fmt.Errorf("invalid repository name (want owner/name): %w", memdir.ErrInvalid)
	// ErrUnauthorized: the request carries no token, or an unknown or
	// revoked one.
	ErrUnauthorized = errors.New("missing, unknown or revoked team memory token")
	// ErrForbidden: the token is valid but not for this repository or
	// operation (a read-only token on PUT).
	ErrForbidden = errors.New("token not allowed for this repository or operation")
	// ErrMethodNotAllowed: the endpoint does not support the HTTP method.
	ErrMethodNotAllowed = errors.New("method not allowed")
	// ErrUnavailable: the server or its database is not available (5xx,
	// 429, or a readiness failure). The client retries these.
	ErrUnavailable = errors.New("team memory server unavailable")
)

// TooManyEntriesError is the structured form of [ErrTooManyEntries].
type TooManyEntriesError struct {
	Max      int // the server's limit
	Received int // the number of entries the update would have left
}

func (e *TooManyEntriesError) Error() string {
	return fmt.Sprintf("too many team memory entries: the update would leave %d, the server allows %d; remove entries or ask the server operator to raise --max-entries", e.Received, e.Max)
}

func (e *TooManyEntriesError) Unwrap() error { return ErrTooManyEntries }

// KeyError reports an unsafe or malformed team memory key. Key holds the
// key itself for callers; Error names it only by [KeyRef] (a prefix and a
// hash), because a refused key is untrusted text that may hold a secret
// and error messages end up in responses and logs.
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("team memory key %s: %s", KeyRef(e.Key), e.Reason)
}

func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// SecretFinding names one entry and the first secret rule it matched. It
// never holds the matched value.
type SecretFinding struct {
	Key    string `json:"key"`
	RuleID string `json:"rule_id"`
	Label  string `json:"label"`
}

// SecretError is the structured form of [ErrSecret].
type SecretError struct {
	Findings []SecretFinding
}

func (e *SecretError) Error() string {
	var b strings.Builder
	b.WriteString("content contains potential secrets and cannot be written to team memory, which every collaborator of the repository can read: ")
	for i, f := range e.Findings {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", f.Key, f.Label)
	}
	b.WriteString("; remove the sensitive content and try again")
	return b.String()
}

func (e *SecretError) Unwrap() error { return ErrSecret }

// Labels returns the distinct rule labels of the findings, sorted.
func (e *SecretError) Labels() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range e.Findings {
		if !seen[f.Label] {
			seen[f.Label] = true
			out = append(out, f.Label)
		}
	}
	sort.Strings(out)
	return out
}

// TooLargeError is the structured form of [ErrTooLarge]: an entry (Key set)
// or a whole request body (Key empty) over its limit.
type TooLargeError struct {
	Key   string
	Size  int
	Limit int
}

func (e *TooLargeError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("team memory request body of %d bytes is over the %d-byte limit for several entries; send fewer entries per request", e.Size, e.Limit)
	}
	return fmt.Sprintf("team memory entry %q is %d bytes, over the %d-byte limit; split the file", e.Key, e.Size, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// StatusError is an error status a [Remote] received. Err is the domain
// error the status maps to (ErrConflict, a *TooManyEntriesError, ...), so
// errors.Is and errors.As see through it.
type StatusError struct {
	StatusCode int
	Message    string // the server's message
	Err        error
}

func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("team memory server answered %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), msg)
}

func (e *StatusError) Unwrap() error { return e.Err }

// IsPermanent reports whether retrying err later, unchanged, cannot help:
// the watcher stops pushing after such a failure. As in Claude Code, that
// is any 4xx status other than 409 and 429, and a missing token or
// repository; from a store, the domain errors behind those statuses.
func IsPermanent(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 400 && se.StatusCode < 500 && se.StatusCode != http.StatusConflict && se.StatusCode != http.StatusTooManyRequests
	}
	for _, target := range []error{ErrUnauthorized, ErrForbidden, ErrConflict, ErrTooManyEntries, ErrTooLarge, ErrSecret, ErrInvalidKey, ErrInvalidRepo, ErrNoToken, ErrNoRepo} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Configuration errors of a client; both are permanent.
var (
	ErrNoToken = fmt.Errorf("no team memory token: %w", memdir.ErrInvalid)
	ErrNoRepo  = fmt.Errorf("no repository: pass --repo owner/name (it defaults to the github.com remote \"origin\" of the project): %w", memdir.ErrInvalid)
)

func sortFindings(fs []SecretFinding) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Key != fs[j].Key {
			return fs[i].Key < fs[j].Key
		}
		return fs[i].RuleID < fs[j].RuleID
	})
}
