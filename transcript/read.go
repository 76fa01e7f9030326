package transcript

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// maxLineBytes bounds one JSONL line. Real lines reach several MB (a
// prompt snapshot holds the whole system prompt; tool results are big);
// anything past this is skipped rather than held in memory. Tests lower it.
var maxLineBytes = 256 << 20

// ReadFile reads a transcript file in either format (see [Detect]).
func ReadFile(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	t, err := ReadAny(f)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", path, err)
	}
	return t, nil
}

// Read reads a Claude Code JSONL session log. Lines that are blank, not
// JSON objects, cut short (a session still being written) or too long are
// skipped and listed in Skipped; records of unknown types are counted in
// Types and otherwise ignored. Only a failure to read r is an error.
func Read(r io.Reader) (*Transcript, error) {
	b := newBuilder()
	n, err := scanLines(r, b.line, func(n int) {
		b.skip(n, fmt.Sprintf("line longer than %d bytes", maxLineBytes))
	})
	if err != nil {
		return nil, err
	}
	t := b.finish()
	t.Lines = n
	return t, nil
}

// scanLines calls line for each line of r, numbered from 1 and trimmed of
// surrounding whitespace; complete is false for a last line with no
// newline, which a writer may still be in the middle of. A line longer
// than maxLineBytes is not held in memory: tooLong gets its number
// instead. It returns the number of lines; only a failure to read r is an
// error. Every reader of a JSON-lines format shares it.
func scanLines(r io.Reader, line func(n int, text []byte, complete bool), tooLong func(n int)) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than the reader's buffer
	lineNo := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxLineBytes {
				lineNo++
				tooLong(lineNo)
				if err := discardLine(br); err != nil && !errors.Is(err, io.EOF) {
					return 0, fmt.Errorf("read transcript: %w", err)
				}
				long = long[:0]
				continue
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read transcript: %w", err)
		}
		text := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			text = long
		}
		if len(text) > 0 {
			lineNo++
			complete := text[len(text)-1] == '\n'
			line(lineNo, bytes.TrimSpace(text), complete)
		}
		long = long[:0]
		if err != nil { // io.EOF
			return lineNo, nil
		}
	}
}

// decodeLine decodes one trimmed line of a JSON-lines file into v; when it
// cannot, it lists the line in t.Skipped with the reason (blank, not a JSON
// object, invalid JSON, which on a last line with no newline is a partial
// line a writer may still be in the middle of) and returns false.
func decodeLine(t *Transcript, n int, text []byte, complete bool, v any) bool {
	if n == 1 {
		text = bytes.TrimPrefix(text, []byte("\uFEFF"))
	}
	if len(text) == 0 {
		t.skip(n, "blank")
		return false
	}
	err := errNotObject
	if text[0] == '{' {
		err = json.Unmarshal(text, v)
	}
	if err != nil {
		reason := "invalid JSON: " + err.Error()
		if !complete {
			reason = "partial last line: " + reason
		}
		t.skip(n, reason)
		return false
	}
	return true
}

func (t *Transcript) skip(n int, reason string) {
	t.Skipped = append(t.Skipped, SkippedLine{Line: n, Reason: reason})
}

// discardLine skips the rest of an over-long line.
func discardLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// builder collects records and rebuilds the conversation from them.
type builder struct {
	t       *Transcript
	records []*record          // conversation records, in file order
	byUUID  map[string]*record // first record with each UUID
	leafFix []*record          // last-prompt and summary records
	usage   map[string]llm.Usage
	solo    llm.Usage // usage of responses without ids to dedupe by
}

func newBuilder() *builder {
	return &builder{
		t:      &Transcript{Format: FormatJSONL, Types: make(map[string]int)},
		byUUID: make(map[string]*record),
		usage:  make(map[string]llm.Usage),
	}
}

func (b *builder) skip(line int, reason string) { b.t.skip(line, reason) }

// line takes one trimmed line. complete is false for a last line with no
// newline, which a writer may still be in the middle of.
func (b *builder) line(n int, line []byte, complete bool) {
	if n == 1 {
		line = bytes.TrimPrefix(line, []byte("\uFEFF"))
	}
	if len(line) == 0 {
		b.skip(n, "blank")
		return
	}
	r, err := parseRecord(line)
	if err != nil {
		reason := "invalid JSON: " + err.Error()
		if !complete {
			reason = "partial last line: " + reason
		}
		b.skip(n, reason)
		return
	}
	r.line = n
	b.add(r)
}

