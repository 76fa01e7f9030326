package memdir

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultUseLogPathIsInTheStateDir(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	lookup := func(k string) (string, bool) { return state, k == "MEMDIR_STATE_DIR" }
	d, err := Open(filepath.Join(t.TempDir(), "memory"), &Options{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Uses().Path(), filepath.Join(state, "uses")+string(filepath.Separator)) {
		t.Errorf("use log at %s, want under %s/uses", d.Uses().Path(), state)
	}
}
