package team_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

// TestProtocolRefusesWhatClientsCannotWrite sends the bodies a hostile or
// broken token holder could send to make every teammate's pull fail or to
// have the server store something else than was sent: each is refused
// with a 400 that names the problem, the data is unchanged, and neither
// the response nor the request log repeats the key.
func TestProtocolRefusesWhatClientsCannotWrite(t *testing.T) {
	e := newProtoEnv(t)
	e.put(t, `{"entries":{"file":"a file","dir/x.md":"x"}}`)
	before := e.do(t, call{method: "GET", query: "?repo=acme/widgets&view=hashes", token: e.token})

	// A key with a secret in it, in a segment too long for any file system.
	secretSeg := fakeGitHubPAT() + strings.Repeat("s", 260)
	tests := []struct {
		name     string
		body     string
		code     string // details.error_code
		contains string // in the message
	}{
		{"segment over 255 bytes", `{"entries":{"notes/` + secretSeg + `.md":"x"}}`, team.CodeInvalidKey, "segment of 303 bytes"},
		{"segment over 255 bytes in a delete", `{"entries":{},"deletes":["` + secretSeg + `"]}`, team.CodeInvalidKey, "segment"},
		{"file and directory in one body", `{"entries":{"sub":"s","sub/x.md":"x"}}`, team.CodeInvalidKey, "a key cannot be both a file and a directory"},
		{"under a stored file", `{"entries":{"file/x.md":"x"}}`, team.CodeInvalidKey, "is under key"},
		{"deep under a stored file", `{"entries":{"file/a/b/c.md":"x"}}`, team.CodeInvalidKey, "is under key"},
		{"a stored directory", `{"entries":{"dir":"x"}}`, team.CodeInvalidKey, "is a directory of key"},
		{"null value", `{"entries":{"a.md":null}}`, "", "null, want a string"},
		{"number value", `{"entries":{"a.md":1}}`, "", "a number, want a string"},
		{"object value", `{"entries":{"a.md":{"x":"y"}}}`, "", "an object, want a string"},
		{"array value", `{"entries":{"a.md":["x"]}}`, "", "an array, want a string"},
		{"boolean value", `{"entries":{"a.md":true}}`, "", "a boolean"},
		{"entries null", `{"entries":null}`, "", `"entries" is null`},
		{"invalid UTF-8 in content", "{\"entries\":{\"a.md\":\"caf\xe9\"}}", "", "byte 23 is not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"entries\":{\"\xff.md\":\"x\"}}", "", "not valid UTF-8"},
		{"lone high surrogate", `{"entries":{"a.md":"x\ud800y"}}`, "", "lone UTF-16 surrogate"},
		{"lone low surrogate", `{"entries":{"a.md":"\udc00"}}`, "", "lone UTF-16 surrogate"},
		{"high surrogate then a letter", `{"entries":{"a.md":"\ud83d\u0041"}}`, "", "lone UTF-16 surrogate"},
		{"surrogate at the end", `{"entries":{"a.md":"\uD83D"}}`, "", "lone UTF-16 surrogate"},
		{"surrogate in a key", `{"entries":{"\ud800.md":"x"}}`, "", "lone UTF-16 surrogate"},
		{"capitalised field", `{"Entries":{"a.md":"x"}}`, "", `unknown field "Entries"`},
		{"upper-case field", `{"ENTRIES":{"a.md":"x"}}`, "", `unknown field "ENTRIES"`},
		{"capitalised deletes", `{"entries":{},"Deletes":["file"]}`, "", `unknown field "Deletes"`},
		{"unknown field", `{"entries":{},"extra":1}`, "", `unknown field "extra"`},
		{"entries twice", `{"entries":{"a.md":"1"},"entries":{"b.md":"2"}}`, "", "appears twice"},
		{"key twice", `{"entries":{"a.md":"1","a.md":"2"}}`, "", "appears twice"},
		{"deletes not strings", `{"entries":{},"deletes":[1]}`, "", "only strings"},
		{"not an object", `["entries"]`, "", "an array, want an object"},
		{"trailing data", `{"entries":{}} {}`, "", "data after"},
		{"malformed", `{"entries":{"a.md":"x"`, "", "malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, call{method: "PUT", query: "?repo=acme/widgets", token: e.token, body: tt.body, header: map[string]string{"Content-Type": "application/json"}})
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", r.status, r.body)
			}
			er := errorBody(t, r.body)
			code := ""
			if er.Error.Details != nil {
				code = er.Error.Details.ErrorCode
			}
			if code != tt.code {
				t.Errorf("error_code %q, want %q", code, tt.code)
			}
			if !strings.Contains(er.Error.Message, tt.contains) {
				t.Errorf("message %q does not mention %q", er.Error.Message, tt.contains)
			}
			if bytes.Contains(r.body, []byte(fakeGitHubPAT()[:16])) {
				t.Errorf("the response repeats the key: %s", r.body)
			}
		})
	}
	if bytes.Contains(e.logs.Bytes(), []byte(fakeGitHubPAT()[:16])) {
		t.Errorf("the request log repeats the key:\n%s", e.logs)
	}
	after := e.do(t, call{method: "GET", query: "?repo=acme/widgets&view=hashes", token: e.token})
	if !bytes.Equal(before.body, after.body) {
		t.Errorf("refused PUTs changed the data:\nbefore %s\nafter  %s", before.body, after.body)
	}

	// What is allowed next to those: a surrogate pair is one character,
	// and a file may replace a directory deleted in the same update.
	e.put(t, `{"entries":{"smile.md":"\ud83d\ude00","dir":"now a file"},"deletes":["dir/x.md"]}`)
	d, err := e.srv.Store.Get(context.Background(), "acme/widgets", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"file": "a file", "dir": "now a file", "smile.md": "😀"}
	if got := d.Content.Entries; len(got) != len(want) || got["smile.md"] != "😀" || got["dir"] != "now a file" {
		t.Errorf("entries after the allowed PUT = %q, want %q", got, want)
	}
}

