package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
	"github.com/memdir/memdir/ui"
)

const addr = "127.0.0.1:8123"

// fakeKey looks like an AWS access key id to the secret scanner.
const fakeKey = "AKIA" + "Z7QXJ2LMNB4RT6WY"

type world struct {
	t       *testing.T
	dir     string
	d       *memdir.Dir
	review  *review.Queue
	srv     *ui.Server
	h       http.Handler
	cookie  *http.Cookie
	project string
	config  string
}

func newWorld(t *testing.T, opts *ui.Options) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{t: t, dir: filepath.Join(base, "memory"), project: filepath.Join(base, "project"), config: filepath.Join(base, "claude")}
	os.MkdirAll(w.project, 0o700)
	var err error
	w.d, w.review, err = review.Open(w.dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)}, &review.Options{Dir: filepath.Join(base, "review")})
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &ui.Options{}
	}
	if opts.Review == nil {
		opts.Review = w.review
	}
	if opts.Checkpoints == nil {
		opts.Checkpoints = &ui.Checkpoints{ConfigHome: w.config, Project: w.project}
	}
	w.start(opts)
	return w
}

// start serves w.d with opts and signs in as the page does.
func (w *world) start(opts *ui.Options) {
	w.t.Helper()
	var err error
	w.srv, err = ui.New(w.d, addr, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	w.h = w.srv.Handler()
	rec := w.raw(httptest.NewRequest("GET", "http://"+addr+"/?token="+w.srv.Token(), nil))
	if rec.Code != http.StatusSeeOther {
		w.t.Fatalf("sign-in: %d %s", rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == ui.CookieName {
			w.cookie = c
		}
	}
	if w.cookie == nil {
		w.t.Fatal("sign-in set no cookie")
	}
}

func (w *world) raw(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, r)
	if got := rec.Header().Get("Content-Security-Policy"); got != ui.ContentSecurityPolicy {
		w.t.Errorf("%s %s: Content-Security-Policy %q", r.Method, r.URL, got)
	}
	return rec
}

// get sends an authenticated GET and decodes the JSON answer.
func (w *world) get(path string, wantCode int) map[string]any {
	w.t.Helper()
	r := httptest.NewRequest("GET", "http://"+addr+path, nil)
	r.AddCookie(w.cookie)
	return w.decode(w.raw(r), "GET "+path, wantCode)
}

// post sends an authenticated POST with the CSRF token.
func (w *world) post(path string, body any, wantCode int) map[string]any {
	w.t.Helper()
	data, _ := json.Marshal(body)
	r := httptest.NewRequest("POST", "http://"+addr+path, bytes.NewReader(data))
	r.AddCookie(w.cookie)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(ui.CSRFHeader, w.srv.CSRF())
	r.Header.Set("Origin", "http://"+addr)
	return w.decode(w.raw(r), "POST "+path, wantCode)
}

func (w *world) decode(rec *httptest.ResponseRecorder, what string, wantCode int) map[string]any {
	w.t.Helper()
	if rec.Code != wantCode {
		w.t.Fatalf("%s: status %d, want %d: %s", what, rec.Code, wantCode, rec.Body)
	}
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		w.t.Fatalf("%s: not JSON: %v: %s", what, err, rec.Body)
	}
	return v
}

func (w *world) save(name, desc string, t memdir.Type, body string, team bool) string {
	w.t.Helper()
	res, err := w.d.Save(context.Background(), &memdir.Memory{Name: name, Description: desc, Type: t, Body: body}, &memdir.SaveOptions{Team: team})
	if err != nil {
		w.t.Fatal(err)
	}
	return res.Path
}

func (w *world) read(rel string) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(rel)))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

func TestNewRefusesOtherAddresses(t *testing.T) {
	d, _ := memdir.Open(t.TempDir(), nil)
	for _, a := range []string{"0.0.0.0:80", "192.168.1.4:8080", "example.com:80", ":8080", "nonsense"} {
		if _, err := ui.New(d, a, nil); err == nil {
			t.Errorf("New(%q) accepted a non-loopback address", a)
		}
	}
	for _, a := range []string{"127.0.0.1:1", "[::1]:2", "localhost:3"} {
		if _, err := ui.New(d, a, nil); err != nil {
			t.Errorf("New(%q): %v", a, err)
		}
	}
}

func TestSignIn(t *testing.T) {
	w := newWorld(t, nil)
	if !w.cookie.HttpOnly || w.cookie.SameSite != http.SameSiteStrictMode || w.cookie.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", w.cookie)
	}
	if strings.Contains(w.cookie.Value, w.srv.Token()) {
		t.Error("the cookie carries the URL's token")
	}
	if !strings.HasPrefix(w.srv.URL(addr), "http://"+addr+"/?token=") || len(w.srv.Token()) < 32 {
		t.Errorf("URL %q", w.srv.URL(addr))
	}
	// a wrong token
	rec := w.raw(httptest.NewRequest("GET", "http://"+addr+"/?token=nope", nil))
	if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) > 0 {
		t.Errorf("wrong token: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	// tokens differ per run
	other, _ := ui.New(w.d, addr, nil)
	if other.Token() == w.srv.Token() || other.CSRF() == w.srv.CSRF() {
		t.Error("two servers share a token")
	}
	// the page, signed in
	r := httptest.NewRequest("GET", "http://"+addr+"/", nil)
	r.AddCookie(w.cookie)
	rec = w.raw(r)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `<script type="module" src="/app.js">`) {
		t.Errorf("GET /: %d %s", rec.Code, rec.Body)
	}
}

