package team_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

// fakeGitHubPAT builds a token the secret scanner recognises without a
// literal secret in the source.
func fakeGitHubPAT() string { return "ghp_" + strings.Repeat("x7Kq", 9) }

type protoEnv struct {
	srv      *memdirtest.TeamServer
	token    string // read-write for acme/widgets
	readOnly string // read-only for acme/widgets
	other    string // read-write for acme/other
	logs     *bytes.Buffer
}

func newProtoEnv(t *testing.T) *protoEnv {
	t.Helper()
	logs := &bytes.Buffer{}
	store := newSQLite(t)
	srv := memdirtest.NewTeamServer(t, store, &team.HandlerOptions{
		MaxEntries:     3,
		OrganizationID: "org-1",
		Now:            func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) },
		Logger:         slog.New(slog.NewJSONHandler(logs, nil)),
	})
	return &protoEnv{
		srv:      srv,
		token:    srv.Token(t, "acme/widgets", false),
		readOnly: srv.Token(t, "acme/widgets", true),
		other:    srv.Token(t, "acme/other", false),
		logs:     logs,
	}
}

type call struct {
	method string
	query  string // after the API path, e.g. "?repo=acme/widgets"
	path   string // overrides the API path
	token  string
	header map[string]string
	body   string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (e *protoEnv) do(t *testing.T, c call) reply {
	t.Helper()
	path := team.APIPath + c.query
	if c.path != "" {
		path = c.path
	}
	req, err := http.NewRequest(c.method, e.srv.URL+path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func (e *protoEnv) put(t *testing.T, body string) reply {
	t.Helper()
	r := e.do(t, call{method: "PUT", query: "?repo=acme/widgets", token: e.token, body: body, header: map[string]string{"Content-Type": "application/json"}})
	if r.status != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", body, r.status, r.body)
	}
	return r
}

func errorBody(t *testing.T, b []byte) team.ErrorResponse {
	t.Helper()
	var er team.ErrorResponse
	if err := json.Unmarshal(b, &er); err != nil || er.Error.Type == "" {
		t.Fatalf("error body %q is not an ErrorResponse: %v", b, err)
	}
	return er
}

func TestProtocolGet(t *testing.T) {
	e := newProtoEnv(t)
	r := e.do(t, call{method: "GET", query: "?repo=acme/widgets", token: e.token})
	if r.status != http.StatusNotFound {
		t.Fatalf("GET before any PUT: %d, want 404", r.status)
	}
	put := e.put(t, `{"entries":{"MEMORY.md":"- [a](a.md)\n","sub/a.md":"<b>&</b>"}}`)
	var pr map[string]any
	json.Unmarshal(put.body, &pr)
	sums := map[string]string{"MEMORY.md": team.EntryChecksum("- [a](a.md)\n"), "sub/a.md": team.EntryChecksum("<b>&</b>")}
	checksum := team.RepoChecksum(sums)
	if diff := cmp.Diff(map[string]any{"checksum": checksum, "lastModified": "2026-03-04T05:06:07Z", "version": 1.0}, pr); diff != "" {
		t.Errorf("PUT 200 body (-want +got):\n%s", diff)
	}

	r = e.do(t, call{method: "GET", query: "?repo=Acme/Widgets", token: e.readOnly})
	if r.status != http.StatusOK {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	if got := r.header.Get("ETag"); got != `"`+checksum+`"` {
		t.Errorf("ETag = %s, want the quoted checksum", got)
	}
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"organizationId": "org-1",
		"repo":           "acme/widgets",
		"version":        1.0,
		"lastModified":   "2026-03-04T05:06:07Z",
		"checksum":       checksum,
		"content": map[string]any{
			"entries":        map[string]any{"MEMORY.md": "- [a](a.md)\n", "sub/a.md": "<b>&</b>"},
			"entryChecksums": map[string]any{"MEMORY.md": sums["MEMORY.md"], "sub/a.md": sums["sub/a.md"]},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET body (-want +got):\n%s", diff)
	}
	if bytes.Contains(r.body, []byte(`\u003c`)) {
		t.Errorf("GET body HTML-escapes content: %s", r.body)
	}

	r = e.do(t, call{method: "GET", query: "?repo=acme/widgets&view=hashes", token: e.token})
	json.Unmarshal(r.body, &got)
	delete(want["content"].(map[string]any), "entries")
	if diff := cmp.Diff(want, got); r.status != 200 || diff != "" {
		t.Errorf("GET view=hashes: %d (-want +got):\n%s", r.status, diff)
	}

	for _, inm := range []string{`"` + checksum + `"`, checksum, `W/"` + checksum + `"`} {
		r = e.do(t, call{method: "GET", query: "?repo=acme/widgets", token: e.token, header: map[string]string{"If-None-Match": inm}})
		if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") == "" {
			t.Errorf("GET with If-None-Match %s: %d %q, want 304 with an ETag and no body", inm, r.status, r.body)
		}
	}
	r = e.do(t, call{method: "GET", query: "?repo=acme/widgets", token: e.token, header: map[string]string{"If-None-Match": `"sha256:old"`}})
	if r.status != http.StatusOK {
		t.Errorf("GET with a stale If-None-Match: %d, want 200", r.status)
	}
	r = e.do(t, call{method: "HEAD", query: "?repo=acme/widgets", token: e.readOnly})
	if r.status != http.StatusOK {
		t.Errorf("HEAD: %d, want 200", r.status)
	}
}

func TestProtocolHistoryAndVersions(t *testing.T) {
	e := newProtoEnv(t)
	e.put(t, `{"entries":{"a.md":"1"}}`)
	e.put(t, `{"entries":{"a.md":"2","b.md":"2"}}`)
	e.put(t, `{"entries":{},"deletes":["b.md"]}`)
	r := e.do(t, call{method: "GET", query: "?repo=acme/widgets&view=history", token: e.readOnly})
	var h team.History
	if err := json.Unmarshal(r.body, &h); err != nil || r.status != 200 {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	type brief struct {
		V       int64
		Changed []string
		Deleted []string
		N       int
	}
	var got []brief
	for _, v := range h.Versions {
		got = append(got, brief{v.Version, v.Changed, v.Deleted, v.EntryCount})
		if !strings.HasPrefix(v.Author, "tok_") {
			t.Errorf("version %d author = %q, want the token id", v.Version, v.Author)
		}
	}
	want := []brief{{3, []string{}, []string{"b.md"}, 1}, {2, []string{"a.md", "b.md"}, nil, 2}, {1, []string{"a.md"}, nil, 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	r = e.do(t, call{method: "GET", query: "?repo=acme/widgets&view=history&limit=1&before=3", token: e.token})
	json.Unmarshal(r.body, &h)
	if len(h.Versions) != 1 || h.Versions[0].Version != 2 {
		t.Errorf("history limit=1 before=3 = %+v", h.Versions)
	}
	r = e.do(t, call{method: "GET", query: "?repo=acme/widgets&version=2", token: e.token})
	var d team.Data
	json.Unmarshal(r.body, &d)
	if diff := cmp.Diff(map[string]string{"a.md": "2", "b.md": "2"}, d.Content.Entries); r.status != 200 || diff != "" || d.Version != 2 {
		t.Errorf("version=2: %d version %d (-want +got):\n%s", r.status, d.Version, diff)
	}
}

func TestProtocolErrors(t *testing.T) {
	e := newProtoEnv(t)
	first := e.put(t, `{"entries":{"a.md":"A"}}`)
	var pr team.PutResponse
	json.Unmarshal(first.body, &pr)
	revoked := e.srv.Token(t, "acme/widgets", false)
	toks, _ := e.srv.Store.ListTokens(context.Background())
	if err := e.srv.Store.RevokeToken(context.Background(), toks[len(toks)-1].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", team.MaxEntryBytes+1)
	half := strings.Repeat("y", 120_000)
	json200 := map[string]string{"Content-Type": "application/json"}
	repo := "?repo=acme/widgets"
	tests := []struct {
		name     string
		call     call
		status   int
		errCode  string // details.error_code
		contains string // in the message
	}{
		{"no token", call{method: "GET", query: repo}, 401, "", "bearer"},
		{"basic auth", call{method: "GET", query: repo, header: map[string]string{"Authorization": "Basic dTpw"}}, 401, "", "bearer"},
		{"unknown token", call{method: "GET", query: repo, token: "mdt_nope"}, 401, "", "token"},
		{"revoked token", call{method: "GET", query: repo, token: revoked}, 401, "", "token"},
		{"other repo", call{method: "GET", query: repo, token: e.other}, 403, "", "acme/other"},
		{"read-only PUT", call{method: "PUT", query: repo, token: e.readOnly, body: `{"entries":{}}`}, 403, "", "read-only"},
		{"missing repo", call{method: "GET", token: e.token}, 400, "", "repo"},
		{"bad repo", call{method: "GET", query: "?repo=../etc", token: e.token}, 400, "", "owner/name"},
		{"bad view", call{method: "GET", query: repo + "&view=all", token: e.token}, 400, "", "view"},
		{"bad version", call{method: "GET", query: repo + "&version=-1", token: e.token}, 400, "", "version"},
		{"history with version", call{method: "GET", query: repo + "&view=history&version=1", token: e.token}, 400, "", "version"},
		{"bad limit", call{method: "GET", query: repo + "&view=history&limit=x", token: e.token}, 400, "", "limit"},
		{"malformed JSON", call{method: "PUT", query: repo, token: e.token, body: `{"entries":`}, 400, "", "JSON"},
		{"entries not strings", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"a.md":1}}`}, 400, "", "JSON"},
		{"traversal key", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"../x.md":"x"}}`}, 400, team.CodeInvalidKey, "../…#"},
		{"unicode traversal key", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"．．／x.md":"x"}}`}, 400, team.CodeInvalidKey, "NFKC"},
		{"bad delete key", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{},"deletes":["/abs"]}`}, 400, team.CodeInvalidKey, "absolute"},
		{"NUL content", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"a.md":"\u0000"}}`}, 400, "", "not text"},
		{"no data", call{method: "GET", query: "?repo=acme/other", token: e.other}, 404, "", ""},
		{"no version", call{method: "GET", query: repo + "&version=9", token: e.token}, 404, "", "version 9"},
		{"no history", call{method: "GET", query: "?repo=acme/other&view=history", token: e.other}, 404, "", ""},
		{"unknown path", call{method: "GET", path: "/api/other", token: e.token}, 404, "", "/api/other"},
		{"POST", call{method: "POST", query: repo, token: e.token}, 405, "", "POST"},
		{"DELETE", call{method: "DELETE", query: repo, token: e.token}, 405, "", "DELETE"},
		{"stale If-Match", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"b.md":"B"}}`, header: map[string]string{"If-Match": `"sha256:stale"`}}, 412, "", "changed"},
		{"too many entries", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"b.md":"B","c.md":"C","d.md":"D"}}`}, 413, team.CodeTooManyEntries, "4"},
		{"entry too large", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"big.md":"` + big + `"}}`}, 413, team.CodeEntryTooLarge, "big.md"},
		{"body too large", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"h1.md":"` + half + `","h2.md":"` + half + `"}}`}, 413, team.CodeBodyTooLarge, "fewer"},
		{"body over the read limit", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"h.md":"` + strings.Repeat("z", 2_000_000) + `"}}`}, 413, team.CodeBodyTooLarge, ""},
		{"text/plain", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{}}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, "", "application/json"},
		{"secret", call{method: "PUT", query: repo, token: e.token, body: `{"entries":{"s.md":"token ` + fakeGitHubPAT() + `"}}`, header: json200}, 422, team.CodeSecretDetected, "GitHub PAT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, tt.call)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %s", r.status, tt.status, r.body)
			}
			er := errorBody(t, r.body)
			code := ""
			if er.Error.Details != nil {
				code = er.Error.Details.ErrorCode
			}
			if code != tt.errCode {
				t.Errorf("error_code %q, want %q", code, tt.errCode)
			}
			if !strings.Contains(er.Error.Message, tt.contains) {
				t.Errorf("message %q does not mention %q", er.Error.Message, tt.contains)
			}
			if r.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
			if tt.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			if tt.status == 405 && r.header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if bytes.Contains(r.body, []byte(fakeGitHubPAT())) {
				t.Errorf("the response echoes the secret: %s", r.body)
			}
		})
	}
	// Nothing above changed the data.
	r := e.do(t, call{method: "GET", query: repo + "&view=hashes", token: e.token})
	var d team.Data
	json.Unmarshal(r.body, &d)
	if d.Version != 1 || d.Checksum != pr.Checksum {
		t.Errorf("after the rejected requests: version %d checksum %s; want 1, %s", d.Version, d.Checksum, pr.Checksum)
	}
}

