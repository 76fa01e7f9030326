package team

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/secrets"
)

// HandlerOptions configures a Handler. A nil *HandlerOptions means the
// defaults.
type HandlerOptions struct {
	// MaxEntries bounds the entries of one repository; 0 means
	// DefaultMaxEntries.
	MaxEntries int
	// OrganizationID is reported in GET responses.
	OrganizationID string
	// Scan finds secrets in an entry; nil means secrets.Scan.
	Scan func(content string) []secrets.Match
	// Now is the clock that stamps versions; nil means time.Now.
	Now func() time.Time
	// Logger receives one structured line per request; nil discards.
	Logger *slog.Logger
}

// Handler serves the team memory protocol over a Store:
//
//	GET  /api/claude_code/team_memory?repo=owner/name[&view=hashes|history][&version=N]
//	PUT  /api/claude_code/team_memory?repo=owner/name
//	GET  /healthz   liveness: the process answers
//	GET  /readyz    readiness: the store answers
//
// Every API request needs "Authorization: Bearer <token>" with a token the
// server issued ([IssueToken]) for that repository; read-only tokens may
// only GET. docs/format.md describes the protocol in full.
type Handler struct {
	store Store
	opts  HandlerOptions
	log   *slog.Logger
	mux   *http.ServeMux
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a Handler serving store.
func NewHandler(store Store, opts *HandlerOptions) *Handler {
	h := &Handler{store: store}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxEntries <= 0 {
		h.opts.MaxEntries = DefaultMaxEntries
	}
	if h.opts.Scan == nil {
		h.opts.Scan = secrets.Scan
	}
	if h.opts.Now == nil {
		h.opts.Now = time.Now
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+APIPath, h.api(h.get))
	mux.HandleFunc("PUT "+APIPath, h.api(h.put))
	mux.HandleFunc(APIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD, PUT")
		h.writeError(w, r, fmt.Errorf("%s %s: %w", r.Method, APIPath, ErrMethodNotAllowed))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := h.store.Ping(r.Context()); err != nil {
			h.writeError(w, r, fmt.Errorf("%w: %v", ErrUnavailable, err))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, fmt.Errorf("no endpoint %s: %w", r.URL.Path, ErrNotFound))
	})
	h.mux = mux
	return h
}

// ServeHTTP implements http.Handler, logging one line per request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	info := &requestInfo{}
	aborted := true
	defer func() {
		if aborted {
			// A response cut short (http.ErrAbortHandler) is logged too,
			// then the panic goes on to net/http, which closes the
			// connection.
			h.logRequest(r, rec, info, start, true)
		}
	}()
	h.mux.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
	aborted = false
	h.logRequest(r, rec, info, start, false)
}