func TestRefusals(t *testing.T) {
	w := newWorld(t, nil)
	w.save("a", "an a", memdir.TypeUser, "x", false)
	csrf := w.srv.CSRF()
	type req struct {
		name, method, path, host, origin, site, ctype, csrf string
		cookie                                              bool
		want                                                int
	}
	ok := req{method: "GET", path: "/api/memories", host: addr, cookie: true, want: 200}
	post := req{method: "POST", path: "/api/memory/delete", host: addr, cookie: true, ctype: "application/json", csrf: csrf, want: 404}
	cases := []req{
		ok,
		func() req { r := ok; r.name = "no cookie"; r.cookie = false; r.want = 401; return r }(),
		func() req {
			r := ok
			r.name = "page without cookie"
			r.path = "/"
			r.cookie = false
			r.want = 401
			return r
		}(),
		func() req {
			r := ok
			r.name = "asset without cookie"
			r.path = "/app.js"
			r.cookie = false
			r.want = 401
			return r
		}(),
		func() req { r := ok; r.name = "foreign host"; r.host = "evil.example:8123"; r.want = 403; return r }(),
		func() req { r := ok; r.name = "DNS rebinding host"; r.host = "attacker.test"; r.want = 403; return r }(),
		func() req { r := ok; r.name = "other port"; r.host = "127.0.0.1:9999"; r.want = 403; return r }(),
		func() req { r := ok; r.name = "localhost alias"; r.host = "localhost:8123"; r.want = 200; return r }(),
		func() req {
			r := ok
			r.name = "foreign origin"
			r.origin = "http://evil.example"
			r.want = 403
			return r
		}(),
		func() req { r := ok; r.name = "null origin"; r.origin = "null"; r.want = 403; return r }(),
		func() req { r := ok; r.name = "cross-site fetch"; r.site = "cross-site"; r.want = 403; return r }(),
		func() req { r := ok; r.name = "same-site fetch"; r.site = "same-site"; r.want = 403; return r }(),
		func() req {
			r := ok
			r.name = "own origin"
			r.origin = "http://" + addr
			r.site = "same-origin"
			r.want = 200
			return r
		}(),
		func() req { r := ok; r.name = "PUT"; r.method = "PUT"; r.want = 405; return r }(),
		func() req {
			r := ok
			r.name = "GET on a POST endpoint"
			r.path = "/api/memory/delete"
			r.want = 405
			return r
		}(),
		func() req {
			r := post
			r.name = "POST on a GET endpoint"
			r.path = "/api/memories"
			r.want = 405
			return r
		}(),
		func() req { r := post; r.name = "POST"; r.want = 400; return r }(), // body "" is not JSON
		func() req { r := post; r.name = "POST without CSRF"; r.csrf = ""; r.want = 403; return r }(),
		func() req { r := post; r.name = "POST wrong CSRF"; r.csrf = "x" + csrf[1:]; r.want = 403; return r }(),
		func() req {
			r := post
			r.name = "POST as a form"
			r.ctype = "application/x-www-form-urlencoded"
			r.want = 415
			return r
		}(),
		func() req {
			r := post
			r.name = "POST foreign origin"
			r.origin = "http://evil.example"
			r.want = 403
			return r
		}(),
		func() req { r := post; r.name = "POST without cookie"; r.cookie = false; r.want = 401; return r }(),
		func() req { r := ok; r.name = "unknown endpoint"; r.path = "/api/nope"; r.want = 404; return r }(),
		func() req { r := ok; r.name = "unknown asset"; r.path = "/nope.js"; r.want = 404; return r }(),
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "http://"+addr+c.path, strings.NewReader(""))
		r.Host = c.host
		if c.cookie {
			r.AddCookie(w.cookie)
		}
		for k, v := range map[string]string{"Origin": c.origin, "Sec-Fetch-Site": c.site, "Content-Type": c.ctype, ui.CSRFHeader: c.csrf} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		if rec := w.raw(r); rec.Code != c.want {
			t.Errorf("%s (%s %s host %s): %d, want %d: %s", c.name, c.method, c.path, c.host, rec.Code, c.want, rec.Body)
		}
	}
	r := httptest.NewRequest("GET", "http://"+addr+"/../../etc/passwd", nil)
	r.AddCookie(w.cookie)
	if rec := w.raw(r); rec.Code == 200 || strings.Contains(rec.Body.String(), "root:") {
		t.Errorf("asset traversal: %d %s", rec.Code, rec.Body)
	}
	if got := w.read("user_a.md"); !strings.Contains(got, "an a") {
		t.Errorf("a refused request changed the memory: %q", got)
	}
}

func TestAssets(t *testing.T) {
	w := newWorld(t, nil)
	for path, ctype := range map[string]string{"/": "text/html", "/app.js": "text/javascript", "/api.js": "text/javascript", "/dom.js": "text/javascript",
		"/chart.js": "text/javascript", "/app.css": "text/css", "/favicon.svg": "image/svg+xml"} {
		r := httptest.NewRequest("GET", "http://"+addr+path, nil)
		r.AddCookie(w.cookie)
		rec := w.raw(r)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		body := strings.ReplaceAll(rec.Body.String(), "http://www.w3.org/2000/svg", "")
		if strings.Contains(body, "http://") && path != "/favicon.svg" || strings.Contains(body, "https://") {
			t.Errorf("%s refers to the network", path)
		}
		if path == "/" && (strings.Contains(body, "<script>") || strings.Contains(body, "style=")) {
			t.Errorf("the page has inline script or style, which the CSP blocks")
		}
	}
}

