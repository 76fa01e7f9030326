package team_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/team"
)

// FuzzHandlerRequest sends the team server arbitrary requests: method,
// query, body and Authorization, with a valid token or a fuzzed one. Each
// gets an answer, never a panic, and no hidden key is ever stored.
func FuzzHandlerRequest(f *testing.F) {
	for _, s := range []struct {
		method      uint8
		query, body string
		auth        string
	}{
		{0, "repo=acme/app", "", ""},
		{0, "repo=acme/app&view=hashes", "", ""},
		{0, "repo=acme/app&view=history&before=9223372036854775807", "", ""},
		{0, "repo=acme/app&version=-1", "", ""},
		{1, "repo=acme/app", `{"entries":{"a.md":"x"}}`, ""},
		{1, "repo=acme/app", `{"entries":{".git/HEAD":"ref: x"}}`, ""},
		{1, "repo=acme/app", `{"entries":{"a.md":"x"},"deletes":["../b.md"]}`, ""},
		{1, "repo=acme/app", `{"entries":{"\u0000":""}}`, ""},
		{1, "repo=%zz", `{`, ""},
		{2, "repo=acme/app", "", "Bearer "},
		{0, "repo=other/repo", "", "Basic eDp5"},
	} {
		f.Add(s.method, s.query, []byte(s.body), s.auth)
	}
	store := newSQLite(f)
	secret, _, err := team.IssueToken(context.Background(), store, "acme/app", false, "fuzz", time.Now())
	if err != nil {
		f.Fatal(err)
	}
	h := team.NewHandler(store, &team.HandlerOptions{MaxEntries: 50})
	methods := []string{"GET", "PUT", "POST", "DELETE", "HEAD"}
	f.Fuzz(func(t *testing.T, method uint8, query string, body []byte, auth string) {
		r := httptest.NewRequest(methods[int(method)%len(methods)], "http://team.test"+team.APIPath, bytes.NewReader(body))
		r.URL.RawQuery = query
		if auth == "" {
			auth = "Bearer " + secret
		}
		r.Header.Set("Authorization", auth)
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
		data, err := store.Get(context.Background(), "acme/app", nil)
		if err != nil {
			return
		}
		for k := range data.Content.Entries {
			for part := range strings.SplitSeq(k, "/") {
				if strings.HasPrefix(part, ".") {
					t.Fatalf("the server stored the hidden key %q", k)
				}
			}
		}
	})
}

// FuzzRemoteResponse answers the client's every request with an arbitrary
// status, ETag and body, as a hostile or broken server can: Get, Put and
// History return data or an error, never a panic.
func FuzzRemoteResponse(f *testing.F) {
	for _, s := range []struct {
		call   uint8
		status int
		etag   string
		body   string
	}{
		{0, 200, `"v1"`, `{"organizationId":"o","repo":"acme/app","version":1,"lastModified":"2026-01-01T00:00:00Z","checksum":"sha256:x","content":{"entries":{"a.md":"x"}}}`},
		{0, 200, `"v1"`, `{"content":{"entries":{"../a.md":"x",".git/config":"[core]"}}}`},
		{0, 200, "", `{"content":{"entries":null,"entryChecksums":{"a.md":7}}}`},
		{0, 304, `"v1"`, ""},
		{0, 404, "", `{"error":{"message":"no such repo"}}`},
		{1, 200, `"v2"`, `{"version":2}`},
		{1, 412, "", `{"error":{"details":{"error_code":"team_memory_conflict"}}}`},
		{1, 413, "", `{"error":{"details":{"error_code":"team_memory_too_many_entries","max_entries":-1}}}`},
		{1, 422, "", `{"error":{"details":{"error_code":"team_memory_secret_detected","secrets":[{"path":"a.md","rule":null}]}}}`},
		{2, 200, "", `{"versions":[{"version":1,"author":{}}]}`},
		{2, 200, "", `[`},
		{0, 500, "", "\xff\x00"},
	} {
		f.Add(s.call, s.status, s.etag, []byte(s.body))
	}
	var reply struct {
		status int
		etag   string
		body   []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reply.etag != "" {
			w.Header().Set("ETag", reply.etag)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply.body)))
		w.WriteHeader(reply.status)
		w.Write(reply.body)
	}))
	f.Cleanup(srv.Close)
	remote, err := team.NewRemote(srv.URL, "tok", &team.RemoteOptions{MaxRetries: -1, Backoff: func(int) time.Duration { return 0 }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, call uint8, status int, etag string, body []byte) {
		if status < 200 || status > 599 || status == 204 || status == 304 && len(body) > 0 {
			status = 200
		}
		if strings.ContainsAny(etag, "\r\n\x00") {
			etag = ""
		}
		reply.status, reply.etag, reply.body = status, etag, body
		ctx := context.Background()
		switch call % 4 {
		case 0:
			remote.Get(ctx, "acme/app", nil)
		case 1:
			remote.Put(ctx, "acme/app", &team.Update{Entries: map[string]string{"a.md": "x"}, IfMatch: `"v1"`})
		case 2:
			remote.History(ctx, "acme/app", &team.HistoryOptions{Limit: 5})
		case 3:
			remote.Get(ctx, "acme/app", &team.GetOptions{HashesOnly: true})
		}
	})
}
