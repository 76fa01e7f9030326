package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir"
)

// RemoteOptions configures a Remote. A nil *RemoteOptions means the
// defaults.
type RemoteOptions struct {
	// HTTPClient sends the requests; nil means a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds each attempt; 0 means 30 s, as in Claude Code.
	Timeout time.Duration
	// MaxRetries is how many times a request is retried after a 5xx, a
	// 429 or a network error; 0 means 3, negative means none.
	MaxRetries int
	// Backoff returns the wait before retry n (1-based); nil means
	// exponential from 500 ms with jitter, capped at 8 s. A Retry-After
	// header, when present, wins (up to 30 s).
	Backoff func(retry int) time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Logger receives one line per retry; nil discards.
	Logger *slog.Logger
}

// Remote is a [Repos] that talks to a team memory server over HTTP. Its
// errors are *StatusError values wrapping the same domain errors a Store
// returns, so code written against Repos works with either.
type Remote struct {
	base   *url.URL
	token  string
	opts   RemoteOptions
	client *http.Client
	log    *slog.Logger
}

var _ Repos = (*Remote)(nil)

// NewRemote returns a Remote for the server at baseURL (scheme and host,
// optionally a path prefix) that authenticates with token.
func NewRemote(baseURL, token string, opts *RemoteOptions) (*Remote, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("team memory server URL %q: want http(s)://host[:port]: %w", baseURL, memdir.ErrInvalid)
	}
	if token == "" {
		return nil, ErrNoToken
	}
	r := &Remote{base: u, token: token}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Timeout <= 0 {
		r.opts.Timeout = 30 * time.Second
	}
	switch {
	case r.opts.MaxRetries == 0:
		r.opts.MaxRetries = 3
	case r.opts.MaxRetries < 0:
		r.opts.MaxRetries = 0
	}
	if r.opts.Backoff == nil {
		r.opts.Backoff = defaultBackoff
	}
	if r.opts.UserAgent == "" {
		r.opts.UserAgent = "memdir"
	}
	r.client = r.opts.HTTPClient
	if r.client == nil {
		r.client = &http.Client{}
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

func defaultBackoff(retry int) time.Duration {
	d := 500 * time.Millisecond << (retry - 1)
	d = min(d, 8*time.Second)
	return d/2 + rand.N(d/2+1)
}

// getRequest returns the query and headers of a GET.
func getRequest(repo string, opts *GetOptions) (url.Values, http.Header) {
	if opts == nil {
		opts = &GetOptions{}
	}
	q := url.Values{"repo": {repo}}
	if opts.HashesOnly {
		q.Set("view", "hashes")
	}
	if opts.Version != 0 {
		q.Set("version", strconv.FormatInt(opts.Version, 10))
	}
	h := http.Header{}
	if opts.IfNoneMatch != "" {
		h.Set("If-None-Match", quoteETag(opts.IfNoneMatch))
	}
	return q, h
}

// Get implements Repos. It holds the whole response in memory; a
// [Client] pulls through getTo instead.
func (r *Remote) Get(ctx context.Context, repo string, opts *GetOptions) (*Data, error) {
	q, h := getRequest(repo, opts)
	resp, body, err := r.do(ctx, http.MethodGet, q, h, nil, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return nil, ErrNotModified
	}
	var d Data
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, fmt.Errorf("team memory server: malformed response to GET %s: %w", repo, err)
	}
	if d.Checksum == "" {
		d.Checksum = parseETag(resp.Header.Get("ETag"))
	}
	return &d, nil
}

// getTo is Get that writes the body of a 200 into spool, from its start,
// instead of decoding it, and returns the response's ETag (unquoted). The
// body may be as large as the repository; on disk it costs no memory. A
// retried attempt starts the file over. It fails with ErrNotModified on a
// 304, and as Get does otherwise.
func (r *Remote) getTo(ctx context.Context, repo string, opts *GetOptions, spool *os.File) (etag string, err error) {
	q, h := getRequest(repo, opts)
	resp, _, err := r.do(ctx, http.MethodGet, q, h, nil, spool)
	if err != nil {
		return "", err
	}
	if resp.StatusCode == http.StatusNotModified {
		return "", ErrNotModified
	}
	return parseETag(resp.Header.Get("ETag")), nil
}

// Put implements Repos. u.MaxEntries and u.Author are the server's to
// decide and are not sent.
func (r *Remote) Put(ctx context.Context, repo string, u *Update) (*Data, error) {
	body, err := putBody(u.Entries, u.Deletes)
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if u.IfMatch != "" {
		h.Set("If-Match", quoteETag(u.IfMatch))
	}
	_, resp, err := r.do(ctx, http.MethodPut, url.Values{"repo": {repo}}, h, body, nil)
	if err != nil {
		return nil, err
	}
	var pr PutResponse
	if err := json.Unmarshal(resp, &pr); err != nil {
		return nil, fmt.Errorf("team memory server: malformed response to PUT %s: %w", repo, err)
	}
	return &Data{Repo: repo, Version: pr.Version, LastModified: pr.LastModified, Checksum: pr.Checksum}, nil
}

