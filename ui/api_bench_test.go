package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/ui"
)

// BenchmarkAPIMemories is the page's listing, GET /api/memories, on a
// directory of n memories every one indexed (the newest in MEMORY.md, the
// rest in MEMORY-more.md, as 'memdir doctor --fix --compact' leaves them).
// Its cost per memory should not grow with n.
func BenchmarkAPIMemories(b *testing.B) {
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			base := b.TempDir()
			dir := filepath.Join(base, "memory")
			if err := c.WriteIndexed(context.Background(), dir, n); err != nil {
				b.Fatal(err)
			}
			d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil), NoUses: true})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := ui.New(d, addr, &ui.Options{})
			if err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+addr+"/?token="+srv.Token(), nil))
			var cookie *http.Cookie
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == ui.CookieName {
					cookie = ck
				}
			}
			if cookie == nil {
				b.Fatal("sign-in set no cookie")
			}
			for b.Loop() {
				r := httptest.NewRequest("GET", "http://"+addr+"/api/memories", nil)
				r.AddCookie(cookie)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET /api/memories: %d %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/memory")
		})
	}
}
