package memdirtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/team"
)

// TestTeamReplicas checks that two servers sharing one database behave as
// one server: a and b are clients of the two (team.Remote values with
// read-write tokens for repo, which must have no data yet). Writes through
// one are seen by the other at once, versions count up by one across
// both, checksums agree, If-None-Match and If-Match use the checksum from
// either, and of writers racing on both from one checksum exactly one
// wins.
func TestTeamReplicas(t *testing.T, repo string, a, b team.Repos) {
	ctx := context.Background()
	replicas := []team.Repos{a, b}
	want := map[string]string{}
	var etag string
	for i := range 24 {
		w, r := replicas[i%2], replicas[(i+1)%2]
		k := fmt.Sprintf("k%02d.md", i%7)
		want[k] = fmt.Sprintf("write %d through replica %d", i, i%2)
		d, err := w.Put(ctx, repo, &team.Update{Entries: map[string]string{k: want[k]}, IfMatch: etag})
		if err != nil {
			t.Fatalf("write %d through replica %d with the other's ETag: %v", i, i%2, err)
		}
		sum := team.RepoChecksum(checksums(want))
		if d.Version != int64(i+1) || d.Checksum != sum {
			t.Fatalf("write %d: version %d checksum %s, want version %d checksum %s", i, d.Version, d.Checksum, i+1, sum)
		}
		_, err = r.Get(ctx, repo, &team.GetOptions{IfNoneMatch: d.Checksum})
		if !errors.Is(err, team.ErrNotModified) {
			t.Fatalf("write %d: the other replica answers If-None-Match with the new checksum: %v, want not modified", i, err)
		}
		if etag != "" {
			got, err := r.Get(ctx, repo, &team.GetOptions{IfNoneMatch: etag})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantData(repo, d.Version, cloneMap(want)), got, ignoreServerFields); diff != "" {
				t.Fatalf("write %d: the other replica's full GET (-want +got):\n%s", i, diff)
			}
		}
		if i > 0 {
			// The previous checksum is stale on both replicas now.
			_, err := r.Put(ctx, repo, &team.Update{Entries: map[string]string{"stale.md": "x"}, IfMatch: etag})
			if !errors.Is(err, team.ErrConflict) {
				t.Fatalf("write %d: a stale If-Match on the other replica: %v, want a conflict", i, err)
			}
		}
		etag = d.Checksum
	}

	// Writers on both replicas race from one checksum: one wins.
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = replicas[i%2].Put(ctx, repo, &team.Update{Entries: map[string]string{"race.md": fmt.Sprint(i)}, IfMatch: etag})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both won from one checksum", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, team.ErrConflict):
			t.Errorf("writer %d: %v, want success or a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	want["race.md"] = fmt.Sprint(winner)
	var hist [2][]team.VersionInfo
	for i, r := range replicas {
		got, err := r.Get(ctx, repo, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantData(repo, 25, cloneMap(want)), got, ignoreServerFields); diff != "" {
			t.Errorf("replica %d after the race (-want +got):\n%s", i, diff)
		}
		if hist[i], err = r.History(ctx, repo, nil); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(hist[0], hist[1]); diff != "" || len(hist[0]) != 25 {
		t.Errorf("the replicas' histories differ or are not 25 versions long (-a +b):\n%s", diff)
	}
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}
