package team_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/team"
)

// bodyServer answers every GET with body.
func bodyServer(t *testing.T, body string) *team.Remote {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	r, err := team.NewRemote(ts.URL, "mdt_test", &team.RemoteOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPullStreamsTheResponse: a pull does not hold the server's response
// in memory. It keeps it in a file beside the sync state while it brings
// the entries in one by one (so the file is there when each is written)
// and removes it afterwards; it reads any field order and skips unknown
// fields, as a decoded response would.
func TestPullStreamsTheResponse(t *testing.T) {
	body := `{"content":{"entries":{"MEMORY.md":"- [A](a.md) — a\n","a.md":"A \"q\" \\ é 😀\n","sub/b.md":"B"},"unknown":{"big":[1,2,{"x":"y"}]},` +
		`"entryChecksums":{"MEMORY.md":"sha256:1","a.md":"sha256:2","sub/b.md":"sha256:3"}},"version":7,"checksum":"sha256:abc","extra":"ignored"}`
	dir := filepath.Join(t.TempDir(), "team")
	var c *team.Client
	var spooled []string
	c = newClient(t, bodyServer(t, body), dir, &team.ClientOptions{Screen: func(abs, old string, exists bool, content string) error {
		if _, err := os.Stat(filepath.Join(c.StateDir(), "acme", "widgets", "pull.json")); err == nil {
			spooled = append(spooled, filepath.Base(abs))
		}
		return nil
	}})
	res, err := c.Pull(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 7 || res.Checksum != "sha256:abc" || !cmp.Equal([]string{"MEMORY.md", "a.md", "sub/b.md"}, res.Written) {
		t.Errorf("pull = %+v", res)
	}
	want := map[string]string{"MEMORY.md": "- [A](a.md) — a\n", "a.md": "A \"q\" \\ é 😀\n", "sub/b.md": "B"}
	if diff := cmp.Diff(want, readTree(t, dir)); diff != "" {
		t.Errorf("team directory (-want +got):\n%s", diff)
	}
	// In key order, the index last.
	if diff := cmp.Diff([]string{"a.md", "b.md", "MEMORY.md"}, spooled); diff != "" {
		t.Errorf("entries written while the response was spooled (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(c.StateDir(), "acme", "widgets", "pull.json")); err == nil {
		t.Errorf("the spooled response is left behind")
	}
}

// TestPullRefusesMalformedResponses: a response that is cut short, has
// trailing data, or names a key twice writes nothing, and the error says
// the response is malformed.
func TestPullRefusesMalformedResponses(t *testing.T) {
	for name, body := range map[string]string{
		"truncated":     `{"version":1,"content":{"entries":{"a.md":"A","b.md":"B"`,
		"key twice":     `{"version":1,"content":{"entries":{"a.md":"A","a.md":"other A"}}}`,
		"trailing data": `{"version":1,"content":{"entries":{"a.md":"A"}}}{"x":1}`,
		"not a string":  `{"version":1,"content":{"entries":{"a.md":"A","b.md":["B"]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "team")
			c := newClient(t, bodyServer(t, body), dir, nil)
			_, err := c.Pull(context.Background(), false)
			if err == nil || !strings.Contains(err.Error(), "malformed response") {
				t.Errorf("pull = %v, want a malformed response", err)
			}
			if got := readTree(t, dir); len(got) != 0 {
				t.Errorf("a malformed response wrote %q", got)
			}
		})
	}
}