func (b *builder) add(r *record) {
	typ := r.Type
	if typ == "" {
		typ = "(none)"
	}
	b.t.Types[typ]++
	if b.t.SessionID == "" && r.SessionID != "" {
		b.t.SessionID = r.SessionID
	}
	switch r.Type {
	case "user", "assistant":
		if r.Message == nil {
			b.skip(r.line, r.Type+" record without a message")
			return
		}
	case "last-prompt", "summary":
		if r.LeafUUID != "" {
			b.leafFix = append(b.leafFix, r)
		}
	}
	if r.Type == "assistant" && r.Message.Usage != nil {
		b.addUsage(r)
	}
	if r.UUID == "" {
		return
	}
	b.records = append(b.records, r)
	if _, dup := b.byUUID[r.UUID]; !dup {
		b.byUUID[r.UUID] = r
	}
}

// addUsage counts an API response once, keyed as ccusage does by message
// id and request id; the last record of a response wins, since streaming
// writes the final counts last.
func (b *builder) addUsage(r *record) {
	u := r.Message.Usage.usage()
	if r.Message.ID == "" || r.RequestID == "" {
		b.solo.Add(u)
		return
	}
	b.usage[r.Message.ID+":"+r.RequestID] = u
}

func (b *builder) finish() *Transcript {
	t := b.t
	t.usage = b.solo
	for _, u := range b.usage {
		t.usage.Add(u)
	}
	leaf := b.leaf()
	if leaf == nil {
		t.after = map[string]int{}
		return t
	}
	t.Leaf = leaf.UUID
	t.Orphan = "" // leaf() may have walked another chain
	b.build(b.chain(leaf))
	return t
}

// leaf picks where the main chain ends: the newest non-sidechain record
// with a UUID, unless a last-prompt or summary record written after it
// names a record on another branch (after a rewind, the newest record can
// sit on the abandoned branch). A named record that the newest one
// descends from is not taken: that would drop the newest records.
func (b *builder) leaf() *record {
	var newest *record
	for i := len(b.records) - 1; i >= 0; i-- {
		if !b.records[i].IsSidechain {
			newest = b.records[i]
			break
		}
	}
	if newest == nil {
		return nil
	}
	for i := len(b.leafFix) - 1; i >= 0; i-- {
		f := b.leafFix[i]
		if f.line < newest.line {
			break
		}
		r, ok := b.byUUID[f.LeafUUID]
		if !ok {
			continue
		}
		if slices.Contains(b.chain(newest), r) {
			return newest
		}
		return r
	}
	return newest
}

