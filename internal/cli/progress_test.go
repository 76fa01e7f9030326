package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/progress"
)

func TestProgressTiming(t *testing.T) {
	for _, tc := range []struct {
		value    string
		terminal bool
		want     progress.Options
		on       bool
	}{
		{"", false, progress.Options{Delay: time.Second, Every: 5 * time.Second}, true},
		{"", true, progress.Options{Terminal: true, Delay: time.Second, Every: 200 * time.Millisecond}, true},
		{"30s", false, progress.Options{Delay: time.Second, Every: 30 * time.Second}, true},
		{"30s", true, progress.Options{Terminal: true, Delay: time.Second, Every: 200 * time.Millisecond}, true},
		{"0", false, progress.Options{}, true},
		{"nonsense", false, progress.Options{Delay: time.Second, Every: 5 * time.Second}, true},
		{"off", false, progress.Options{Delay: time.Second, Every: 5 * time.Second}, false},
	} {
		e := &Env{StderrIsTerminal: tc.terminal, LookupEnv: func(k string) (string, bool) { return tc.value, k == "MEMDIR_PROGRESS" && tc.value != "" }}
		got, on := e.progressOptions()
		if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b func() time.Time) bool { return a == nil && b == nil })); diff != "" || on != tc.on {
			t.Errorf("MEMDIR_PROGRESS=%q terminal %v: on %v, want %v; options (-want +got):\n%s", tc.value, tc.terminal, on, tc.on, diff)
		}
	}
}

func TestProgressQuiet(t *testing.T) {
	var b bytes.Buffer
	e := &Env{Stderr: &b, LookupEnv: func(k string) (string, bool) { return "0", k == "MEMDIR_PROGRESS" }}
	if r := e.Progress("x", true); r != nil {
		t.Errorf("quiet: got a reporter")
	}
	r := e.Progress("x", false)
	r.Step("y", 1, 2)
	r.Stop()
	if b.Len() == 0 {
		t.Errorf("MEMDIR_PROGRESS=0: nothing shown")
	}
}
