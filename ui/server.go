// Package ui serves a local web application for looking at and curating one
// memory directory: its memories, their history in the journal, the index as
// agents load it, doctor's findings, what recall would inject for a prompt,
// team sync status, the file-history checkpoints of the project's
// sessions, and the review queue of writes that injection screening held
// back, to accept or reject.
//
// The application is plain HTML, CSS and JavaScript modules embedded in the
// binary; nothing is fetched from the network and no build step runs.
//
// # Security
//
// A browser is an attack surface, so the handler trusts only its own page:
//
//   - it is meant to listen on a loopback address (the command refuses
//     others) and answers only requests whose Host names that address;
//   - the URL it prints carries a random per-run token, exchanged on first
//     use for an HttpOnly, SameSite=Strict session cookie; every other
//     request without that cookie is refused with 401;
//   - every state-changing request (POST) needs the per-run CSRF token in
//     the X-Memdir-CSRF header and a JSON body;
//   - a request whose Origin is not the page's own, or that the browser
//     marks as cross-site (Sec-Fetch-Site), is refused with 403;
//   - responses carry a strict Content-Security-Policy (scripts, styles and
//     connections from the page's origin only, no inline script, no frames),
//     and memory bodies are rendered from Markdown with every character of
//     text escaped, so nothing in a memory becomes live HTML;
//   - every path a request names is checked with memdir.CleanMemoryFilePath and
//     opened through the memory directory (os.Root), journal runs are looked
//     up by id, and checkpoint sessions only among the project's own, so no
//     endpoint reaches outside the memory directory, its journal and its
//     checkpoints.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/team"
)

//go:embed assets
var assets embed.FS

// CookieName is the session cookie set when the printed URL is opened.
const CookieName = "memdir_ui"

// CSRFHeader carries the CSRF token on every state-changing request.
const CSRFHeader = "X-Memdir-CSRF"

// ContentSecurityPolicy is sent with every response.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// maxBody bounds a request body: a memory (4 MiB) plus JSON quoting.
const maxBody = 3*memdir.MaxMemoryFileBytes/2 + 64<<10

// Team is the team memory server the directory syncs with.
type Team struct {
	// Client compares and syncs team/ with the server.
	Client *team.Client
	// Repos is the server's protocol client, for a key's history.
	Repos team.Repos
	// Repo is the repository ("owner/name"); Server the base URL shown.
	Repo, Server string
	// Tokens, when set, names the server's tokens for its history: the
	// protocol's history names each version's author by token id only.
	// Nil shows ids, unless Repos is itself a store that lists its tokens
	// (a team.Store at hand).
	Tokens TokenLister
}

// TokenLister lists a team server's tokens, as [team.Tokens] does.
type TokenLister interface {
	ListTokens(ctx context.Context) ([]team.Token, error)
}

// Checkpoints says where the project's file-history sessions live.
type Checkpoints struct {
	// ConfigHome holds file-history/<session>/.
	ConfigHome string
	// Project is the project root: only sessions whose original working
	// directory lies inside it are shown.
	Project string
}

// Options configure a Server.
type Options struct {
	// Location is where the directory was found (nil with --dir).
	Location *locate.Location
	// Model drives recall; nil ranks lexically.
	Model llm.Model
	// RecallIndex caches the lexical index; nil builds one per recall.
	RecallIndex *recall.Index
	// Team is the configured team server; nil with TeamReason saying why.
	Team       *Team
	TeamReason string
	// Review is the directory's review queue (the one its store screens
	// with); nil means the queue in its default place.
	Review *review.Queue
	// Checkpoints locates the project's sessions; nil shows none.
	Checkpoints *Checkpoints
	// Token is the per-run token of the printed URL; "" picks a random one.
	Token string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives request errors; nil discards them.
	Logger *slog.Logger
	// Version is shown in the page footer.
	Version string
}

// Server is the web application for one memory directory.
type Server struct {
	d       *memdir.Dir
	review  *review.Queue
	opts    Options
	token   string
	session string
	csrf    string
	hosts   map[string]bool
	origins map[string]bool
	now     func() time.Time
	log     *slog.Logger
	static  fs.FS
}

// New returns the application for d, answering requests addressed to addr,
// the address it listens on (HOST:PORT with the port chosen). addr must be a
// loopback address.
func New(d *memdir.Dir, addr string, opts *Options) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("ui: address %q: want HOST:PORT: %w", addr, memdir.ErrInvalid)
	}
	if !IsLoopback(host) {
		return nil, fmt.Errorf("ui: %q is not a loopback address; the UI only listens on 127.0.0.1, ::1 or localhost: %w", addr, memdir.ErrInvalid)
	}
	s := &Server{d: d, hosts: map[string]bool{}, origins: map[string]bool{}}
	if opts != nil {
		s.opts = *opts
	}
	s.now = s.opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.review = s.opts.Review
	if s.review == nil {
		if s.review, err = review.New(d.Path(), &review.Options{Journal: d.Journal(), Now: s.now, Logger: s.log}); err != nil {
			return nil, fmt.Errorf("ui: %w", err)
		}
	}
	s.token = s.opts.Token
	if s.token == "" {
		s.token = randomHex()
	}
	s.session, s.csrf = randomHex(), randomHex()
	names := []string{net.JoinHostPort(host, port)}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		names = append(names, net.JoinHostPort("localhost", port), net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port))
	}
	for _, n := range names {
		s.hosts[n] = true
		s.origins["http://"+n] = true
	}
	s.static, _ = fs.Sub(assets, "assets")
	return s, nil
}

