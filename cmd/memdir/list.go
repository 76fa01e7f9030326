package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/usage"
)

var listCmd = &cli.Command{
	Name:  "list",
	Args:  "[--team] [--type T] [--sort new|used|unused] [--limit N] [--json]",
	Short: "list memories, newest first (or by use)",
	Long: `List shows every memory in the directory, newest first: its type, age, path
and description, read from the first 30 lines of each file as Claude Code
reads them. Team memories (team/) are included and shown with their path;
--team shows only them. Files whose frontmatter is missing or broken are
listed too, and counted in a note; 'memdir doctor' says what is wrong.

Claude Code's recall looks only at the 200 newest files; list shows them all
unless --limit is given.

USES is how many times the memory was surfaced to an agent (recall, the
Claude Code hook, MCP, the UI's search, a memory-tool view), counted in the
use log under the state directory, never in the memory file. --sort used
puts the most used first; --sort unused the least used first (never used,
then the longest unused). A memory renamed with 'memdir mv' starts again at
zero. 'memdir doctor' suggests memories unused for long; nothing is deleted.

` + locationHelp + `

Examples:
  memdir list
  memdir list --type feedback
  memdir list --sort unused --limit 10
  memdir list --json | jq -r '.memories[].path'`,
	Setup: cli.Setup(runList),
}

// listOptions holds the flag values of memdir list.
type listOptions struct {
	lf     locationFlags
	typ    string
	limit  int
	sortBy string
	asJSON bool
}