func (h *Handler) logRequest(r *http.Request, rec *recorder, info *requestInfo, start time.Time, aborted bool) {
	level := slog.LevelInfo
	if rec.status >= 500 || aborted {
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", rec.status),
		slog.Int64("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.String("remote", r.RemoteAddr),
	}
	if info.repo != "" {
		attrs = append(attrs, slog.String("repo", info.repo))
	}
	if v := r.URL.Query().Get("view"); v != "" {
		attrs = append(attrs, slog.String("view", v))
	}
	if info.token != "" {
		attrs = append(attrs, slog.String("token", info.token))
	}
	if info.err != nil {
		attrs = append(attrs, slog.String("error", info.err.Error()))
	}
	if aborted {
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	h.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// requestInfo carries what the log line reports from inside the handlers.
type requestInfo struct {
	repo  string
	token string // the token id, never the secret
	err   error
}

type requestInfoKey struct{}

func infoOf(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// api authenticates and authorises an API request, then calls next with
// the normalised repository and the token.
func (h *Handler) api(next func(w http.ResponseWriter, r *http.Request, repo string, tok *Token)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		tok, err := h.authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memdir"`)
			h.writeError(w, r, err)
			return
		}
		infoOf(r).token = tok.ID
		repo, err := NormalizeRepo(r.URL.Query().Get("repo"))
		if err != nil {
			h.writeError(w, r, fmt.Errorf("query parameter repo: %w", err))
			return
		}
		infoOf(r).repo = repo
		if tok.Repo != repo {
			h.writeError(w, r, fmt.Errorf("token %s is for %s, not %s: %w", tok.ID, tok.Repo, repo, ErrForbidden))
			return
		}
		if tok.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.writeError(w, r, fmt.Errorf("token %s is read-only: %w", tok.ID, ErrForbidden))
			return
		}
		next(w, r, repo, tok)
	}
}

func (h *Handler) authenticate(r *http.Request) (*Token, error) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return nil, fmt.Errorf("no bearer token in the Authorization header: %w", ErrUnauthorized)
	}
	tok, err := h.store.LookupToken(r.Context(), HashToken(secret))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthorized
	}
	if err != nil {
		return nil, err
	}
	return tok, nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, repo string, _ *Token) {
	q := r.URL.Query()
	view := q.Get("view")
	if view == "history" {
		h.history(w, r, repo)
		return
	}
	if view != "" && view != "hashes" {
		h.writeError(w, r, fmt.Errorf("query parameter view=%q: want hashes or history: %w", view, memdir.ErrInvalid))
		return
	}
	opts := &GetOptions{HashesOnly: view == "hashes", IfNoneMatch: parseETag(r.Header.Get("If-None-Match"))}
	if v := q.Get("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			h.writeError(w, r, fmt.Errorf("query parameter version=%q: want a positive integer: %w", v, memdir.ErrInvalid))
			return
		}
		opts.Version = n
	}
	full := !opts.HashesOnly
	opts.HashesOnly = true
	d, err := h.store.Get(r.Context(), repo, opts)
	if errors.Is(err, ErrNotModified) {
		w.Header().Set("ETag", quoteETag(opts.IfNoneMatch))
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	d.OrganizationID = h.opts.OrganizationID
	w.Header().Set("ETag", quoteETag(d.Checksum))
	w.Header().Set("Last-Modified", d.LastModified.UTC().Format(http.TimeFormat))
	if !full {
		writeJSON(w, http.StatusOK, d)
		return
	}
	h.stream(w, r, d)
}

// stream writes the full view of d's version as it reads it from the
// store, page by page, so that a GET holds about one page in memory
// however large the repository. The status is sent before the entries are
// read; if the store fails after that, the response is cut short (the
// connection is aborted, so the client sees an incomplete body, never a
// complete-looking wrong one) and the error is logged.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, d *Data) {
	sums := d.Content.EntryChecksums
	d.Content.EntryChecksums = nil
	head, err := marshalJSON(d)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// head ends with `"content":{"entryChecksums":null}}`; reopen it.
	head = bytes.TrimSuffix(head, []byte(`null}}`))
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	if b, err := marshalJSON(sums); err == nil {
		bw.Write(b)
	}
	bw.WriteString(`,"entries":{`)
	fail := func(err error) {
		infoOf(r).err = fmt.Errorf("streaming the entries of %s version %d: %w", d.Repo, d.Version, err)
		panic(http.ErrAbortHandler)
	}
	after, n := "", 0
	for {
		page, err := h.store.EntryPage(r.Context(), d.Repo, d.Version, after, PageOptions{})
		if err != nil {
			fail(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if _, ok := sums[e.Key]; !ok {
				fail(fmt.Errorf("the store returned key %s twice, or one version %d does not hold", KeyRef(e.Key), d.Version))
			}
			delete(sums, e.Key)
			if n > 0 {
				bw.WriteByte(',')
			}
			n++
			k, _ := marshalJSON(e.Key)
			v, err := marshalJSON(e.Content)
			if err != nil {
				fail(err)
			}
			bw.Write(k)
			bw.WriteByte(':')
			bw.Write(v)
		}
		after = page[len(page)-1].Key
	}
	if len(sums) != 0 {
		fail(fmt.Errorf("the store returned %d entries, version %d holds %d", n, d.Version, n+len(sums)))
	}
	bw.WriteString("}}}\n")
	if err := bw.Flush(); err != nil {
		infoOf(r).err = fmt.Errorf("write the response: %w", err)
	}
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request, repo string) {
	q := r.URL.Query()
	opts := &HistoryOptions{}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"before", &opts.Before}, {"limit", nil}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			h.writeError(w, r, fmt.Errorf("query parameter %s=%q: want a positive integer: %w", p.name, v, memdir.ErrInvalid))
			return
		}
		if p.dst != nil {
			*p.dst = n
		} else {
			opts.Limit = int(min(n, MaxHistoryLimit))
		}
	}
	if q.Get("version") != "" {
		h.writeError(w, r, fmt.Errorf("view=history takes before and limit, not version: %w", memdir.ErrInvalid))
		return
	}
	vs, err := h.store.History(r.Context(), repo, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if vs == nil {
		vs = []VersionInfo{}
	}
	writeJSON(w, http.StatusOK, &History{Repo: repo, Versions: vs})
}