func TestValidateEntries(t *testing.T) {
	long := strings.Repeat("x", team.MaxSegmentBytes)
	tests := []struct {
		name    string
		entries map[string]string
		deletes []string
		current map[string]string
		want    string // "" accepted, else in the error
	}{
		{"plain", map[string]string{"a.md": "A", "sub/b.md": "B"}, nil, map[string]string{"c.md": ""}, ""},
		{"255-byte segment", map[string]string{long + "/" + long: "x"}, nil, nil, ""},
		{"256-byte segment", map[string]string{"d/" + long + "x": "x"}, nil, nil, "segment of 256 bytes"},
		{"dir in body", map[string]string{"a": "1", "a/b/c.md": "2"}, nil, nil, "directory of key"},
		{"under stored", map[string]string{"a/b/c.md": "2"}, nil, map[string]string{"a/b": ""}, "is under key"},
		{"stored under", map[string]string{"a/b": "2"}, nil, map[string]string{"a/b/c.md": ""}, "directory of key"},
		{"stored under, deleted", map[string]string{"a/b": "2"}, []string{"a/b/c.md"}, map[string]string{"a/b/c.md": ""}, ""},
		{"under stored, deleted", map[string]string{"a/b/c.md": "2"}, []string{"a/b"}, map[string]string{"a/b": ""}, ""},
		{"prefix is not a directory", map[string]string{"ab/c.md": "1", "a": "2"}, nil, map[string]string{"a.md": ""}, ""},
		{"stored conflict left alone", map[string]string{"z.md": "1"}, nil, map[string]string{"q": "", "q/x.md": ""}, ""},
		{"write and delete", map[string]string{"a.md": "1"}, []string{"a.md"}, nil, "both written and deleted"},
		{"bad delete", nil, []string{"../a.md"}, nil, "clean relative path"},
		{"NUL content", map[string]string{"a.md": "\x00"}, nil, nil, "not text"},
		{"invalid UTF-8 content", map[string]string{"a.md": "\xff"}, nil, nil, "not text"},
	}
	for _, tt := range tests {
		err := team.ValidateEntries(tt.entries, tt.deletes, tt.current)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.want)
		}
	}
}