// TestProtocolTooManyEntriesShape checks the 413 body against the spec's
// structure byte for byte in its details.
func TestProtocolTooManyEntriesShape(t *testing.T) {
	e := newProtoEnv(t)
	r := e.do(t, call{method: "PUT", query: "?repo=acme/widgets", token: e.token, body: `{"entries":{"a":"1","b":"2","c":"3","d":"4"}}`})
	var got struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	json.Unmarshal(r.body, &got)
	want := map[string]any{"error_code": "team_memory_too_many_entries", "max_entries": 3.0, "received_entries": 4.0}
	if diff := cmp.Diff(want, got.Error.Details); r.status != 413 || diff != "" {
		t.Errorf("413: %d (-want +got):\n%s", r.status, diff)
	}
}

func TestProtocolLargeSingleEntry(t *testing.T) {
	e := newProtoEnv(t)
	// An entry over the multi-entry body limit but within the entry limit
	// goes through alone, as the client batches it.
	content := strings.Repeat("line\n", 240_000/5)
	body, _ := json.Marshal(team.PutBody{Entries: map[string]string{"big.md": content}})
	if len(body) <= team.MaxPutBodyBytes {
		t.Fatalf("test body of %d bytes is not over the limit", len(body))
	}
	e.put(t, string(body))
}