// chain climbs from leaf to the root through parentUuid, or across a
// compaction through the boundary's logicalParentUuid, and returns the
// records root first. It stops at a cycle or at a parent the file does not
// hold.
func (b *builder) chain(leaf *record) []*record {
	var out []*record
	seen := make(map[string]bool)
	for r := leaf; r != nil && !seen[r.UUID]; {
		seen[r.UUID] = true
		out = append(out, r)
		parent := r.ParentUUID
		if parent == "" && isBoundary(r) {
			parent = r.LogicalParentUUID
		}
		if parent == "" {
			break
		}
		next, ok := b.byUUID[parent]
		if !ok {
			b.t.Orphan = parent
			break
		}
		r = next
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func isBoundary(r *record) bool { return r.Type == "system" && r.Subtype == "compact_boundary" }

// build turns the chain's records into messages, merging the records of a
// split assistant response into one message.
func (b *builder) build(chain []*record) {
	t := b.t
	t.after = make(map[string]int, len(chain))
	byMessageID := make(map[string]int) // message.id → index in t.messages
	for _, r := range chain {
		switch {
		case isBoundary(r):
			bd := Boundary{UUID: r.UUID, LogicalParentUUID: r.LogicalParentUUID, Timestamp: r.time(), Index: len(t.messages), Line: r.line}
			if m := r.CompactMetadata; m != nil {
				bd.Trigger, bd.PreTokens = m.Trigger, m.PreTokens
			}
			t.boundaries = append(t.boundaries, bd)
		case r.Type == "user" || r.Type == "assistant":
			content, dropped, err := decodeContent(r.Message.Content)
			if err != nil {
				b.skip(r.line, r.Type+" record: "+err.Error())
				break
			}
			if r.Type == "assistant" && r.Message.ID != "" {
				if i, ok := byMessageID[r.Message.ID]; ok {
					m := &t.messages[i]
					m.Content = append(m.Content, content...)
					m.Dropped += dropped
					m.UUID = r.UUID
					m.PartUUIDs = append(m.PartUUIDs, r.UUID)
					if r.Message.Usage != nil {
						m.Usage = r.Message.Usage.usage()
					}
					t.after[r.UUID] = i + 1
					continue
				}
				byMessageID[r.Message.ID] = len(t.messages)
			}
			t.messages = append(t.messages, b.message(r, content, dropped))
		}
		t.after[r.UUID] = len(t.messages)
	}
	// A skipped record can leave Skipped out of line order.
	sortSkipped(t.Skipped)
}

func (b *builder) message(r *record, content []llm.Block, dropped int) Message {
	role := llm.RoleUser
	if r.Type == "assistant" {
		role = llm.RoleAssistant
	}
	m := Message{
		Message:                   llm.Message{Role: role, Content: content},
		UUID:                      r.UUID,
		ParentUUID:                r.ParentUUID,
		PartUUIDs:                 []string{r.UUID},
		Timestamp:                 r.time(),
		Line:                      r.line,
		IsMeta:                    r.IsMeta,
		IsCompactSummary:          r.IsCompactSummary,
		IsVisibleInTranscriptOnly: r.IsVisibleInTranscriptOnly,
		IsSidechain:               r.IsSidechain,
		Compactions:               len(b.t.boundaries),
		Dropped:                   dropped,
	}
	if role == llm.RoleAssistant {
		m.MessageID, m.RequestID, m.Model = r.Message.ID, r.RequestID, r.Message.Model
		m.Usage = r.Message.Usage.usage()
	}
	return m
}

func sortSkipped(s []SkippedLine) {
	slices.SortStableFunc(s, func(a, b SkippedLine) int { return cmp.Compare(a.Line, b.Line) })
}

// Detect tells the format from the first bytes of a file: a JSON list
// starts with '[', a JSON-lines file with '{'. Leading whitespace and a
// UTF-8 byte order mark are ignored. The first line's keys tell the
// JSON-lines formats apart: Codex CLI's rollout lines are {"timestamp",
// "type", "payload"}, Gemini CLI's chat file opens with a header holding
// "projectHash" (or with a message of type "gemini", or a "$set"), and
// anything else is read as Claude Code's. It returns "" when neither
// fits.
func Detect(head []byte) Format {
	head = bytes.TrimPrefix(head, []byte("\uFEFF"))
	head = bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(head) == 0:
		return FormatJSONL
	case head[0] == '{':
		return sniffJSONL(head)
	case head[0] == '[':
		return FormatJSON
	}
	return ""
}

// sniffJSONL tells the JSON-lines format from the keys of the first
// object, as far as head holds it (a Codex session_meta line is long, but
// its payload comes after the keys that tell).
func sniffJSONL(head []byte) Format {
	dec := json.NewDecoder(bytes.NewReader(head))
	if _, err := dec.Token(); err != nil {
		return FormatJSONL
	}
	keys := map[string]string{} // key → its value, when a string
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			break
		}
		keys[key] = ""
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			keys[key] = s
		}
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("payload") && has("type") && !has("uuid"):
		return FormatCodex
	case has("projectHash") || has("$set") || keys["type"] == "gemini",
		has("id") && keys["type"] == "user" && !has("uuid") && !has("message"):
		return FormatGemini
	}
	return FormatJSONL
}

// ReadAny reads a transcript in any of the formats, choosing the reader
// with [Detect]. An empty input is an empty JSONL transcript.
func ReadAny(r io.Reader) (*Transcript, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(4096)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	switch Detect(head) {
	case FormatJSONL:
		return Read(br)
	case FormatJSON:
		return ReadMessagesJSON(br)
	case FormatCodex:
		return ReadCodex(br)
	case FormatGemini:
		return ReadGemini(br)
	}
	first := strings.TrimSpace(string(head[:min(len(head), 40)]))
	return nil, fmt.Errorf("unrecognised transcript format (starts %q): want a JSON list of messages, or the JSON lines of Claude Code, Codex CLI or Gemini CLI: %w", first, memdir.ErrInvalid)
}