func (o *listOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, true)
	fs.StringVar(&o.typ, "type", "", "show only memories of type `T` (user, feedback, project, reference, or none for untyped)")
	fs.IntVar(&o.limit, "limit", 0, "show at most `N` memories (0: all)")
	fs.StringVar(&o.sortBy, "sort", "new", "order: `new` (newest first), used (most used first) or unused (least used first)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func runList(ctx context.Context, env *cli.Env, o *listOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("list takes no arguments")
	}
	if o.typ != "" && o.typ != "none" && memdir.ParseType(o.typ) == "" {
		return cli.Usagef("--type %q: want user, feedback, project, reference or none", o.typ)
	}
	if o.sortBy != "new" && o.sortBy != "used" && o.sortBy != "unused" {
		return cli.Usagef("--sort %q: want new, used or unused", o.sortBy)
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	prog := env.Progress("list", o.asJSON)
	prog.Step("reading memories", 0, 0)
	res, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	prog.Stop()
	if err != nil {
		return err
	}
	now := env.Now()
	var shown []memdir.Header
	for _, h := range res.Memories {
		if o.lf.team && !strings.HasPrefix(h.Path, teamPrefix) {
			continue
		}
		if o.typ == "none" && h.Type != "" || o.typ != "" && o.typ != "none" && string(h.Type) != o.typ {
			continue
		}
		shown = append(shown, h)
	}
	uses, err := d.Uses().Stats(ctx)
	if err != nil {
		return err
	}
	sortByUse(shown, uses, o.sortBy)
	matched := len(shown)
	if o.limit > 0 && len(shown) > o.limit {
		shown = shown[:o.limit]
	}
	problems := countSkipped(res.Problems)
	if o.asJSON {
		items := make([]listItem, 0, len(shown))
		for _, h := range shown {
			u := uses.Get(h.Path)
			items = append(items, listItem{h, memdir.MemoryAge(h.ModTime, now), u.Uses, u.LastUsed})
		}
		out := &listJSON{
			Dir: d.Path(), Memories: items, Matched: matched, Total: res.Total, Problems: res.Problems, UsesSince: uses.Since,
		}
		var write func(io.Writer) error // encoding/json, which reports what the own encoder cannot write
		if listJSONFast(out) {
			write = func(w io.Writer) error { return writeListJSON(w, out) }
		}
		return cli.WriteOwnJSON(env.Stdout, out, write)
	}
	if res.Total == 0 && !d.Exists() {
		fmt.Fprintf(env.Stderr, "No memories yet: %s does not exist. Save one with 'memdir save'.\n", d.Path())
		return nil
	}
	rows := [][]string{{"TYPE", "AGE", "USES", "LAST USED", "PATH", "DESCRIPTION"}}
	for _, h := range shown {
		t := string(h.Type)
		if t == "" {
			t = "-"
		}
		u := uses.Get(h.Path)
		last := "never"
		if !u.LastUsed.IsZero() {
			last = memdir.MemoryAge(u.LastUsed, now)
		}
		rows = append(rows, []string{t, memdir.MemoryAge(h.ModTime, now), strconv.Itoa(u.Uses), last, h.Path, h.Description})
	}
	if err := writeTable(env.Stdout, rows, &tableOptions{Width: tableWidth(env)}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%d of %s in %s", len(shown), cli.Plural(res.Total, "memory", "memories"), d.Path())
	if problems > 0 {
		fmt.Fprintf(env.Stderr, "; %s (run 'memdir doctor')", cli.Plural(problems, "file could not be read", "files could not be read"))
	}
	fmt.Fprintln(env.Stderr)
	return nil
}

// sortByUse orders memories (newest first already) for --sort: "used" puts
// the most used first, then the most recently used; "unused" the least
// used first, then the longest unused. Ties keep the newest-first order.
func sortByUse(hs []memdir.Header, uses *usage.Stats, by string) {
	if by == "new" {
		return
	}
	slices.SortStableFunc(hs, func(a, b memdir.Header) int {
		ua, ub := uses.Get(a.Path), uses.Get(b.Path)
		c := cmp.Compare(ub.Uses, ua.Uses)
		if c == 0 {
			c = ub.LastUsed.Compare(ua.LastUsed)
		}
		if by == "unused" {
			c = -c
		}
		return c
	})
}

func countSkipped(ps []memdir.Problem) int {
	n := 0
	for _, p := range ps {
		if p.Skipped {
			n++
		}
	}
	return n
}

// listItem is one memory in list --json.
type listItem struct {
	memdir.Header
	Age      string    `json:"age"`
	Uses     int       `json:"uses"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// listJSON is the output of list --json. Its fields are in alphabetical
// order, as the map it once was printed them; writeListJSON follows it.
type listJSON struct {
	Dir       string           `json:"dir"`
	Matched   int              `json:"matched"`
	Memories  []listItem       `json:"memories"`
	Problems  []memdir.Problem `json:"problems"`
	Total     int              `json:"total"`
	UsesSince time.Time        `json:"uses_since,omitzero"`
}

// listJSONFast reports whether writeListJSON can write out: not when a
// time is one encoding/json would refuse (a year past 9999), which it
// must then report.
func listJSONFast(out *listJSON) bool {
	for i := range out.Memories {
		it := &out.Memories[i]
		if !jsonTimeOK(it.ModTime) || !jsonTimeOK(it.LastUsed) {
			return false
		}
	}
	return jsonTimeOK(out.UsesSince)
}

// writeListJSON writes what cli.WriteJSON writes for out, byte for byte
// (cli.WriteOwnJSON checks it in tests), but appends each memory's fields
// itself: reflection, and WriteJSON's second pass over the output to
// indent it, cost more than reading the files at 20,000 memories (see
// docs/performance.md). It needs listJSONFast(out).
func writeListJSON(w io.Writer, out *listJSON) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 64<<10)
	b = append(b, "{\n  \"dir\": "...)
	b = appendJSONString(b, out.Dir)
	b = append(b, ",\n  \"matched\": "...)
	b = strconv.AppendInt(b, int64(out.Matched), 10)
	b = append(b, ",\n  \"memories\": ["...)
	for i := range out.Memories {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendListItem(b, &out.Memories[i])
		if len(b) >= 60<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if len(out.Memories) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"problems\": "...)
	probs, err := json.MarshalIndent(out.Problems, "  ", "  ")
	if err != nil {
		return err
	}
	b = append(b, probs...)
	b = append(b, ",\n  \"total\": "...)
	b = strconv.AppendInt(b, int64(out.Total), 10)
	if !out.UsesSince.IsZero() {
		b = append(b, ",\n  \"uses_since\": "...)
		b = appendJSONTime(b, out.UsesSince)
	}
	b = append(b, "\n}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// appendListItem appends a memory as writeJSON indents it in the list.
func appendListItem(b []byte, it *listItem) []byte {
	h := &it.Header
	field := func(name string) {
		b = append(b, ",\n      \""...)
		b = append(b, name...)
		b = append(b, "\": "...)
	}
	b = append(b, "\n    {\n      \"path\": "...)
	b = appendJSONString(b, h.Path)
	field("abs_path")
	b = appendJSONString(b, h.AbsPath)
	field("mtime")
	b = appendJSONTime(b, h.ModTime)
	field("size")
	b = strconv.AppendInt(b, h.Size, 10)
	for _, f := range [...]struct{ name, v string }{
		{"name", h.Name}, {"description", h.Description}, {"type", string(h.Type)}, {"raw_type", h.RawType},
	} {
		if f.v != "" {
			field(f.name)
			b = appendJSONString(b, f.v)
		}
	}
	field("has_frontmatter")
	b = strconv.AppendBool(b, h.HasFrontmatter)
	field("age")
	b = appendJSONString(b, it.Age)
	field("uses")
	b = strconv.AppendInt(b, int64(it.Uses), 10)
	if !it.LastUsed.IsZero() {
		field("last_used")
		b = appendJSONTime(b, it.LastUsed)
	}
	return append(b, "\n    }"...)
}

// jsonTimeOK reports whether time.Time's MarshalJSON accepts t: a year
// within 0-9999 and a zone offset of whole minutes.
func jsonTimeOK(t time.Time) bool {
	_, off := t.Zone()
	y := t.Year()
	return y >= 0 && y <= 9999 && off%60 == 0
}

// appendJSONTime appends t as time.Time's MarshalJSON does (see jsonTimeOK).
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendJSONString appends s quoted as encoding/json does without HTML
// escaping: control characters, quotes and backslashes escaped, invalid
// UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