// maxReadBytes bounds what a PUT may send before it is even decoded: a
// single entry of MaxEntryBytes may grow when JSON-escaped (a newline
// becomes two bytes, a control character six).
const maxReadBytes = 6*MaxEntryBytes + 4096

func (h *Handler) put(w http.ResponseWriter, r *http.Request, repo string, tok *Token) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			h.writeError(w, r, fmt.Errorf("Content-Type %q: %w", ct, errUnsupportedMedia))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReadBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		h.writeError(w, r, &TooLargeError{Size: int(mbe.Limit) + 1, Limit: MaxPutBodyBytes})
		return
	}
	if err != nil {
		h.writeError(w, r, fmt.Errorf("read request body: %w", err))
		return
	}
	in, err := DecodePutBody(body)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if n := len(in.Entries) + len(in.Deletes); n > 1 && len(body) > MaxPutBodyBytes {
		h.writeError(w, r, &TooLargeError{Size: len(body), Limit: MaxPutBodyBytes})
		return
	}
	if err := h.checkEntries(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	d, err := h.store.Put(r.Context(), repo, &Update{
		Entries:    in.Entries,
		Deletes:    in.Deletes,
		IfMatch:    parseETag(r.Header.Get("If-Match")),
		MaxEntries: h.opts.MaxEntries,
		Author:     tok.ID,
		Now:        h.opts.Now(),
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", quoteETag(d.Checksum))
	writeJSON(w, http.StatusOK, &PutResponse{Checksum: d.Checksum, LastModified: d.LastModified, Version: d.Version})
}

// checkEntries applies the checks that need no database, so that a
// rejected PUT costs no transaction: keys and contents (including keys of
// the body that are directories of each other), sizes, then secrets. The
// store checks the keys again against what it holds.
func (h *Handler) checkEntries(in *PutBody) error {
	if err := ValidateEntries(in.Entries, in.Deletes, nil); err != nil {
		return err
	}
	for k, v := range in.Entries {
		if len(v) > MaxEntryBytes {
			return &TooLargeError{Key: k, Size: len(v), Limit: MaxEntryBytes}
		}
	}
	var findings []SecretFinding
	for k, v := range in.Entries {
		for _, m := range h.opts.Scan(v) {
			findings = append(findings, SecretFinding{Key: k, RuleID: m.RuleID, Label: m.Label})
		}
	}
	if findings != nil {
		sortFindings(findings)
		return &SecretError{Findings: findings}
	}
	return nil
}

// writeError answers with the status the table gives err and a JSON body.
// A 5xx hides the error's text from the client (it may name database
// internals) and leaves it to the log.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	infoOf(r).err = err
	status, typ := statusOf(err)
	if status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	info := ErrorInfo{Type: typ, Message: err.Error()}
	var (
		tm *TooManyEntriesError
		se *SecretError
		tl *TooLargeError
		ke *KeyError
	)
	switch {
	case errors.As(err, &tm):
		info.Details = &ErrorDetails{ErrorCode: CodeTooManyEntries, MaxEntries: tm.Max, ReceivedEntries: tm.Received}
	case errors.As(err, &se):
		info.Message = "content contains potential secrets (" + strings.Join(se.Labels(), ", ") + ") and cannot be written to team memory, which every collaborator of the repository can read; remove the sensitive content and try again"
		info.Details = &ErrorDetails{ErrorCode: CodeSecretDetected, Secrets: se.Findings}
	case errors.As(err, &tl):
		code := CodeEntryTooLarge
		if tl.Key == "" {
			code = CodeBodyTooLarge
		}
		info.Details = &ErrorDetails{ErrorCode: code, Key: tl.Key}
	case errors.As(err, &ke):
		info.Details = &ErrorDetails{ErrorCode: CodeInvalidKey, Key: KeyRef(ke.Key)}
	}
	if status >= 500 {
		info.Message = http.StatusText(status)
		if status == http.StatusServiceUnavailable {
			info.Message = "the team memory store is not available; retry later"
		}
	}
	writeJSON(w, status, &ErrorResponse{Error: info})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshalJSON(v)
	if err != nil {
		http.Error(w, `{"error":{"type":"api_error","message":"cannot encode the response"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
