package ui_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/ui"
)

// fuzzRoutes are the API's routes with their methods (ui/api.go's
// endpoints).
var fuzzRoutes = []struct{ method, path string }{
	{"GET", "/api/session"}, {"GET", "/api/memories"}, {"GET", "/api/search"}, {"GET", "/api/memory"},
	{"POST", "/api/memory/save"}, {"POST", "/api/memory/create"}, {"POST", "/api/memory/rename"},
	{"POST", "/api/memory/move-to-team"}, {"POST", "/api/memory/delete"}, {"POST", "/api/undo"},
	{"GET", "/api/index"}, {"POST", "/api/doctor/fix"}, {"GET", "/api/activity"}, {"GET", "/api/run"},
	{"POST", "/api/recall/preview"}, {"GET", "/api/team"}, {"GET", "/api/team/history"},
	{"GET", "/api/checkpoints"}, {"GET", "/api/checkpoints/diff"}, {"GET", "/api/checkpoints/rewind"},
	{"GET", "/api/review"}, {"POST", "/api/review/accept"}, {"POST", "/api/review/reject"},
}

// FuzzAPI sends every API route an arbitrary query and body, signed in as
// the page is: each gets an answer, never a panic.
func FuzzAPI(f *testing.F) {
	for _, s := range []struct {
		route       uint8
		query, body string
	}{
		{3, "path=a.md", ""},
		{3, "path=../../etc/passwd", ""},
		{2, "q=deploy%20policy", ""},
		{5, "", `{"name":"a","description":"d","type":"user","body":"b"}`},
		{5, "", `{"name":"\xff","description":"d","type":"user","body":"b","team":true}`},
		{4, "", `{"path":"a.md","content":"---\nname: a\n---\n","sha":"x"}`},
		{6, "", `{"path":"a.md","to":"../b.md"}`},
		{7, "", `{"path":"a.md"}`},
		{8, "", `{"path":"team/../a.md"}`},
		{9, "", `{"run":"2"}`},
		{11, "", `{"compact":true}`},
		{13, "id=..%2f..", ""},
		{14, "", `{"prompt":"how do we deploy","session":"s"}`},
		{18, "session=x&file=..%2f..%2fetc", ""},
		{19, "session=%00", ""},
		{21, "", `{"id":"../x"}`},
		{4, "", `[`},
		{5, "", `{"name":null,"type":7}`},
	} {
		f.Add(s.route, s.query, []byte(s.body))
	}
	base := f.TempDir()
	d, q, err := review.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)}, &review.Options{Dir: filepath.Join(base, "review")})
	if err != nil {
		f.Fatal(err)
	}
	project := filepath.Join(base, "project")
	os.MkdirAll(project, 0o700)
	srv, err := ui.New(d, addr, &ui.Options{Review: q, Checkpoints: &ui.Checkpoints{ConfigHome: filepath.Join(base, "claude"), Project: project}})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+addr+"/?token="+srv.Token(), nil))
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == ui.CookieName {
			cookie = c
		}
	}
	if cookie == nil {
		f.Fatal("sign-in set no cookie")
	}
	f.Fuzz(func(t *testing.T, route uint8, query string, body []byte) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		r := httptest.NewRequest(rt.method, "http://"+addr+rt.path, bytes.NewReader(body))
		r.URL.RawQuery = query
		r.AddCookie(cookie)
		if rt.method == "POST" {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set(ui.CSRFHeader, srv.CSRF())
			r.Header.Set("Origin", "http://"+addr)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
}