// IsLoopback reports whether host (no port) is a loopback address or
// "localhost".
func IsLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// URL returns the address to open: it carries the per-run token.
func (s *Server) URL(addr string) string {
	return "http://" + addr + "/?token=" + s.token
}

// Token returns the per-run token of the printed URL.
func (s *Server) Token() string { return s.token }

// CSRF returns the per-run CSRF token (the page reads it from /api/session).
func (s *Server) CSRF() string { return s.csrf }

func randomHex() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("ui: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Handler returns the HTTP handler serving the page and its API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !s.hosts[r.Host] {
			s.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's address", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.origins[o] {
			s.refuse(w, r, http.StatusForbidden, fmt.Sprintf("Origin %q is not this page", o))
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			s.refuse(w, r, http.StatusForbidden, "cross-site request")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
			s.refuse(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed")
			return
		}
		if r.URL.Path == "/" && r.URL.Query().Has("token") {
			s.login(w, r)
			return
		}
		if !s.authenticated(r) {
			s.refuse(w, r, http.StatusUnauthorized, "not signed in: open the URL 'memdir ui' printed")
			return
		}
		if r.Method == http.MethodPost {
			if got := r.Header.Get(CSRFHeader); subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
				s.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
				return
			}
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				s.refuse(w, r, http.StatusUnsupportedMediaType, "a POST body must be application/json")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) authenticated(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1
}

// login exchanges the URL's token for the session cookie and sends the
// browser to the page without the token in its address bar or history.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(s.token)) != 1 {
		s.refuse(w, r, http.StatusForbidden, "wrong token: open the URL 'memdir ui' printed")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: s.session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// refuse answers an API request with a JSON error and a page request with
// plain text.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.log.Debug("ui: refused", "method", r.Method, "path", r.URL.Path, "status", code, "reason", msg)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, code, errorResponse{Error: msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "%d %s: %s\n", code, http.StatusText(code), msg)
}

// serveAsset serves an embedded file; "/" is the page.
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	data, err := fs.ReadFile(s.static, name)
	if err != nil {
		s.refuse(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".css":
		ct = "text/css; charset=utf-8"
	case ".html":
		ct = "text/html; charset=utf-8"
	case ".svg":
		ct = "image/svg+xml"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(data)
}

// errorResponse is the answer to a request that failed: the message, and
// for some failures what the page shows of them.
type errorResponse struct {
	Error string `json:"error"`
	// Paths are the files changed since, when an undo is refused.
	Paths []string `json:"paths,omitzero"`
	// Errors and Warnings are the checks of a refused save.
	Errors   []string `json:"errors,omitzero"`
	Warnings []string `json:"warnings,omitzero"`
	// CurrentSHA is the file's hash now, when a save is refused because
	// the file changed since it was opened.
	CurrentSHA string `json:"current_sha,omitempty"`
	// State is a held write's state, when it was already decided.
	State string `json:"state,omitempty"`
}

// apiError is an error with the HTTP status it is answered with.
type apiError struct {
	code int
	msg  string
	// more holds the answer's fields besides the message.
	more errorResponse
}

func (e *apiError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// statusFor maps memdir's error classes to HTTP statuses.
func statusFor(err error) int {
	var ae *apiError
	var ce *memdir.ConflictError
	switch {
	case errors.As(err, &ae):
		return ae.code
	case errors.As(err, &ce):
		return http.StatusConflict
	case errors.Is(err, memdir.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, memdir.ErrInvalid):
		return http.StatusUnprocessableEntity
	case errors.Is(err, memdir.ErrExists):
		return http.StatusConflict
	case errors.Is(err, memdir.ErrLocked):
		return http.StatusLocked
	}
	return http.StatusInternalServerError
}

// endpoint is one API route: its path, its handler, and the type of its
// answer (which a test checks for snake_case keys).
type endpoint struct {
	path    string
	handler http.Handler
	answer  reflect.Type
}

// handle adapts an API function: its result is answered as JSON, its error
// with the status statusFor gives. T is the answer's type, so every
// endpoint's answer is a type known here (see endpoints).
func handle[T any](s *Server, path, method string, fn func(r *http.Request) (T, error)) endpoint {
	h := func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method)
			s.refuse(w, r, http.StatusMethodNotAllowed, r.URL.Path+" takes "+method)
			return
		}
		v, err := fn(r)
		if err != nil {
			code := statusFor(err)
			if code == http.StatusInternalServerError {
				s.log.Warn("ui: request failed", "path", r.URL.Path, "err", err)
			}
			var body errorResponse
			var ae *apiError
			if errors.As(err, &ae) {
				body = ae.more
			}
			body.Error = err.Error()
			var ce *memdir.ConflictError
			if errors.As(err, &ce) {
				body.Paths = ce.Paths
			}
			writeJSON(w, code, body)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
	return endpoint{path: path, handler: http.HandlerFunc(h), answer: reflect.TypeFor[T]()}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.Encode(v)
}

// decode reads a JSON request body into v, refusing unknown fields.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "request body over %d bytes", mbe.Limit)
		}
		return errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, "request body: one JSON object expected")
	}
	return nil
}