func TestMemoriesListsEveryMemory(t *testing.T) {
	w := newWorld(t, nil)
	for i := range 205 {
		w.save(fmt.Sprintf("m%03d", i), fmt.Sprintf("memory %d", i), memdir.TypeProject, "body", false)
	}
	w.save("rota", "who is on call", memdir.TypeReference, "pager", true)
	os.WriteFile(filepath.Join(w.dir, "loose.md"), []byte("no frontmatter"), 0o600)
	v := w.get("/api/memories", 200)
	ms := v["memories"].([]any)
	if len(ms) != 207 || v["total"].(float64) != 207 {
		t.Fatalf("listed %d memories (total %v), want 207", len(ms), v["total"])
	}
	byPath := map[string]map[string]any{}
	for _, m := range ms {
		m := m.(map[string]any)
		byPath[m["path"].(string)] = m
	}
	if m := byPath["team/reference_rota.md"]; m == nil || m["team"] != true || m["type"] != "reference" || m["indexed"] != true {
		t.Errorf("team memory: %v", m)
	}
	if m := byPath["loose.md"]; m == nil || m["indexed"] != false || m["has_frontmatter"] != false {
		t.Errorf("loose memory: %v", m)
	}
	// MEMORY.md has 205 lines: Claude Code loads the first 200, so the
	// last memories are indexed but not loaded.
	for _, c := range []struct {
		path   string
		line   float64
		loaded bool
	}{
		{"project_m000.md", 1, true},
		{"project_m199.md", 200, true},
		{"project_m200.md", 201, false},
		{"project_m204.md", 205, false},
		{"team/reference_rota.md", 1, true},
	} {
		if m := byPath[c.path]; m == nil || m["indexed"] != true || m["index_line"] != c.line || m["index_loaded"] != c.loaded {
			t.Errorf("%s: %v; want indexed at line %v, loaded %v", c.path, m, c.line, c.loaded)
		}
	}
}

