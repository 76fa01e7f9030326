package team

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A pull reads the server's full GET into a file under the sync state
// (the spool) and then walks it twice: once to check that it is one whole,
// well-formed response and to learn its keys and where each value lies,
// then key by key to bring each entry in, reading one value at a time. So
// the client's memory does not grow with the repository, a truncated or
// malformed response writes nothing, a retry starts the download over,
// and the server is not kept waiting while the entries are written.

// spoolName is the spool's name in the repository's sync state directory.
// Pulls of one repository hold its lock, so one name is enough, and a
// spool left behind by a crash is overwritten by the next pull.
const spoolName = "pull.json"

// spooler is a Repos that can write a full GET's body to a file instead of
// decoding it ([Remote]).
type spooler interface {
	getTo(ctx context.Context, repo string, opts *GetOptions, spool *os.File) (etag string, err error)
}

// entrySource is the entries of one full read of the server, walked key
// by key.
type entrySource struct {
	// keys are sorted, with the team index last, so that the index can
	// see which files exist when it is merged.
	keys []string
	// has reports whether the read holds key.
	has func(key string) bool
	// content returns the content of one of keys.
	content func(key string) (string, error)
}

func indexLast(keys []string) {
	sort.Strings(keys)
	sort.SliceStable(keys, func(i, j int) bool { return keys[j] == IndexKey && keys[i] != IndexKey })
}

// mapSource walks entries held in memory (a Repos that is not a Remote).
func mapSource(entries map[string]string) *entrySource {
	keys := sortedKeys(entries)
	indexLast(keys)
	return &entrySource{
		keys:    keys,
		has:     func(k string) bool { _, ok := entries[k]; return ok },
		content: func(k string) (string, error) { return entries[k], nil },
	}
}

// fetchEntries reads the server's current entries for a pull or a push
// that must merge: through a spool in st's directory when the Repos can
// write one, else into memory. The Data holds the metadata and the entry
// checksums (computed when the server sent none); its Content.Entries may
// be nil. done removes the spool. Errors are those of [Repos.Get]
// (ErrNotModified, ErrNotFound, ...), or a malformed response.
func (c *Client) fetchEntries(ctx context.Context, st *syncState, opts *GetOptions) (d *Data, src *entrySource, done func(), err error) {
	sp, ok := c.repos.(spooler)
	if !ok {
		d, err := c.repos.Get(ctx, c.repo, opts)
		if err != nil {
			return nil, nil, nil, err
		}
		return d, mapSource(d.Content.Entries), func() {}, nil
	}
	name := filepath.Join(st.dir, spoolName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pull %s: %w", c.repo, err)
	}
	done = func() {
		f.Close()
		os.Remove(name)
	}
	etag, err := sp.getTo(ctx, c.repo, opts, f)
	if err == nil {
		d, src, err = readSpool(f)
		if err != nil {
			err = fmt.Errorf("team memory server: malformed response to GET %s: %w", c.repo, err)
		}
	}
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	if d.Checksum == "" {
		d.Checksum = etag
	}
	return d, src, done, nil
}

// spooledEntry is where one entry's value lies in the spool: start and
// end delimit its JSON text, which may begin with the ":" before it and
// white space.
type spooledEntry struct{ start, end int64 }

// readSpool checks the full GET body in f and returns its data (without
// Content.Entries) and a source that reads each value from f when asked.
func readSpool(f *os.File) (*Data, *entrySource, error) {
	d, offsets, err := scanFullBody(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, nil, err
	}
	if d.Content.EntryChecksums == nil {
		// A server that sends no entryChecksums (memdir's always does):
		// the client's view of the server is what it sent.
		d.Content.EntryChecksums = make(map[string]string, len(offsets))
		for k, e := range offsets {
			v, err := readValue(f, e.start, e.end)
			if err != nil {
				return nil, nil, err
			}
			d.Content.EntryChecksums[k] = EntryChecksum(v)
		}
	}
	keys := make([]string, 0, len(offsets))
	for k := range offsets {
		keys = append(keys, k)
	}
	indexLast(keys)
	return d, &entrySource{
		keys: keys,
		has:  func(k string) bool { _, ok := offsets[k]; return ok },
		content: func(k string) (string, error) {
			e := offsets[k]
			return readValue(f, e.start, e.end)
		},
	}, nil
}

// readValue decodes the JSON string that lies between start and end of r.
func readValue(r io.ReaderAt, start, end int64) (string, error) {
	b := make([]byte, end-start)
	if _, err := r.ReadAt(b, start); err != nil {
		return "", fmt.Errorf("read the spooled response: %w", err)
	}
	b = bytes.TrimLeft(b, " \t\r\n:")
	if v, ok := unquote(b); ok {
		return v, nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("read the spooled response: %w", err)
	}
	return v, nil
}

