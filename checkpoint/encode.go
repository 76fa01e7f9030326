package checkpoint

import (
	"maps"
	"slices"
	"strconv"
	"time"
)

// appendSnapshotEntry appends the JSON encoding of e, byte for byte what
// encoding/json writes for it, without reflection: a snapshot of 1,000 files
// is 1,000 Backup values, and encoding/json calls each one's MarshalJSON and
// then re-scans what it returned. It reports false, having appended nothing,
// when e holds anything it does not write the same way (a string needing
// escapes, a time encoding/json would refuse); the caller then uses
// encoding/json.
func appendSnapshotEntry(buf []byte, e *snapshotEntry) ([]byte, bool) {
	start := len(buf)
	fail := func() ([]byte, bool) { return buf[:start], false }
	ok := true
	str := func(s string) {
		if !plainJSON(s) {
			ok = false
			return
		}
		buf = append(buf, '"')
		buf = append(buf, s...)
		buf = append(buf, '"')
	}
	tm := func(t time.Time) {
		// time.Time.MarshalJSON refuses years outside 0..9999.
		if y := t.Year(); y < 0 || y > 9999 {
			ok = false
			return
		}
		buf = append(buf, '"')
		buf = t.AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, '"')
	}
	buf = append(buf, `{"type":`...)
	str(e.Type)
	buf = append(buf, `,"messageId":`...)
	str(e.MessageID)
	buf = append(buf, `,"snapshot":{"messageId":`...)
	str(e.Snapshot.MessageID)
	buf = append(buf, `,"trackedFileBackups":`...)
	if e.Snapshot.TrackedFileBackups == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '{')
		keys := e.keys
		if len(keys) != len(e.Snapshot.TrackedFileBackups) {
			keys = slices.Sorted(maps.Keys(e.Snapshot.TrackedFileBackups))
		}
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			b := e.Snapshot.TrackedFileBackups[k]
			str(k)
			buf = append(buf, `:{"backupFileName":`...)
			if b.Name == "" {
				buf = append(buf, "null"...)
			} else {
				str(b.Name)
			}
			buf = append(buf, `,"version":`...)
			buf = strconv.AppendInt(buf, int64(b.Version), 10)
			buf = append(buf, `,"backupTime":`...)
			tm(b.Time.UTC())
			buf = append(buf, '}')
			if !ok {
				return fail()
			}
		}
		buf = append(buf, '}')
	}
	buf = append(buf, `,"timestamp":`...)
	tm(e.Snapshot.Timestamp)
	buf = append(buf, `},"isSnapshotUpdate":`...)
	buf = strconv.AppendBool(buf, e.IsSnapshotUpdate)
	buf = append(buf, `,"sequence":`...)
	buf = strconv.AppendInt(buf, int64(e.Sequence), 10)
	buf = append(buf, '}')
	if !ok {
		return fail()
	}
	return buf, true
}

// plainJSON reports whether encoding/json writes s as itself between quotes:
// printable ASCII without the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
