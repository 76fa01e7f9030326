package memdir

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memdir/memdir/secrets"
)

// ErrSecret reports that content bound for team memory looks like it holds
// a credential. The error is a *SecretError; it also matches ErrInvalid, so
// callers that only know the general sentinels treat it as bad input.
var ErrSecret = errors.New("content contains potential secrets")

// SecretError refuses a write into team/: the content matched the secret
// scanner. It names the file and the kinds of secret found, never the secret
// itself or any part of it, so it is safe to print, log and send to a model.
type SecretError struct {
	// Path is the file that would have been written, relative to the memory
	// directory (e.g. "team/deploy.md"), or as the caller shows it.
	Path string
	// Findings are the scanner's matches: rule ids and labels only.
	Findings []secrets.Match
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("%s: content contains potential secrets (%s) and cannot be written to team memory; "+
		"team memory is shared with all repository collaborators, so nothing was written: remove the sensitive content and try again",
		e.Path, secrets.Labels(e.Findings))
}

// Is makes errors.Is(err, ErrSecret) and errors.Is(err, ErrInvalid) true.
func (e *SecretError) Is(target error) bool { return target == ErrSecret || target == ErrInvalid }

// RuleIDs returns the ids of the rules that matched, in scanner order.
func (e *SecretError) RuleIDs() []string {
	ids := make([]string, len(e.Findings))
	for i, m := range e.Findings {
		ids[i] = m.RuleID
	}
	return ids
}

// IsTeamPath reports whether rel, a clean slash path relative to a memory
// directory, is team/ or inside it: a file there is synced to every
// collaborator of the repository.
func IsTeamPath(rel string) bool {
	return rel == TeamDirName || strings.HasPrefix(rel, TeamDirName+"/")
}

// CheckTeamContent returns a *SecretError when content, about to be written
// to the team-memory file shown as name, holds something the secret scanner
// recognises, and nil otherwise. Every write into team/ (Save, Rename, Undo,
// the memory tool, 'memdir edit') asks it first, so a credential is refused
// before it is written rather than skipped later by push.
func CheckTeamContent(name string, content []byte) error {
	if found := secrets.Scan(string(content)); len(found) > 0 {
		return &SecretError{Path: name, Findings: found}
	}
	return nil
}

// checkTeamWrite is CheckTeamContent for a write to rel, which is checked
// only when it lies under team/.
func checkTeamWrite(rel string, content []byte) error {
	if !IsTeamPath(rel) {
		return nil
	}
	return CheckTeamContent(rel, content)
}
