package secrets

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A corpus of real, clean text: the Markdown documentation the system ships
// and the sources in the Go module cache. The rules memdir adds must find
// nothing in it; what the spec's rules find is logged (go test -v).
//
// The module cache's tests and testdata are left out: other libraries keep
// fake credentials there on purpose (a JWT library's test tokens, a database
// driver's DSN tests), which are true positives of the format, not false
// positives. Everything else (package sources, READMEs, docs) is scanned.
//
// Reading is capped at corpusBytes so the test stays within seconds: the
// files are shuffled with a fixed seed and read until the cap, so the sample
// is spread over every module and the same on every run.
func TestCleanCorpus(t *testing.T) {
	t.Parallel()
	limit := int64(corpusBytes)
	if testing.Short() {
		limit = 4 << 20
	}
	// MEMDIR_CORPUS_BYTES raises (or lowers) the cap, to scan the whole
	// module cache by hand: MEMDIR_CORPUS_BYTES=1000000000000.
	if n, err := strconv.ParseInt(os.Getenv("MEMDIR_CORPUS_BYTES"), 10, 64); err == nil {
		limit = n
	}
	own := map[string]bool{}
	for _, r := range rules[len(rules)-ownRuleCount:] {
		own[r.ID] = true
	}
	type source struct {
		name  string
		files []string
	}
	var sources []source
	if files := corpusFiles("/usr/share/doc", func(p string) bool { return strings.HasSuffix(p, ".md") }); files != nil {
		sources = append(sources, source{"/usr/share/doc *.md", files})
	}
	if dir := modCache(); dir != "" {
		files := corpusFiles(dir, func(p string) bool {
			if strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) ||
				strings.Contains(p, string(filepath.Separator)+"cache"+string(filepath.Separator)+"download"+string(filepath.Separator)) {
				return false
			}
			return strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")
		})
		if files != nil {
			sources = append(sources, source{dir + " *.go, *.md (no tests, no testdata)", files})
		}
	}
	if len(sources) == 0 {
		t.Skip("neither /usr/share/doc nor a Go module cache is on this machine")
	}
	for _, src := range sources {
		// Each source is read up to the cap (the documentation, some
		// 14 MB, is usually read whole).
		r := rand.New(rand.NewPCG(12, 6))
		r.Shuffle(len(src.files), func(i, j int) { src.files[i], src.files[j] = src.files[j], src.files[i] })
		var files, bytes int64
		perRule := map[string]int{}
		for _, p := range src.files {
			if bytes >= limit {
				break
			}
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			files++
			bytes += int64(len(data))
			for _, m := range Scan(string(data)) {
				perRule[m.RuleID]++
				if own[m.RuleID] {
					t.Errorf("%s: rule %s reports a secret in clean text", p, m.RuleID)
				}
			}
		}
		var found []string
		for id, n := range perRule {
			found = append(found, id+": "+itoa(n))
		}
		slices.Sort(found)
		t.Logf("%s: scanned %d of %d files, %d bytes; files with findings per rule: %v", src.name, files, len(src.files), bytes, found)
	}
}

// ownRuleCount is how many rules at the end of the catalogue are memdir's.
var ownRuleCount = len(ownRuleIDs)

func itoa(n int) string { return strconv.Itoa(n) }

// corpusFiles lists the regular files under dir that keep accepts, sorted;
// nil when dir does not exist.
func corpusFiles(dir string, keep func(string) bool) []string {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && keep(p) {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// modCache returns the Go module cache directory, or "".
func modCache() string {
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return dir
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
