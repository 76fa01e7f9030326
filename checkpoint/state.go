package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/framed"
)

// StateName is the name of the session's compacted state file inside its
// file-history directory: what a new process needs to take the next
// snapshot, so that it does not have to read the whole log. Like LogName it
// cannot collide with a backup name, which always holds "@v".
//
// The file is a cache of the log and never the only copy of anything: it
// names the log it describes (logId, inode and the byte offset it covers),
// and a reader that finds it missing, damaged, of another version or
// describing another log reads the log instead and writes it afresh.
const StateName = "memdir-checkpoints.state"

// stateFormat is the state file's magic and format version. A file of any
// other version is ignored (and replaced), never an error: the log is the
// truth. Versions 1 and 2 were text with a CRC-32 line at the end, no frame;
// they fail on the magic.
var stateFormat = framed.Format{Magic: "MDCKPTST", Version: 3}

// The state file's sections.
const (
	stateHeaderSection uint32 = 1 // stateHeader, as JSON
	stateFilesSection  uint32 = 2 // the file lines
)

// fingerprint is what lstat showed of a tracked file at a moment when its
// content was known to equal backup's and its last change was already
// refreshAfter in the past. While lstat shows exactly this again, the file
// is unchanged: any write since would have given it a later change time
// (see refreshAfter), so one lstat replaces the lstat of the backup and,
// in the worst case, a comparison of content.
type fingerprint struct {
	backup string
	id     fileID
	size   int64
	mode   fs.FileMode
	mtime  time.Time
	ctime  time.Time
}

// fingerprintOf records fi for backup, or reports false where it would not
// be sound: no file identity on this system, or a last change too recent for
// a later write to be sure to move the change time (now is the wall clock
// when the file's content was found equal to the backup's).
func fingerprintOf(fi fs.FileInfo, backup string, now time.Time) (fingerprint, bool) {
	id := statID(fi)
	if id == (fileID{}) || backup == "" || now.Sub(lastChange(fi)) <= refreshAfter {
		return fingerprint{}, false
	}
	return fingerprint{backup: backup, id: id, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime(), ctime: changeTime(fi)}, true
}

// matches reports whether fi shows the file exactly as fingerprinted, and the
// fingerprint is for backup.
func (f fingerprint) matches(fi fs.FileInfo, backup string) bool {
	return f.backup == backup && f.id == statID(fi) && f.size == fi.Size() && f.mode == fi.Mode() &&
		f.mtime.Equal(fi.ModTime()) && f.ctime.Equal(changeTime(fi))
}

func (h *History) statePath() string { return filepath.Join(h.dir, StateName) }