func TestKeyRef(t *testing.T) {
	secret := fakeGitHubPAT()
	for _, key := range []string{secret, "a.md", "", "日本語のメモ/とても長い名前.md", "a\nb\"c\\d.md"} {
		ref := team.KeyRef(key)
		if len(key) > 4 && strings.Contains(ref, key) {
			t.Errorf("KeyRef(%q) = %q repeats the key", key, ref)
		}
		if strings.ContainsAny(ref, "\n\"\\") {
			t.Errorf("KeyRef(%q) = %q holds characters that need quoting", key, ref)
		}
		if team.KeyRef(key) != ref || (key != "" && team.KeyRef(key+"x") == ref) {
			t.Errorf("KeyRef(%q) is not a stable, distinguishing reference", key)
		}
	}
	if ref := team.KeyRef(secret); !strings.HasPrefix(ref, secret[:12]+"…#") || len(ref) > 40 {
		t.Errorf("KeyRef(secret) = %q, want a 12-byte prefix and a hash", ref)
	}
	var ke *team.KeyError
	err := team.ValidateKey(secret + strings.Repeat("x", 300))
	if !errors.As(err, &ke) || strings.Contains(err.Error(), secret) || ke.Key != secret+strings.Repeat("x", 300) {
		t.Errorf("ValidateKey error %v: want a *KeyError that keeps the key but does not print it", err)
	}
}

// TestPushChecksKeysFirst checks that a client never sends what the server
// would refuse: a local file under a key the server holds as a file fails
// before any PUT, with an error that names the key locally.
func TestPushChecksKeysFirst(t *testing.T) {
	store := newSQLite(t)
	var puts atomic.Int64
	srv := memdirtest.NewTeamServer(t, store, nil)
	h := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			puts.Add(1)
		}
		h.ServeHTTP(w, r)
	})
	if _, err := store.Put(context.Background(), repo, &team.Update{Entries: map[string]string{"sub": "a file"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	memdirtest.WriteFiles(t, dir, map[string]string{"sub/x.md": "x"})
	c := newClient(t, srv.Remote(t, repo, false, nil), dir, nil)
	_, err := c.Push(context.Background())
	var ke *team.KeyError
	if !errors.As(err, &ke) || ke.Key != "sub/x.md" || !team.IsPermanent(err) {
		t.Fatalf("push of sub/x.md over the file sub = %v, want a permanent *KeyError for sub/x.md", err)
	}
	if n := puts.Load(); n != 0 {
		t.Errorf("the client sent %d PUTs the server must refuse", n)
	}
}

func TestDecodePutBody(t *testing.T) {
	in, err := team.DecodePutBody([]byte(` {"deletes":["x.md"], "entries":{"a.md":"A\n\u00e9\ud83d\ude00","b":""}} `))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(in)
	if want := `{"entries":{"a.md":"A\né😀","b":""},"deletes":["x.md"]}`; string(b) != want {
		t.Errorf("decoded %s, want %s", b, want)
	}
	in, err = team.DecodePutBody([]byte(`{}`))
	if err != nil || len(in.Entries) != 0 || in.Deletes != nil {
		t.Errorf("DecodePutBody({}) = %+v, %v; want an empty update", in, err)
	}
	// An escaped backslash before "u" is not an escape of its own.
	in, err = team.DecodePutBody([]byte(`{"entries":{"a.md":"\\ud800"}}`))
	if err != nil || in.Entries["a.md"] != `\ud800` {
		t.Errorf("an escaped backslash: %+v, %v", in, err)
	}
}

// FuzzDecodePutBody checks that what DecodePutBody accepts is exactly what
// encoding/json decodes, so nothing is changed on the way in.
func FuzzDecodePutBody(f *testing.F) {
	for _, s := range []string{`{"entries":{"a.md":"x"}}`, `{"entries":{"a":"\ud83d\ude00"},"deletes":["b"]}`, `{"entries":{"a":"\ud800"}}`, `{"Entries":{}}`, `{"entries":{"a":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := team.DecodePutBody(body)
		if err != nil {
			return
		}
		var std team.PutBody
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("accepted %q, which encoding/json rejects: %v", body, err)
		}
		for k, v := range std.Entries {
			if in.Entries[k] != v {
				t.Fatalf("entry %q: %q, encoding/json says %q", k, in.Entries[k], v)
			}
		}
		if len(std.Entries) != len(in.Entries) {
			t.Fatalf("%d entries, encoding/json says %d", len(in.Entries), len(std.Entries))
		}
		for k, v := range in.Entries {
			if strings.ContainsRune(k+v, '\uFFFD') && !bytes.Contains(body, []byte("\uFFFD")) && !bytes.Contains(body, []byte(`\ufffd`)) && !bytes.Contains(body, []byte(`\uFFFD`)) {
				t.Fatalf("accepted %q, which decodes to U+FFFD", body)
			}
		}
	})
}