// TestMemoriesIndexedByTheOverflowFile checks that a memory whose line
// compaction moved to MEMORY-more.md is listed as indexed there, not as
// unindexed.
func TestMemoriesIndexedByTheOverflowFile(t *testing.T) {
	w := newWorld(t, nil)
	w.save("kept", "a memory MEMORY.md lists", memdir.TypeProject, "body", false)
	old := "---\nname: old\ndescription: a memory compaction moved\ntype: project\n---\nbody\n"
	os.WriteFile(filepath.Join(w.dir, "project_old.md"), []byte(old), 0o600)
	more := "---\nname: More index entries\ndescription: moved lines\ntype: reference\n---\n- [Old](project_old.md) — a memory compaction moved\n"
	os.WriteFile(filepath.Join(w.dir, memdir.OverflowIndexName), []byte(more), 0o600)
	ix, err := os.ReadFile(filepath.Join(w.dir, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	ix = append(ix, "- [More index entries](MEMORY-more.md) — moved lines\n"...)
	os.WriteFile(filepath.Join(w.dir, "MEMORY.md"), ix, 0o600)
	os.WriteFile(filepath.Join(w.dir, "loose.md"), []byte("no frontmatter"), 0o600)
	byPath := map[string]map[string]any{}
	for _, m := range w.get("/api/memories", 200)["memories"].([]any) {
		m := m.(map[string]any)
		byPath[m["path"].(string)] = m
	}
	if m := byPath["project_old.md"]; m == nil || m["indexed"] != true || m["index_file"] != "MEMORY-more.md" || m["index_line"] != 6.0 || m["index_loaded"] != false {
		t.Errorf("memory indexed by the overflow file: %v", m)
	}
	if m := byPath["project_kept.md"]; m == nil || m["indexed"] != true || m["index_file"] != nil || m["index_loaded"] != true {
		t.Errorf("memory indexed by MEMORY.md: %v", m)
	}
	if m := byPath["loose.md"]; m == nil || m["indexed"] != false {
		t.Errorf("unindexed memory: %v", m)
	}
}

func TestSearch(t *testing.T) {
	w := newWorld(t, nil)
	w.save("testing", "integration tests hit a real database", memdir.TypeFeedback, "Use Postgres, never mocks.", false)
	w.save("role", "the user is a data scientist", memdir.TypeUser, "Explain Go.", false)
	w.get("/api/search?q=", 400)
	v := w.get("/api/search?q="+url.QueryEscape("postgres"), 200)
	ms := v["memories"].([]any)
	if v["method"] != "lexical" || len(ms) != 1 || ms[0].(map[string]any)["path"] != "feedback_testing.md" || ms[0].(map[string]any)["reason"] == "" {
		t.Errorf("search: %v", v)
	}
	// Why a memory was found is said in words, not the index's stems
	// (databas, test, mock): the memory's own, else the query's.
	for _, c := range []struct{ query, why string }{
		{"database tests mocks", "lexical match on database, tests, mocks"},
		{"mocking the databases", "lexical match on mocks, database"},
		{"Explaining GO", "lexical match on Explain, Go"},
	} {
		ms := w.get("/api/search?q="+url.QueryEscape(c.query), 200)["memories"].([]any)
		if len(ms) == 0 || ms[0].(map[string]any)["reason"] != c.why {
			t.Errorf("search %q: %v; want the first found %q", c.query, ms, c.why)
		}
	}
}

func TestMemory(t *testing.T) {
	w := newWorld(t, nil)
	p := w.save("testing", "integration tests hit a real database", memdir.TypeFeedback,
		"**Use** Postgres. <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))", false)
	v := w.get("/api/memory?path="+p, 200)
	html := v["html"].(string)
	for _, bad := range []string{"<script", "<img", `href="javascript`, "onerror=alert(2)>"} {
		if strings.Contains(html, bad) {
			t.Errorf("rendered body holds %q: %s", bad, html)
		}
	}
	if !strings.Contains(html, "<strong>Use</strong>") || !strings.Contains(html, "&lt;script&gt;") {
		t.Errorf("rendered body: %s", html)
	}
	if v["type"] != "feedback" || v["index_file"] != "MEMORY.md" || len(v["index_lines"].([]any)) != 1 || !strings.HasPrefix(v["sha"].(string), "sha256:") {
		t.Errorf("memory: %v", v)
	}
	if !strings.Contains(v["frontmatter"].(string), "type: feedback") {
		t.Errorf("frontmatter %q", v["frontmatter"])
	}
	h := v["history"].([]any)
	if len(h) != 1 || h[0].(map[string]any)["run"].(map[string]any)["kind"] != "save" || !strings.Contains(h[0].(map[string]any)["diff"].(map[string]any)["patch"].(string), "+name: testing") {
		t.Errorf("history: %v", h)
	}
	// stale memories carry the freshness note
	old := time.Now().Add(-10 * 24 * time.Hour)
	os.Chtimes(filepath.Join(w.dir, p), old, old)
	if v := w.get("/api/memory?path="+p, 200); !strings.Contains(v["freshness"].(string), "10 days") {
		t.Errorf("freshness %q", v["freshness"])
	}
	w.get("/api/memory?path=nope.md", 404)
	w.get("/api/memory", 400)
	for _, bad := range []string{"../outside.md", "/etc/passwd", "MEMORY.md", "%2e%2e/x.md", "a/../../b.md", ".hidden.md"} {
		w.get("/api/memory?path="+url.QueryEscape(bad), 422)
	}
	// a link out of the directory is not followed
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("---\nname: s\ndescription: outside\n---\nTOP SECRET"), 0o600)
	if err := os.Symlink(outside, filepath.Join(w.dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://"+addr+"/api/memory?path=link.md", nil)
	r.AddCookie(w.cookie)
	if rec := w.raw(r); rec.Code == 200 || strings.Contains(rec.Body.String(), "TOP SECRET") {
		t.Errorf("a symlink out of the directory was read: %d %s", rec.Code, rec.Body)
	}
}

func TestSave(t *testing.T) {
	w := newWorld(t, nil)
	p := w.save("testing", "integration tests hit a real database", memdir.TypeFeedback, "old body", false)
	v := w.get("/api/memory?path="+p, 200)
	sha := v["sha"].(string)
	edited := "---\nname: testing\ndescription: tests use a real Postgres\ntype: feedback\nextra: kept\n---\n\nnew body\n"

	// refusals first: nothing changes
	w.post("/api/memory/save", map[string]any{"path": p, "content": edited}, 400)
	w.post("/api/memory/save", map[string]any{"path": p, "content": edited, "sha": sha, "surprise": 1}, 400)
	w.post("/api/memory/save", map[string]any{"path": "../x.md", "content": edited, "sha": sha}, 422)
	w.post("/api/memory/save", map[string]any{"path": "nope.md", "content": edited, "sha": sha}, 404)
	e := w.post("/api/memory/save", map[string]any{"path": p, "content": "no frontmatter here", "sha": sha}, 422)
	if len(e["errors"].([]any)) == 0 {
		t.Errorf("invalid content: %v", e)
	}
	e = w.post("/api/memory/save", map[string]any{"path": p, "content": "---\nname: testing\ndescription:\n---\nx", "sha": sha}, 422)
	if !strings.Contains(fmt.Sprint(e["errors"]), "description is empty") {
		t.Errorf("empty description: %v", e)
	}
	if got := w.read(p); !strings.Contains(got, "old body") {
		t.Fatalf("a refused save changed the file: %q", got)
	}

	// the save
	v = w.post("/api/memory/save", map[string]any{"path": p, "content": edited, "sha": sha}, 200)
	if got := w.read(p); got != edited {
		t.Fatalf("file after save: %q", got)
	}
	if ix := w.read("MEMORY.md"); !strings.Contains(ix, "tests use a real Postgres") {
		t.Errorf("index line not updated: %q", ix)
	}
	run := v["run"].(string)
	// a second save from the stale page is refused
	e = w.post("/api/memory/save", map[string]any{"path": p, "content": edited + "more\n", "sha": sha}, 409)
	if e["current_sha"] != v["sha"] {
		t.Errorf("conflict: %v", e)
	}
	if got := w.read(p); got != edited {
		t.Fatalf("a stale save overwrote the file: %q", got)
	}
	// and it is undoable
	w.post("/api/undo", map[string]any{"run": run}, 200)
	if got := w.read(p); !strings.Contains(got, "old body") {
		t.Errorf("after undo: %q", got)
	}
	if ix := w.read("MEMORY.md"); !strings.Contains(ix, "integration tests hit a real database") {
		t.Errorf("index line after undo: %q", ix)
	}

	// team memory refuses what looks like a credential
	tp := w.save("rota", "who is on call", memdir.TypeReference, "pager", true)
	tv := w.get("/api/memory?path="+tp, 200)
	e = w.post("/api/memory/save", map[string]any{"path": tp, "content": "---\nname: rota\ndescription: who\ntype: reference\n---\nkey " + fakeKey + "\n", "sha": tv["sha"]}, 422)
	if !strings.Contains(fmt.Sprint(e["errors"]), "credential") {
		t.Errorf("secret in team/: %v", e)
	}
	// warnings do not stop a save
	v = w.post("/api/memory/save", map[string]any{"path": tp, "content": "---\nname: rota\ndescription: who\n---\nbody\n", "sha": tv["sha"]}, 200)
	if !strings.Contains(fmt.Sprint(v["warnings"]), "type is missing") {
		t.Errorf("warnings: %v", v)
	}
}

func TestCreateRenameMoveDelete(t *testing.T) {
	w := newWorld(t, nil)
	v := w.post("/api/memory/create", map[string]any{"name": "deploys", "description": "how we ship", "type": "project", "body": "Argo."}, 200)
	p := v["path"].(string)
	if p != "project_deploys.md" || !strings.Contains(w.read(p), "Argo.") || v["run"] == "" {
		t.Fatalf("create: %v", v)
	}
	w.post("/api/memory/create", map[string]any{"name": "deploys", "description": "again", "type": "project"}, 409)
	w.post("/api/memory/create", map[string]any{"name": "x", "description": "y", "type": "nonsense"}, 422)
	w.post("/api/memory/create", map[string]any{"name": "", "description": "y", "type": "user"}, 422)
	w.post("/api/memory/create", map[string]any{"name": "k", "description": "y", "type": "user", "team": true, "body": fakeKey}, 422)
	if _, err := os.Stat(filepath.Join(w.dir, "team", "user_k.md")); err == nil {
		t.Error("a team memory holding a credential was created")
	}

	v = w.post("/api/memory/rename", map[string]any{"path": p, "to": "deploys-howto"}, 200)
	if v["to"] != "deploys-howto.md" || !strings.Contains(w.read("deploys-howto.md"), "Argo.") {
		t.Fatalf("rename: %v", v)
	}
	w.post("/api/memory/create", map[string]any{"name": "other", "description": "o", "type": "user"}, 200)
	w.post("/api/memory/rename", map[string]any{"path": "deploys-howto.md", "to": "user_other.md"}, 409)
	w.post("/api/memory/rename", map[string]any{"path": "deploys-howto.md", "to": "../escape.md"}, 422)
	w.post("/api/memory/rename", map[string]any{"path": "deploys-howto.md", "to": "MEMORY.md"}, 422)

	v = w.post("/api/memory/move-to-team", map[string]any{"path": "deploys-howto.md"}, 200)
	if v["to"] != "team/deploys-howto.md" || !strings.Contains(w.read("team/MEMORY.md"), "deploys-howto.md") {
		t.Fatalf("move to team: %v", v)
	}
	w.post("/api/memory/move-to-team", map[string]any{"path": "team/deploys-howto.md"}, 422)
	w.save("creds", "aws", memdir.TypeReference, "key "+fakeKey, false)
	w.post("/api/memory/move-to-team", map[string]any{"path": "reference_creds.md"}, 422)
	if _, err := os.Stat(filepath.Join(w.dir, "team", "reference_creds.md")); err == nil {
		t.Error("a memory holding a credential moved to team/")
	}

	v = w.post("/api/memory/delete", map[string]any{"path": "team/deploys-howto.md"}, 200)
	if _, err := os.Stat(filepath.Join(w.dir, "team", "deploys-howto.md")); err == nil {
		t.Fatal("delete left the file")
	}
	w.post("/api/memory/delete", map[string]any{"path": "team/deploys-howto.md"}, 404)
	w.post("/api/memory/delete", map[string]any{"path": "../../x.md"}, 422)
	w.post("/api/undo", map[string]any{"run": v["run"]}, 200)
	if !strings.Contains(w.read("team/deploys-howto.md"), "Argo.") || !strings.Contains(w.read("team/MEMORY.md"), "deploys-howto.md") {
		t.Error("undo did not bring the memory and its line back")
	}
	w.post("/api/undo", map[string]any{"run": "../../etc/passwd"}, 400)
	w.post("/api/undo", map[string]any{"run": ""}, 400)
	w.post("/api/undo", map[string]any{"run": "20990101T000000.000000-00000000"}, 404)
}

// A run that changed files outside the memory directory (a CLAUDE.md edit)
// is listed but not undone from the page.
func TestUndoOutsideRefused(t *testing.T) {
	w := newWorld(t, nil)
	claude := filepath.Join(w.project, "CLAUDE.md")
	os.WriteFile(claude, []byte("before\n"), 0o600)
	run, err := memdir.EditExternalFile(context.Background(), w.d.Journal(), "promote", "append to CLAUDE.md", claude,
		func(old []byte, _ bool) ([]byte, error) { return append(old, "after\n"...), nil })
	if err != nil {
		t.Fatal(err)
	}
	runs := w.get("/api/activity", 200)["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["inside"] != false {
		t.Fatalf("activity: %v", runs)
	}
	w.post("/api/undo", map[string]any{"run": run.ID}, 403)
	if got, _ := os.ReadFile(claude); string(got) != "before\nafter\n" {
		t.Errorf("CLAUDE.md after a refused undo: %q", got)
	}
	// its diff comes from the journal alone
	d := w.get("/api/run?id="+url.QueryEscape(run.ID), 200)["diffs"].([]any)[0].(map[string]any)
	if d["available"] != false || d["note"] == "" {
		t.Errorf("diff of an outside run: %v", d)
	}
}

func TestUndoConflict(t *testing.T) {
	w := newWorld(t, nil)
	res, err := w.d.Save(context.Background(), &memdir.Memory{Name: "a", Description: "d", Type: memdir.TypeUser, Body: "one"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.dir, res.Path), []byte("changed by hand"), 0o600)
	e := w.post("/api/undo", map[string]any{"run": res.RunID}, 409)
	if len(e["paths"].([]any)) != 1 {
		t.Errorf("conflict: %v", e)
	}
	if got := w.read(res.Path); got != "changed by hand" {
		t.Errorf("a refused undo changed the file: %q", got)
	}
	w.post("/api/undo", map[string]any{"run": res.RunID, "force": true}, 200)
	if _, err := os.Stat(filepath.Join(w.dir, res.Path)); err == nil {
		t.Error("forced undo of a create left the file")
	}
}

func TestIndexAndDoctor(t *testing.T) {
	w := newWorld(t, nil)
	w.save("a", "first", memdir.TypeUser, "x", false)
	os.WriteFile(filepath.Join(w.dir, "project_orphan.md"), []byte("---\nname: orphan\ndescription: not indexed\ntype: project\n---\nbody\n"), 0o600)
	ix, _ := os.ReadFile(filepath.Join(w.dir, "MEMORY.md"))
	os.WriteFile(filepath.Join(w.dir, "MEMORY.md"), append(ix, []byte("- [gone](gone.md) — nothing\n")...), 0o600)

	v := w.get("/api/index", 200)
	idx := v["indexes"].([]any)
	priv := idx[0].(map[string]any)
	if priv["file"] != "MEMORY.md" || priv["raw_lines"].(float64) != 2 || priv["line_truncated"] != false || !strings.Contains(priv["loaded"].(string), "gone.md") {
		t.Errorf("index: %v", priv)
	}
	if idx[1].(map[string]any)["exists"] != false {
		t.Errorf("team index: %v", idx[1])
	}
	kinds := map[string]bool{}
	for _, f := range v["findings"].([]any) {
		kinds[f.(map[string]any)["kind"].(string)] = true
	}
	if !kinds["unindexed"] || !kinds["dangling-index-line"] {
		t.Fatalf("findings: %v", v["findings"])
	}

	w.post("/api/doctor/fix", map[string]any{"kind": "unindexed", "path": "../x.md"}, 422)
	w.post("/api/doctor/fix", map[string]any{"kind": "unindexed", "path": "nope.md"}, 404)
	w.post("/api/doctor/fix", map[string]any{"kind": "frontmatter", "path": "a.md"}, 400)
	f := w.post("/api/doctor/fix", map[string]any{"kind": "unindexed", "path": "project_orphan.md"}, 200)
	got := w.read("MEMORY.md")
	if !strings.Contains(got, "(project_orphan.md)") || !strings.Contains(got, "gone.md") || f["run"] == nil {
		t.Fatalf("the single fix: %v\n%s", f, got)
	}
	f = w.post("/api/doctor/fix", map[string]any{}, 200)
	if got := w.read("MEMORY.md"); strings.Contains(got, "gone.md") || f["run"] == nil {
		t.Fatalf("every safe fix: %v\n%s", f, got)
	}
	w.post("/api/undo", map[string]any{"run": f["run"]}, 200)
	if got := w.read("MEMORY.md"); !strings.Contains(got, "gone.md") {
		t.Errorf("undoing the fix: %s", got)
	}

	// over the limits
	var b strings.Builder
	for i := range 230 {
		fmt.Fprintf(&b, "- [m%d](m%d.md) — %s\n", i, i, strings.Repeat("word ", 25))
	}
	os.WriteFile(filepath.Join(w.dir, "MEMORY.md"), []byte(b.String()), 0o600)
	priv = w.get("/api/index", 200)["indexes"].([]any)[0].(map[string]any)
	if priv["raw_lines"].(float64) != 230 || priv["line_truncated"] != true || priv["char_truncated"] != true || priv["warning"] == "" {
		t.Errorf("over the limits: %v", priv)
	}
	f = w.post("/api/doctor/fix", map[string]any{"compact": true}, 200)
	after := w.get("/api/index", 200)["indexes"].([]any)[0].(map[string]any)
	if f["run"] == nil || after["raw_chars"].(float64) >= priv["raw_chars"].(float64) {
		t.Errorf("compaction: %v; chars %v -> %v", f, priv["raw_chars"], after["raw_chars"])
	}
}

func TestActivity(t *testing.T) {
	w := newWorld(t, nil)
	p := w.save("a", "first", memdir.TypeUser, "one", false)
	w.save("a", "first", memdir.TypeUser, "two", false)
	v := w.get("/api/activity", 200)
	runs := v["runs"].([]any)
	if len(runs) != 2 {
		t.Fatalf("runs: %v", runs)
	}
	id := runs[0].(map[string]any)["id"].(string)
	r := w.get("/api/run?id="+url.QueryEscape(id), 200)
	d := r["diffs"].([]any)[0].(map[string]any)
	if d["path"] != p || !strings.Contains(d["patch"].(string), "-one") || !strings.Contains(d["patch"].(string), "+two") {
		t.Errorf("run diff: %v", d)
	}
	// the older run's after-content is the newer run's before-content
	r = w.get("/api/run?id="+url.QueryEscape(runs[1].(map[string]any)["id"].(string)), 200)
	if d := r["diffs"].([]any)[0].(map[string]any); d["status"] != "created" || !strings.Contains(d["patch"].(string), "+one") {
		t.Errorf("first run diff: %v", d)
	}
	w.get("/api/run?id=..%2F..%2Fx", 400)
	w.get("/api/run?id=", 400)
	w.get("/api/run?id=20990101T000000", 404)
}

func TestRecallPreview(t *testing.T) {
	w := newWorld(t, nil)
	w.save("testing", "integration tests hit a real database", memdir.TypeFeedback, "Use Postgres, never mocks.", false)
	w.save("role", "the user is a data scientist", memdir.TypeUser, "Explain Go.", false)
	v := w.post("/api/recall/preview", map[string]any{"prompt": "why must integration tests use a real database?"}, 200)
	inj := v["injected"].(string)
	if !strings.HasPrefix(inj, "Memories saved in earlier conversations") || !strings.Contains(inj, "Use Postgres, never mocks.") || strings.Contains(inj, "Explain Go.") {
		t.Errorf("injected: %q", inj)
	}
	sel := v["selector"].(map[string]any)
	cc := v["claude_code"].(map[string]any)
	if !strings.Contains(sel["manifest"].(string), "feedback_testing.md") || sel["tokens"].(float64) <= 0 {
		t.Errorf("selector: %v", sel)
	}
	if cc["count"].(float64) != 2 || !strings.Contains(cc["manifest"].(string), "user_role.md") {
		t.Errorf("claude code manifest: %v", cc)
	}
	// a one-word prompt is skipped, as the hook skips it
	v = w.post("/api/recall/preview", map[string]any{"prompt": "hello"}, 200)
	if v["injected"] != "" || v["result"].(map[string]any)["method"] != "skipped" {
		t.Errorf("one-word prompt: %v", v)
	}
	w.post("/api/recall/preview", map[string]any{"query": "x"}, 400)
}

func TestTeam(t *testing.T) {
	w := newWorld(t, &ui.Options{TeamReason: "no team memory server: pass --url"})
	v := w.get("/api/team", 200)
	if v["configured"] != false || v["reason"] != "no team memory server: pass --url" {
		t.Errorf("team without a server: %v", v)
	}
	if v := w.get("/api/team/history?key=a.md", 200); v["available"] != false {
		t.Errorf("history without a server: %v", v)
	}
	w.get("/api/team/history?key=", 400)
	w.get("/api/team/history?key="+url.QueryEscape("../x.md"), 400)

	// with a server (the SQLite store, spoken to directly)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "team.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	w2 := newWorld(t, nil)
	w2.save("rota", "who is on call", memdir.TypeReference, "pager", true)
	c, err := team.NewClient(store, "acme/widgets", filepath.Join(w2.dir, "team"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w2 = withTeam(t, w2, &ui.Team{Client: c, Repos: store, Repo: "acme/widgets", Server: "sqlite"})
	v = w2.get("/api/team", 200)
	st := v["status"].(map[string]any)
	if v["configured"] != true || len(st["local_only"].([]any)) != 2 || st["server_empty"] != true {
		t.Fatalf("status before a push: %v", v)
	}
	if _, err := c.Push(ctx); err != nil {
		t.Fatal(err)
	}
	st = w2.get("/api/team", 200)["status"].(map[string]any)
	if len(st["local_only"].([]any)) != 0 || st["in_sync"].(float64) != 2 {
		t.Errorf("status after a push: %v", st)
	}
	// The page reads every list as an array, empty ones too.
	for _, k := range []string{"local_only", "modified", "server_changed", "both_changed", "server_only", "conflicts", "skipped"} {
		if _, ok := st[k].([]any); !ok {
			t.Errorf("status %s = %#v, want an array", k, st[k])
		}
	}
	h := w2.get("/api/team/history?key=reference_rota.md", 200)
	if h["available"] != true || len(h["versions"].([]any)) != 1 {
		t.Fatalf("history: %v", h)
	}
	if v := h["versions"].([]any)[0].(map[string]any); v["entry_count"] != 2.0 || v["last_modified"] == nil {
		t.Errorf("history version: %v", v)
	}
	if h := w2.get("/api/team/history?key=never.md", 200); len(h["versions"].([]any)) != 0 {
		t.Errorf("history of an unknown key: %v", h)
	}
}

// TestTeamHistoryNamesAuthors: the protocol's history names each version's
// author by token id; the page shows the token's name when it can list the
// server's tokens, and otherwise the id, saying where the name is.
func TestTeamHistoryNamesAuthors(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "team.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := memdirtest.NewTeamServer(t, store, nil)
	secret, tok, err := team.IssueToken(ctx, store, "acme/widgets", false, "alice's laptop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	remote, err := team.NewRemote(ts.URL, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, nil)
	w.save("rota", "who is on call", memdir.TypeReference, "pager", true)
	c, err := team.NewClient(remote, "acme/widgets", filepath.Join(w.dir, "team"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		team  *ui.Team
		want  string // the author's name, "" for none
		about string // in authors, where the names come from
	}{
		{"the server's tokens at hand", &ui.Team{Client: c, Repos: remote, Tokens: store, Repo: "acme/widgets"}, "alice's laptop", "token list"},
		{"only the protocol", &ui.Team{Client: c, Repos: remote, Repo: "acme/widgets"}, "", "memdir serve token list"},
	} {
		h := withTeam(t, w, tc.team).get("/api/team/history?key=reference_rota.md", 200)
		vs, _ := h["versions"].([]any)
		if len(vs) != 1 {
			t.Fatalf("%s: history %v", tc.name, h)
		}
		v := vs[0].(map[string]any)
		if name, _ := v["author_name"].(string); v["author"] != tok.ID || name != tc.want || !strings.Contains(h["authors"].(string), tc.about) {
			t.Errorf("%s: author %v, author_name %q, authors %q; want %s, %q and a note naming %q", tc.name, v["author"], name, h["authors"], tok.ID, tc.want, tc.about)
		}
	}
}

// withTeam rebuilds w's server on the same directory with a team server.
func withTeam(t *testing.T, w *world, tm *ui.Team) *world {
	t.Helper()
	srv, err := ui.New(w.d, addr, &ui.Options{Team: tm})
	if err != nil {
		t.Fatal(err)
	}
	w.srv, w.h = srv, srv.Handler()
	rec := w.raw(httptest.NewRequest("GET", "http://"+addr+"/?token="+srv.Token(), nil))
	for _, c := range rec.Result().Cookies() {
		w.cookie = c
	}
	return w
}

func TestCheckpoints(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	track := func(session, cwd string) string {
		h, err := checkpoint.New(w.config, session, &checkpoint.Options{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(cwd, "main.go")
		os.WriteFile(f, []byte("package main\n"), 0o600)
		if _, err := h.Track(ctx, f, "turn-1"); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(f, []byte("package main\n\nfunc main() {}\n"), 0o600)
		if _, err := h.Snapshot(ctx, "turn-2"); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := track("s-mine", w.project)
	other := t.TempDir()
	track("s-other", other)

	v := w.get("/api/checkpoints", 200)
	ss := v["sessions"].([]any)
	if len(ss) != 1 || ss[0].(map[string]any)["id"] != "s-mine" || len(ss[0].(map[string]any)["snapshots"].([]any)) != 2 {
		t.Fatalf("sessions: %v", v)
	}
	first := ss[0].(map[string]any)["snapshots"].([]any)[0].(map[string]any)
	backups, _ := first["tracked_file_backups"].(map[string]any)
	if first["message_id"] != "turn-1" || backups["main.go"] == nil || backups["main.go"].(map[string]any)["backup_file_name"] == nil {
		t.Errorf("first snapshot: %v", first)
	}
	d := w.get("/api/checkpoints/diff?session=s-mine&message=turn-1", 200)
	if d["message_id"] != "turn-1" {
		t.Errorf("diff of %v", d["message_id"])
	}
	if files := d["files"].([]any); len(files) != 1 || !strings.Contains(files[0].(map[string]any)["patch"].(string), "+func main() {}") {
		t.Errorf("diff: %v", d)
	}
	r := w.get("/api/checkpoints/rewind?session=s-mine&message=turn-1", 200)
	rep := r["report"].(map[string]any)
	if rep["dry_run"] != true || rep["message_id"] != "turn-1" || len(rep["changes"].([]any)) != 1 {
		t.Errorf("rewind dry run: %v", r)
	}
	if got, _ := os.ReadFile(f); string(got) != "package main\n\nfunc main() {}\n" {
		t.Errorf("the dry run changed the file: %q", got)
	}
	w.get("/api/checkpoints/diff?session=s-other&message=turn-1", 404)
	w.get("/api/checkpoints/diff?session=..%2F..%2Fx&message=turn-1", 400)
	w.get("/api/checkpoints/diff?session=s-mine", 400)
	w.get("/api/checkpoints/rewind?session=s-mine&message=never", 404)
	if n := len(w.get("/api/checkpoints", 200)["sessions"].([]any)); n != 1 {
		t.Errorf("sessions after the dry run: %d", n)
	}
}

func TestSession(t *testing.T) {
	w := newWorld(t, &ui.Options{Version: "9.9"})
	v := w.get("/api/session", 200)
	if v["csrf"] != w.srv.CSRF() || v["dir"] != w.d.Path() || v["version"] != "9.9" {
		t.Errorf("session: %v", v)
	}
	r := httptest.NewRequest("GET", "http://"+addr+"/api/session", nil)
	rec := w.raw(r)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 401 || strings.Contains(string(body), w.srv.CSRF()) {
		t.Errorf("session without the cookie: %d %s", rec.Code, body)
	}
}
