package memdirtest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFiles writes each name → content of files below dir (names are
// slash-separated and relative), creating folders (0700) and files (0600)
// as memdir does; a failure fails the test.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// ReadFile returns the content of the file at path; a failure fails the
// test.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}
