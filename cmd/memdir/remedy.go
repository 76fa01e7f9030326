package main

import (
	"errors"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/checkpointcmd"
	"github.com/memdir/memdir/promote"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/team"
)

// The library packages' errors say what went wrong; what to run about it
// is memdir's to say, and is added here, where the errors are printed.
// Each remedy finds in an error the one it advises on and returns that
// error's text (as the whole message holds it) and the text with the
// advice; advise puts the advice in the message in its place.

// remedy finds the error it advises on in err: fact is its text, advised
// that text with the advice, and ok false when err holds no such error.
type remedy func(err error) (fact, advised string, ok bool)

var remedies = []remedy{
	func(err error) (string, string, bool) {
		var e *memdir.MemoryNotFoundError
		return asFact(err, &e, func() string { return e.Error() + " (see 'memdir list')" })
	},
	func(err error) (string, string, bool) {
		var e *memdir.RunNotFoundError
		return asFact(err, &e, func() string { return e.Error() + " (see 'memdir log')" })
	},
	func(err error) (string, string, bool) {
		var e *review.HeldError
		return asFact(err, &e, func() string {
			return e.Error() + "; a person can run 'memdir review show " + e.ID + "', then accept or reject it"
		})
	},
	func(err error) (string, string, bool) {
		var e *promote.NoItemError
		return asFact(err, &e, func() string { return beforeTail(e.Error(), memdir.ErrNotFound, " (see 'memdir promote')") })
	},
	func(err error) (string, string, bool) {
		var e *provider.MissingKeyError
		return asFact(err, &e, func() string { return beforeTail(e.Error(), memdir.ErrInvalid, " (see 'memdir config')") })
	},
	sentinelFact(team.ErrNoConflict, memdir.ErrNotFound, " (see 'memdir sync status')"),
	sentinelFact(team.ErrNoToken, memdir.ErrInvalid, ": pass --token or set MEMDIR_TEAM_TOKEN (create one with 'memdir serve token create')"),
}

// asFact is a remedy's errors.As: when err holds a *E, fact is its text
// and advised what with returns.
func asFact[E error](err error, target *E, with func() string) (fact, advised string, ok bool) {
	if !errors.As(err, target) {
		return "", "", false
	}
	return (*target).Error(), with(), true
}

// sentinelFact is the remedy for a sentinel error whose text ends with
// ": " and that of tail, the sentinel it wraps: the advice goes before
// that.
func sentinelFact(sentinel, tail error, advice string) remedy {
	return func(err error) (string, string, bool) {
		if !errors.Is(err, sentinel) {
			return "", "", false
		}
		return sentinel.Error(), beforeTail(sentinel.Error(), tail, advice), true
	}
}

// beforeTail puts advice in fact before its ending ": " and the text of
// tail (the sentinel it wraps), or at its end when it does not end so.
func beforeTail(fact string, tail error, advice string) string {
	end := ": " + tail.Error()
	if !strings.HasSuffix(fact, end) {
		return fact + advice
	}
	return strings.TrimSuffix(fact, end) + advice + end
}

// adviseMsg returns msg, the message of err, with memdir's advice on the
// errors err holds (the Remedy of memdir's cli.Program).
func adviseMsg(err error, msg string) string {
	for _, r := range remedies {
		if fact, advised, ok := r(err); ok && !strings.Contains(msg, advised) {
			msg = strings.Replace(msg, fact, advised, 1)
		}
	}
	return checkpointcmd.Remedy(err, msg)
}

// advise returns err's message with memdir's advice, for the places that
// print an error themselves, or nil's "".
func advise(err error) string {
	if err == nil {
		return ""
	}
	return adviseMsg(err, err.Error())
}

// advisedError is err with memdir's advice in its message, for errors
// that become another's text (a team pull's skipped entry).
type advisedError struct{ err error }

func (e advisedError) Error() string { return advise(e.err) }
func (e advisedError) Unwrap() error { return e.err }

// withAdvice returns err with memdir's advice in its message, nil for nil.
func withAdvice(err error) error {
	if err == nil {
		return nil
	}
	return advisedError{err}
}

// indexWarning is st.Warning() with memdir's advice, "" when the index
// fits.
func indexWarning(st memdir.IndexStatus) string {
	if w := st.Warning(); w != "" {
		return w + indexAdvice
	}
	return ""
}

// indexAdvice follows the warning of an index agents do not see all of.
const indexAdvice = " ('memdir doctor --fix --compact' can shorten it)"

// adviseFindings adds memdir's advice to the findings doctor reports.
func adviseFindings(fs []doctor.Finding) {
	for i := range fs {
		if fs[i].Kind == doctor.FindIndexOverLimit {
			fs[i].Message += indexAdvice
		}
	}
}