// stateHeader is the state file's first section.
type stateHeader struct {
	// The log this describes: its header's logId, its file identity and
	// the end of the last line folded in.
	LogID  string `json:"logId"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Offset int64  `json:"offset"`

	Cwd      string `json:"cwd"`
	Sequence int    `json:"sequence"`
	Older    int    `json:"older"` // retained snapshots before the latest
	// Starts has, for each retained snapshot, oldest first, the offset of
	// the log line that added it, the entries before that line, its
	// sequence and 1 when the line's own sequence field says so (see
	// entryStart).
	Starts     [][4]int64 `json:"starts"`
	Crossed    bool       `json:"crossed"`
	Entries    int        `json:"entries"`
	LiveTracks int        `json:"liveTracks"`

	// The latest snapshot, whose files follow one per line; absent when
	// the log holds no snapshot yet.
	Latest *struct {
		MessageID string    `json:"messageId"`
		Sequence  int       `json:"sequence"`
		Time      time.Time `json:"timestamp"`
	} `json:"latest,omitempty"`
	Files int `json:"files"`
}

// encodeState renders lf as a state file: a framed file (internal/framed)
// of two sections, the header as JSON and one line per file of the latest
// snapshot in tracking path order (see appendFileLines). The frame's
// checksums make a torn or damaged file known as such.
func encodeState(lf *logFile) ([]byte, error) {
	st := lf.st
	hdr := stateHeader{
		LogID: st.logID, Dev: lf.id.dev, Ino: lf.id.ino, Offset: lf.offset,
		Cwd: st.cwd, Sequence: st.sequence, Entries: st.entries, LiveTracks: st.liveTracks,
		Starts: make([][4]int64, 0, len(st.starts)), Crossed: st.crossed,
	}
	for _, s := range st.starts {
		exact := int64(0)
		if s.exact {
			exact = 1
		}
		hdr.Starts = append(hdr.Starts, [4]int64{s.offset, int64(s.index), int64(s.seq), exact})
	}
	last := st.latest()
	var keys []string
	if last != nil {
		hdr.Older = st.retained() - 1
		hdr.Latest = &struct {
			MessageID string    `json:"messageId"`
			Sequence  int       `json:"sequence"`
			Time      time.Time `json:"timestamp"`
		}{last.MessageID, last.Sequence, last.Time.UTC()}
		keys = lf.latestKeys()
		hdr.Files = len(keys)
	}
	line, err := json.Marshal(hdr)
	if err != nil {
		return nil, err
	}
	w := stateFormat.NewWriter(nil)
	w.Grow(len(line) + len(keys)*160 + 128)
	w.Add(stateHeaderSection, line)
	w.AddFunc(stateFilesSection, func(b []byte) ([]byte, error) { return appendFileLines(b, lf, last, keys), nil })
	return w.Finish()
}

// appendFileLines appends a line for each of keys, files of the snapshot
// last. A file line is tab-separated: the tracking path, the backup name
// ("" for a null entry), each as itself or, when it holds a control
// character, a quote or a backslash, Go-quoted, the version, the backup
// time as Unix seconds and nanoseconds, then either "-" or the fingerprint
// as device, inode, size, mode, and the modification and change times as
// seconds and nanoseconds. Times are numbers, not RFC 3339 text, as a new
// process reads every line before its first lstat and writes them all
// again after.
func appendFileLines(b []byte, lf *logFile, last *Snapshot, keys []string) []byte {
	for _, k := range keys {
		e := last.Files[k]
		b = appendField(b, k)
		b = append(b, '\t')
		b = appendField(b, e.Name)
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(e.Version), 10)
		b = append(b, '\t')
		b = appendUnixTime(b, e.Time)
		b = append(b, '\t')
		if fp, ok := lf.fps[k]; ok && fp.backup == e.Name && e.Exists() {
			b = strconv.AppendUint(b, fp.id.dev, 10)
			b = append(b, ' ')
			b = strconv.AppendUint(b, fp.id.ino, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, fp.size, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(fp.mode), 10)
			b = append(b, ' ')
			b = appendUnixTime(b, fp.mtime)
			b = append(b, ' ')
			b = appendUnixTime(b, fp.ctime)
		} else {
			b = append(b, '-')
		}
		b = append(b, '\n')
	}
	return b
}

// appendUnixTime appends t as its Unix seconds and nanoseconds, separated by
// a space.
func appendUnixTime(b []byte, t time.Time) []byte {
	b = strconv.AppendInt(b, t.Unix(), 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, int64(t.Nanosecond()), 10)
}

// decodeState parses a state file into a logFile whose state holds only the
// latest snapshot (older counts the rest). Every path and name is checked as
// strictly as when read from the log. The result's strings share data's
// bytes, so the caller must not change data afterwards.
func decodeState(data []byte) (*logFile, error) {
	f, err := stateFormat.Parse(data)
	if err != nil {
		return nil, err
	}
	head, err := f.Section(stateHeaderSection)
	if err != nil {
		return nil, err
	}
	lines, err := f.Section(stateFilesSection)
	if err != nil {
		return nil, err
	}
	var hdr stateHeader
	if err := json.Unmarshal(head, &hdr); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	switch {
	case hdr.LogID == "" || !filepath.IsAbs(hdr.Cwd):
		return nil, errors.New("no logId or no absolute cwd")
	case hdr.Offset <= 0 || hdr.Sequence < 0 || hdr.Older < 0 || hdr.Entries < 0 || hdr.LiveTracks < 0 || hdr.Files < 0:
		return nil, errors.New("a negative count")
	case hdr.Latest == nil && (hdr.Older != 0 || hdr.Files != 0):
		return nil, errors.New("files without a latest snapshot")
	case hdr.Older >= maxSnapshots:
		return nil, fmt.Errorf("%d older snapshots, over the %d kept", hdr.Older, maxSnapshots)
	case len(lines) > 0 && lines[len(lines)-1] != '\n':
		return nil, errors.New("the last file line does not end in a newline")
	}
	st := &state{cwd: hdr.Cwd, logID: hdr.LogID, sequence: hdr.Sequence, older: hdr.Older, entries: hdr.Entries, liveTracks: hdr.LiveTracks, crossed: hdr.Crossed}
	if err := decodeStarts(st, &hdr); err != nil {
		return nil, err
	}
	lf := &logFile{st: st, id: fileID{dev: hdr.Dev, ino: hdr.Ino}, offset: hdr.Offset, fps: make(map[string]fingerprint, hdr.Files), saved: true}
	// One string for all the file lines: the keys and names decoded are
	// slices of it rather than a string each, and it is data's bytes, not a
	// copy of them.
	rest := unsafe.String(unsafe.SliceData(lines), len(lines))
	if hdr.Latest == nil {
		if rest != "" {
			return nil, errors.New("file lines without a latest snapshot")
		}
		return lf, nil
	}
	if err := checkMessageID(hdr.Latest.MessageID); err != nil {
		return nil, err
	}
	if hdr.Latest.Sequence < 1 || hdr.Latest.Sequence > hdr.Sequence {
		return nil, fmt.Errorf("latest sequence %d outside 1..%d", hdr.Latest.Sequence, hdr.Sequence)
	}
	// The count is bounded by the file's size, so a header cannot make
	// this allocate more than the file holds lines for.
	if hdr.Files > strings.Count(rest, "\n") {
		return nil, fmt.Errorf("%d file lines, header says %d", strings.Count(rest, "\n"), hdr.Files)
	}
	s := &Snapshot{MessageID: hdr.Latest.MessageID, Sequence: hdr.Latest.Sequence, Time: hdr.Latest.Time, Files: make(map[string]Backup, hdr.Files)}
	keys := make([]string, 0, hdr.Files)
	for i := 0; rest != ""; i++ {
		line, after, _ := strings.Cut(rest, "\n") // lines end in a newline
		rest = after
		if i == hdr.Files {
			return nil, fmt.Errorf("more file lines than the %d the header says", hdr.Files)
		}
		key, b, fp, err := decodeFileLine(line)
		if err != nil {
			return nil, fmt.Errorf("file line %d: %w", i+1, err)
		}
		// Strictly increasing, as encodeState writes them: no key is
		// listed twice, and the keys come out sorted.
		if i > 0 && key <= keys[i-1] {
			return nil, fmt.Errorf("file line %d: %q out of order or listed twice", i+1, key)
		}
		keys = append(keys, key)
		s.Files[key] = b
		if fp != nil {
			lf.fps[key] = *fp
		}
	}
	if len(keys) != hdr.Files {
		return nil, fmt.Errorf("%d file lines, header says %d", len(keys), hdr.Files)
	}
	st.snapshots = []*Snapshot{s}
	lf.keys, lf.keysOf = keys, s
	return lf, nil
}

// decodeStarts checks the header's starts against its counts: one per
// retained snapshot, in log order, the last being the latest snapshot's.
func decodeStarts(st *state, hdr *stateHeader) error {
	want := 0
	if hdr.Latest != nil {
		want = hdr.Older + 1
	}
	if len(hdr.Starts) != want {
		return fmt.Errorf("%d snapshot starts for %d snapshots", len(hdr.Starts), want)
	}
	prev := entryStart{offset: 0, index: -1, seq: 0}
	for _, s := range hdr.Starts {
		e := entryStart{offset: s[0], index: int(s[1]), seq: int(s[2]), exact: s[3] == 1}
		if e.offset <= prev.offset || e.offset >= hdr.Offset || e.index <= prev.index || e.index >= hdr.Entries || e.seq <= prev.seq || e.seq > hdr.Sequence || s[3] < 0 || s[3] > 1 {
			return fmt.Errorf("snapshot start %v out of order or range", s)
		}
		st.starts = append(st.starts, e)
		prev = e
	}
	if hdr.Latest != nil && prev.seq != hdr.Latest.Sequence {
		return fmt.Errorf("the last snapshot start has sequence %d, the latest snapshot %d", prev.seq, hdr.Latest.Sequence)
	}
	return nil
}

// decodeFileLine parses one file line; key and name are slices of line.
func decodeFileLine(line string) (string, Backup, *fingerprint, error) {
	var f [5]string
	rest := line
	for i := range f {
		var more bool
		f[i], rest, more = strings.Cut(rest, "\t")
		if more != (i < len(f)-1) {
			return "", Backup{}, nil, fmt.Errorf("%d fields, want %d", strings.Count(line, "\t")+1, len(f))
		}
	}
	key, err := field(f[0])
	if err != nil {
		return "", Backup{}, nil, fmt.Errorf("tracking path: %w", err)
	}
	if err := checkTrackingPath(key); err != nil {
		return "", Backup{}, nil, err
	}
	name, err := field(f[1])
	if err != nil {
		return "", Backup{}, nil, fmt.Errorf("backup name: %w", err)
	}
	if name != "" {
		if err := checkSegment(name, "backup file name"); err != nil {
			return "", Backup{}, nil, err
		}
	}
	v, ok := decimal(f[2])
	if !ok || v < 1 {
		return "", Backup{}, nil, fmt.Errorf("version %q is not a positive number", f[2])
	}
	t, rest, ok := cutUnixTime(f[3])
	if !ok || rest != "" {
		return "", Backup{}, nil, fmt.Errorf("backup time %q is not seconds and nanoseconds", f[3])
	}
	b := Backup{Name: name, Version: int(v), Time: t.UTC()}
	if f[4] == "-" {
		return key, b, nil, nil
	}
	if name == "" {
		return "", Backup{}, nil, errors.New("bad fingerprint")
	}
	fp := &fingerprint{backup: name}
	rest = f[4]
	var nums [4]int64
	for i := range nums {
		num, after, more := strings.Cut(rest, " ")
		if !more {
			return "", Backup{}, nil, errors.New("bad fingerprint")
		}
		rest = after
		if i < 2 {
			// Device and inode numbers are unsigned: read them as such,
			// and keep their bits.
			u, err := strconv.ParseUint(num, 10, 64)
			if err != nil {
				return "", Backup{}, nil, fmt.Errorf("fingerprint: %w", err)
			}
			nums[i] = int64(u)
			continue
		}
		n, ok := signedDecimal(num)
		if !ok {
			return "", Backup{}, nil, fmt.Errorf("fingerprint: %q is not a number", num)
		}
		nums[i] = n
	}
	fp.id = fileID{dev: uint64(nums[0]), ino: uint64(nums[1])}
	fp.size, fp.mode = nums[2], fs.FileMode(nums[3])
	if fp.mtime, rest, ok = cutUnixTime(rest); !ok || rest == "" || rest[0] != ' ' {
		return "", Backup{}, nil, errors.New("bad fingerprint")
	}
	if fp.ctime, rest, ok = cutUnixTime(rest[1:]); !ok || rest != "" {
		return "", Backup{}, nil, errors.New("bad fingerprint")
	}
	return key, b, fp, nil
}

// cutUnixTime parses the "<seconds> <nanoseconds>" at the start of s, as
// appendUnixTime writes it, and returns what follows. Nanoseconds are 0 to
// 999999999.
func cutUnixTime(s string) (time.Time, string, bool) {
	secs, rest, ok := strings.Cut(s, " ")
	if !ok {
		return time.Time{}, "", false
	}
	nanos := rest
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		nanos, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	sec, ok := signedDecimal(secs)
	if !ok {
		return time.Time{}, "", false
	}
	ns, ok := decimal(nanos)
	if !ok || ns > 999_999_999 {
		return time.Time{}, "", false
	}
	return time.Unix(sec, ns), rest, true
}

// decimal parses a non-negative decimal number of at most 18 digits (so
// that it cannot overflow), with no sign and no leading "+".
func decimal(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// signedDecimal is decimal with an optional leading "-".
func signedDecimal(s string) (int64, bool) {
	if len(s) > 0 && s[0] == '-' {
		n, ok := decimal(s[1:])
		return -n, ok
	}
	return decimal(s)
}

// appendField appends s as a state file field: itself when that is
// unambiguous, else quoted.
func appendField(b []byte, s string) []byte {
	if s == "" || s == "-" {
		return strconv.AppendQuote(b, s)
	}
	// Bytes, not runes: every character that needs quoting is ASCII, and
	// no byte of a multi-byte (or invalid) sequence is below 0x80.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	return append(b, s...)
}

func field(f string) (string, error) {
	if len(f) > 0 && f[0] == '"' {
		return strconv.Unquote(f)
	}
	if len(f) == 0 {
		return "", errors.New("empty field")
	}
	return f, nil
}

// loadState reads the state file; nil when it is missing or unusable, which
// only costs the caller a read of the whole log.
func (h *History) loadState() *logFile {
	path := h.statePath()
	f, fi, err := openRegular(path, nil, false)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.logger.Debug("ignoring checkpoint state file", "path", path, "err", err)
		}
		return nil
	}
	defer f.Close()
	if fi.Size() > 256<<20 {
		h.logger.Debug("ignoring checkpoint state file", "path", path, "err", "too large")
		return nil
	}
	data := make([]byte, fi.Size())
	n, err := f.ReadAt(data, 0)
	if int64(n) != fi.Size() {
		h.logger.Debug("ignoring checkpoint state file", "path", path, "err", err)
		return nil
	}
	h.stats.logRead.Add(int64(n))
	lf, err := decodeState(data)
	if err != nil {
		h.logger.Debug("ignoring checkpoint state file", "path", path, "err", err)
		return nil
	}
	return lf
}

// saveState writes lf to the state file, atomically. It is called holding
// the session lock, after lf's entries are durable in the log, so the file
// never covers more of the log than the log holds. A failure is only logged:
// the next process reads the log instead.
//
// It is not synced: whatever a crash leaves at the name (the state before,
// this one, or a file torn by a rename that reached the disk before the
// data) covers no more than the already durable log, and a torn one fails
// its frame's checksums and is read as missing. Two fsyncs were a tenth
// of a snapshot's CPU.
func (h *History) saveState(lf *logFile) {
	data, err := encodeState(lf)
	if err == nil {
		err = atomicfile.ReplaceNoSync(h.statePath(), data, 0o600)
	}
	if err != nil {
		h.logger.Debug("could not write checkpoint state file", "path", h.statePath(), "err", err)
		return
	}
	h.stats.logWritten.Add(int64(len(data)))
	lf.saved = true
}