func TestProtocolDeletes(t *testing.T) {
	e := newProtoEnv(t)
	e.put(t, `{"entries":{"a.md":"A","b.md":"B"}}`)
	e.put(t, `{"entries":{"c.md":"C"}}`) // an upsert never deletes
	e.put(t, `{"entries":{},"deletes":["a.md"]}`)
	r := e.do(t, call{method: "GET", query: "?repo=acme/widgets", token: e.token})
	var d team.Data
	json.Unmarshal(r.body, &d)
	if diff := cmp.Diff(map[string]string{"b.md": "B", "c.md": "C"}, d.Content.Entries); diff != "" {
		t.Errorf("after an explicit delete (-want +got):\n%s", diff)
	}
}

func TestProtocolHealth(t *testing.T) {
	e := newProtoEnv(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := e.do(t, call{method: "GET", path: p}); r.status != 200 {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	down := memdirtest.NewTeamServer(t, &brokenStore{Store: newSQLite(t)}, nil)
	resp, err := http.Get(down.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("/readyz with a failing store: %d, want 503", resp.StatusCode)
	}
	resp, _ = http.Get(down.URL + "/healthz")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz with a failing store: %d, want 200", resp.StatusCode)
	}
}

// brokenStore fails Ping and Get the way a lost database does.
type brokenStore struct{ team.Store }

func (b *brokenStore) Ping(context.Context) error { return errors.New("connection refused") }

func (b *brokenStore) Get(context.Context, string, *team.GetOptions) (*team.Data, error) {
	return nil, errors.New("pq: relation \"secret_internal_table\" does not exist")
}

func TestProtocol500HidesInternals(t *testing.T) {
	b := &brokenStore{Store: newSQLite(t)}
	srv := memdirtest.NewTeamServer(t, b, nil)
	token := srv.Token(t, "acme/widgets", false)
	req, _ := http.NewRequest("GET", srv.URL+team.APIPath+"?repo=acme/widgets", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || bytes.Contains(body, []byte("secret_internal_table")) {
		t.Errorf("store failure: %d %s; want 500 without the internal message", resp.StatusCode, body)
	}
}

func TestProtocolLogs(t *testing.T) {
	e := newProtoEnv(t)
	e.put(t, `{"entries":{"a.md":"A"}}`)
	e.do(t, call{method: "GET", query: "?repo=acme/widgets", token: "mdt_wrong"})
	var lines []map[string]any
	for l := range bytes.SplitSeq(bytes.TrimSpace(e.logs.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2", len(lines))
	}
	if lines[0]["repo"] != "acme/widgets" || lines[0]["status"] != 200.0 || !strings.HasPrefix(fmt.Sprint(lines[0]["token"]), "tok_") {
		t.Errorf("PUT log line = %v", lines[0])
	}
	if lines[1]["status"] != 401.0 {
		t.Errorf("401 log line = %v", lines[1])
	}
	if bytes.Contains(e.logs.Bytes(), []byte(e.token)) || bytes.Contains(e.logs.Bytes(), []byte("mdt_wrong")) {
		t.Errorf("logs contain a token secret:\n%s", e.logs)
	}
}

// TestRemoteRetries checks that the Remote retries 5xx and 429 up to
// MaxRetries times and never retries other 4xx.
func TestRemoteRetries(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int
		wantN    int
		wantErr  error
	}{
		{"503 then ok", []int{503, 502, 200}, 3, nil},
		{"429 then ok", []int{429, 200}, 2, nil},
		{"gives up after 3 retries", []int{500, 500, 500, 500, 200}, 4, team.ErrUnavailable},
		{"no retry on 400", []int{400, 200}, 1, memdir.ErrInvalid},
		{"no retry on 401", []int{401, 200}, 1, team.ErrUnauthorized},
		{"no retry on 412", []int{412, 200}, 1, team.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				status := tt.statuses[n]
				n++
				if r.Header.Get("Authorization") != "Bearer mdt_x" {
					t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
				}
				if status == 429 {
					w.Header().Set("Retry-After", "0")
				}
				if status != 200 {
					w.WriteHeader(status)
					fmt.Fprint(w, "plain text error")
					return
				}
				fmt.Fprint(w, `{"repo":"a/b","version":1,"checksum":"sha256:x","content":{"entries":{},"entryChecksums":{}}}`)
			}))
			defer srv.Close()
			r, err := team.NewRemote(srv.URL, "mdt_x", &team.RemoteOptions{Backoff: func(int) time.Duration { return time.Millisecond }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Get(context.Background(), "a/b", nil)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if n != tt.wantN {
				t.Errorf("%d requests, want %d", n, tt.wantN)
			}
		})
	}
}

func TestNewRemote(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:8787", "http://"} {
		if _, err := team.NewRemote(u, "t", nil); err == nil {
			t.Errorf("NewRemote(%q) accepted", u)
		}
	}
	if _, err := team.NewRemote("http://127.0.0.1:1", "", nil); !errors.Is(err, team.ErrNoToken) {
		t.Errorf("NewRemote without a token: %v, want ErrNoToken", err)
	}
}