// unquote decodes the JSON string literal b as json.Unmarshal does, about
// four times faster: it copies the runs between escapes whole. ok is
// false for what it leaves to json.Unmarshal: anything but a well-formed
// literal of valid UTF-8.
func unquote(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	b = b[1 : len(b)-1]
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\\')
		if i < 0 {
			i = len(b)
		}
		run := b[:i]
		if !utf8.Valid(run) || bytes.IndexByte(run, '"') >= 0 || hasControl(run) {
			return "", false
		}
		out = append(out, run...)
		b = b[i:]
		if len(b) == 0 {
			break
		}
		if len(b) < 2 {
			return "", false
		}
		switch c := b[1]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(b[2:])
			if r < 0 {
				return "", false
			}
			n := 6
			if utf16.IsSurrogate(r) {
				// A pair makes one rune; anything else is U+FFFD, and
				// what follows is read on its own, as encoding/json does.
				r2 := rune(-1)
				if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
					r2 = hex4(b[8:])
				}
				if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
					r, n = d, 12
				} else {
					r = unicode.ReplacementChar
				}
			}
			out = utf8.AppendRune(out, r)
			b = b[n:]
			continue
		default:
			return "", false
		}
		b = b[2:]
	}
	return string(out), true
}

// hex4 parses four hex digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// scanFullBody reads a GET body token by token, as json.Unmarshal into a
// Data would (field names matched without regard to case, unknown fields
// and null values ignored), without keeping the entries' contents: it
// returns where each value lies instead. Unlike json.Unmarshal it refuses
// a key that appears twice in entries.
func scanFullBody(r io.Reader) (*Data, map[string]spooledEntry, error) {
	dec := json.NewDecoder(r)
	d := &Data{}
	offsets := map[string]spooledEntry{}
	ok, err := openObject(dec, "the response")
	if err != nil {
		return nil, nil, err
	}
	for ok && dec.More() {
		name, err := nextName(dec)
		if err != nil {
			return nil, nil, err
		}
		var dst any
		switch {
		case strings.EqualFold(name, "organizationId"):
			dst = &d.OrganizationID
		case strings.EqualFold(name, "repo"):
			dst = &d.Repo
		case strings.EqualFold(name, "version"):
			dst = &d.Version
		case strings.EqualFold(name, "lastModified"):
			dst = &d.LastModified
		case strings.EqualFold(name, "checksum"):
			dst = &d.Checksum
		case strings.EqualFold(name, "content"):
			if err := scanContent(dec, d, offsets); err != nil {
				return nil, nil, err
			}
			continue
		default:
			if err := skipValue(dec); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := dec.Decode(dst); err != nil {
			return nil, nil, fmt.Errorf("field %q: %w", name, err)
		}
	}
	if ok {
		if err := closeObject(dec, "the response"); err != nil {
			return nil, nil, err
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the response object")
	}
	return d, offsets, nil
}

// scanContent reads the content object.
func scanContent(dec *json.Decoder, d *Data, offsets map[string]spooledEntry) error {
	ok, err := openObject(dec, "content")
	if err != nil || !ok {
		return err
	}
	for dec.More() {
		name, err := nextName(dec)
		if err != nil {
			return err
		}
		switch {
		case strings.EqualFold(name, "entries"):
			err = scanEntries(dec, offsets)
		case strings.EqualFold(name, "entryChecksums"):
			err = dec.Decode(&d.Content.EntryChecksums)
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return fmt.Errorf("content.%s: %w", name, err)
		}
	}
	return closeObject(dec, "content")
}

// scanEntries reads the entries object, one value at a time.
func scanEntries(dec *json.Decoder, offsets map[string]spooledEntry) error {
	ok, err := openObject(dec, "entries")
	if err != nil || !ok {
		return err
	}
	for dec.More() {
		key, err := nextName(dec)
		if err != nil {
			return err
		}
		start := dec.InputOffset()
		// The value is only checked here (the decoder's scanner validates
		// it); it is decoded when its key's turn comes.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("entry %s: %w", KeyRef(key), err)
		}
		if raw[0] != '"' && string(raw) != "null" {
			return fmt.Errorf("entry %s is not a string", KeyRef(key))
		}
		if _, dup := offsets[key]; dup {
			return fmt.Errorf("entry %s appears twice", KeyRef(key))
		}
		offsets[key] = spooledEntry{start: start, end: dec.InputOffset()}
	}
	return closeObject(dec, "entries")
}

// openObject reads the "{" that opens an object, or a null (ok false).
func openObject(dec *json.Decoder, what string) (ok bool, err error) {
	t, err := dec.Token()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	switch t {
	case json.Delim('{'):
		return true, nil
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("%s is %v, want an object", what, t)
}

func closeObject(dec *json.Decoder, what string) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if t != json.Delim('}') {
		return fmt.Errorf("%s: unexpected %v", what, t)
	}
	return nil
}

func nextName(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	name, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("unexpected %v where a field name belongs", t)
	}
	return name, nil
}

// skipValue reads and drops one value, token by token, so that a large
// unknown field is never held whole.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
