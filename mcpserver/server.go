package mcpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
)

// Name is the server's implementation name, as clients show it.
const Name = "memdir"

// Options configure a server. The zero value (or nil) serves the directory
// with lexical recall, no team memory and in-memory session state.
type Options struct {
	// Location is where the directory was found. When set, the memory
	// prompt can point at the project's session transcripts (its search
	// argument); nil serves the directory on its own.
	Location *locate.Location
	// Model chooses among recall's manifest; nil means the ranking alone.
	// A failing model falls back to the ranking, and recall's result says
	// so.
	Model llm.Model
	// ManifestTokens is recall's selector manifest budget, as
	// recall.Options.ManifestTokens (0: Claude Code's own cost).
	ManifestTokens int
	// Embedder and EmbedCache add semantic similarity to recall's ranking
	// (see recall.Options); nil Embedder ranks lexically.
	Embedder     llm.Embedder
	EmbedCache   *recall.EmbedCache
	EmbedOptions *recall.EmbedOptions
	// RecallIndex is the lexical index recall reuses between calls (see
	// recall.NewIndex and recall.DefaultIndexPath). Nil builds
	// one for the directory, kept in memory for the server's life.
	RecallIndex *recall.Index
	// Team turns team memory on: save accepts team, the team MEMORY.md is a
	// resource and the prompt defaults to team mode.
	Team bool
	// Sessions records what recall surfaced in each session; nil means a
	// record of the server's own. Share one between servers that serve the
	// same sessions.
	Sessions *Sessions
	// Version is reported to clients; empty means "dev".
	Version string
	// Now is the clock for memory ages; nil means time.Now.
	Now func() time.Time
	// Logger receives the server's debug logs and the SDK's; nil discards.
	Logger *slog.Logger
}

// server holds what the handlers share.
type server struct {
	dir      *memdir.Dir
	opts     Options
	index    *recall.Index
	sessions *Sessions
	log      *slog.Logger
	// filling is set while a background fill of memory vectors runs.
	filling atomic.Bool
}

// New returns an MCP server for the memory directory d, with the memory,
// recall, save and forget tools, the MEMORY.md and memory-file resources, the
// memory prompt and instructions for the model. The directory need not exist;
// the first write creates it.
func New(d *memdir.Dir, opts *Options) *mcp.Server {
	s := &server{dir: d}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.index = s.opts.RecallIndex
	if s.index == nil {
		s.index = recall.NewIndex(d.Path(), nil)
	}
	s.sessions = s.opts.Sessions
	if s.sessions == nil {
		s.sessions = NewSessions()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "memdir agent memory", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: s.instructions(),
		Logger:       s.log,
		// No logging capability: logs go to the injected logger, never to
		// the client.
		Capabilities: &mcp.ServerCapabilities{},
	})
	srv.AddReceivingMiddleware(dropNullArguments)
	s.addTools(srv)
	s.addResources(srv)
	s.addPrompts(srv)
	return srv
}

// NewHandler serves srv over streamable HTTP, for mounting at a path such as
// /mcp. Each client session keeps its own recall record until it ends or has
// been idle for an hour. Responses are plain JSON rather than event streams,
// as no tool sends progress. Requests through a loopback address must name a
// loopback host (the SDK's DNS-rebinding protection), and a request with an
// Origin header other than the server's own gets 403 Forbidden, as the MCP
// specification requires (see checkOrigin).
func NewHandler(srv *mcp.Server, logger *slog.Logger) http.Handler {
	return checkOrigin(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		JSONResponse:   true,
		SessionTimeout: time.Hour,
		Logger:         logger,
	}))
}

// instructions tell the model what the server is for and how to use it.
func (s *server) instructions() string {
	team := ""
	if s.opts.Team {
		team = `
Team memory is on: memories under team/ (save with team set) are shared with everyone working on this project. Put only what the whole team should know there, and never secrets such as keys, tokens or passwords.
`
	}
	return fmt.Sprintf(`This server is your persistent memory for this project: a directory of short Markdown files, one per memory, that outlives the conversation. What you save now is what a future conversation will know; everything else is forgotten when this one ends.

How to use it:
- Before answering a request that may depend on earlier work, the user's preferences or decisions made before, call recall with the request in your own words. It returns the relevant memories, each with its age. Memories are observations from the past: check anything that may have changed (a file, a flag, a function) before relying on it, and trust what you see now over a stale memory. recall does not repeat a memory it already showed in this session.
- When you learn something a future conversation will need and cannot easily find again, call save. Give it a short name, a one-line description that says when the memory is relevant (recall decides by it), one of the four types, and the body. Saving a name that exists updates that memory, so keep one memory per topic and update it rather than adding near-copies.
- When the user asks you to forget something, or a memory turns out to be wrong, call forget with its name or path. Every change can be undone by the user with 'memdir undo'.
- The memory tool gives direct file access to the same directory as /memories (view, create, str_replace, insert, delete, rename), for reviewing and reorganising memories by hand. MEMORY.md there is the index: one line per memory, loaded at the start of each conversation. save and forget keep it up to date for you; with the memory tool you maintain it yourself.
- The resource memdir://MEMORY.md is the index as it is loaded; memdir://memory/{path} reads one memory. The prompt named memory is the full guide to what is worth saving.

The four types:
- user: who the user is: role, expertise, goals, how they like to work.
- feedback: how to work: corrections and confirmed approaches, with the reason and when it applies.
- project: ongoing work, decisions, deadlines and incidents that the code and its history do not show.
- reference: where things live outside the code: dashboards, trackers, channels, documents.

Do not save what the code, the git history or the project's documentation already says, secrets, or details of the current task that will not matter next time.
%s`, team)
}

// Sessions records, per MCP session, which memories recall has surfaced and
// how many bytes of them. It is safe for concurrent use.
type Sessions struct {
	mu sync.Mutex
	m  map[string]*sessionRecord
}

type sessionRecord struct {
	paths []string
	seen  map[string]bool
	bytes int
}

// NewSessions returns an empty record.
func NewSessions() *Sessions { return &Sessions{m: map[string]*sessionRecord{}} }

// Surfaced returns the memories surfaced in session id so far, in the order
// they were surfaced, and their total size in bytes.
func (s *Sessions) Surfaced(id string) (paths []string, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[id]
	if r == nil {
		return nil, 0
	}
	return append([]string(nil), r.paths...), r.bytes
}

// Add records memories surfaced in session id.
func (s *Sessions) Add(id string, paths []string, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.record(id)
	for _, p := range paths {
		if !r.seen[p] {
			r.seen[p] = true
			r.paths = append(r.paths, p)
		}
	}
	r.bytes += bytes
}

// Forget drops the record of session id.
func (s *Sessions) Forget(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

// Len returns the number of sessions recorded.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *Sessions) record(id string) *sessionRecord {
	r := s.m[id]
	if r == nil {
		r = &sessionRecord{seen: map[string]bool{}}
		s.m[id] = r
	}
	return r
}

// track makes sure session id has a record, and reports whether it is new.
func (s *Sessions) track(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		return false
	}
	s.record(id)
	return true
}

// sessionKey names the session a request arrived on: its MCP session id, or
// for transports without one (stdio, in-memory) the connection itself. The
// record is dropped when the session ends.
func (s *server) sessionKey(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	key := ss.ID()
	if key == "" {
		key = fmt.Sprintf("conn-%p", ss)
	}
	if s.sessions.track(key) {
		go func() {
			_ = ss.Wait()
			s.sessions.Forget(key)
		}()
	}
	return key
}