func putBody(entries map[string]string, deletes []string) ([]byte, error) {
	if entries == nil {
		entries = map[string]string{}
	}
	return marshalJSON(&PutBody{Entries: entries, Deletes: deletes})
}

// History implements Repos.
func (r *Remote) History(ctx context.Context, repo string, opts *HistoryOptions) ([]VersionInfo, error) {
	q := url.Values{"repo": {repo}, "view": {"history"}}
	if opts != nil && opts.Before > 0 {
		q.Set("before", strconv.FormatInt(opts.Before, 10))
	}
	if opts != nil && opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	_, body, err := r.do(ctx, http.MethodGet, q, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	var h History
	if err := json.Unmarshal(body, &h); err != nil {
		return nil, fmt.Errorf("team memory server: malformed history of %s: %w", repo, err)
	}
	if len(h.Versions) == 0 {
		return nil, nil
	}
	return h.Versions, nil
}

// maxResponseBytes bounds a response body; a full repository at the
// default limits is far below it.
const maxResponseBytes = 256 << 20

// do sends one request, retrying 5xx, 429 and network errors, and returns
// the response (status 2xx or 304) with its body read, or an error. With a
// spool file, the body of a 200 goes there instead (see once).
func (r *Remote) do(ctx context.Context, method string, q url.Values, h http.Header, body []byte, spool *os.File) (*http.Response, []byte, error) {
	u := *r.base
	u.Path += APIPath
	u.RawQuery = q.Encode()
	for attempt := 0; ; attempt++ {
		resp, respBody, err := r.once(ctx, method, u.String(), h, body, spool)
		retry := false
		var wait time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case errors.Is(err, errResponseTooLarge):
			return nil, nil, fmt.Errorf("team memory server %s: %s %s: %w", r.base.Host, method, q.Get("repo"), err)
		case errors.As(err, new(*spoolError)):
			return nil, nil, err
		case err != nil:
			retry = true
			err = fmt.Errorf("team memory server %s: %w: %v", r.base.Host, ErrUnavailable, err)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			retry = true
			wait = retryAfter(resp.Header.Get("Retry-After"))
			err = statusError(resp, respBody)
		case resp.StatusCode >= 400:
			return nil, nil, statusError(resp, respBody)
		}
		if !retry {
			return resp, respBody, nil
		}
		if attempt >= r.opts.MaxRetries {
			return nil, nil, err
		}
		if wait == 0 {
			wait = r.opts.Backoff(attempt + 1)
		}
		r.log.Info("retrying team memory request", "method", method, "attempt", attempt+1, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
}

// once sends one request. The body of a 200 response is copied into
// spool (truncated first) when spool is set, else read into memory, at
// most maxResponseBytes in both cases.
func (r *Remote) once(ctx context.Context, method, u string, h http.Header, body []byte, spool *os.File) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(req.Header, h)
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("User-Agent", r.opts.UserAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if spool != nil && resp.StatusCode == http.StatusOK {
		if err := spoolBody(spool, resp.Body); err != nil {
			return nil, nil, err
		}
		return resp, nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, nil, err
	}
	return resp, b, nil
}

// errResponseTooLarge stops a response over maxResponseBytes. It is not
// retried: the next attempt would be as large.
var errResponseTooLarge = fmt.Errorf("the response is over %d MiB: %w", maxResponseBytes>>20, ErrTooLarge)

// spoolError is a failure of the local spool file, not of the server:
// it is not retried.
type spoolError struct {
	name string
	err  error
}

func (e *spoolError) Error() string {
	return "write the server's response to " + e.name + ": " + e.err.Error()
}
func (e *spoolError) Unwrap() error { return e.err }

// spoolWriter tags the errors of the file it writes as spoolErrors.
type spoolWriter struct{ f *os.File }

func (w spoolWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	if err != nil {
		err = &spoolError{w.f.Name(), err}
	}
	return n, err
}

// spoolBody copies body into f from its start, leaving f's offset at 0.
func spoolBody(f *os.File, body io.Reader) error {
	if err := f.Truncate(0); err != nil {
		return &spoolError{f.Name(), err}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return &spoolError{f.Name(), err}
	}
	n, err := io.Copy(spoolWriter{f}, io.LimitReader(body, maxResponseBytes+1))
	if err != nil {
		return err
	}
	if n > maxResponseBytes {
		return errResponseTooLarge
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return &spoolError{f.Name(), err}
	}
	return nil
}

func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, 30*time.Second)
	}
	return 0
}

func statusError(resp *http.Response, body []byte) error {
	var er ErrorResponse
	if json.Unmarshal(body, &er) != nil || er.Error.Message == "" {
		er.Error.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	return &StatusError{StatusCode: resp.StatusCode, Message: er.Error.Message, Err: errorOf(resp.StatusCode, &er.Error)}
}
