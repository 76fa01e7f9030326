package ui

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	ten := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	for _, tc := range []struct {
		name, a, b     string
		want           string
		added, removed int
	}{
		{
			name: "two hunks", a: ten, b: "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n",
			want:  "--- a\n+++ b\n@@ -1,5 +1,5 @@\n one\n-two\n+TWO\n three\n four\n five\n@@ -8,3 +8,4 @@\n eight\n nine\n ten\n+eleven\n",
			added: 2, removed: 1,
		},
		{name: "creation", a: "", b: "x\n", want: "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n", added: 1},
		{name: "deletion", a: "x\ny\n", b: "", want: "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n", removed: 2},
		{name: "one line", a: "a\nb\nc\n", b: "a\nB\nc\n", want: "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", added: 1, removed: 1},
		// A missing final newline is no change, and is not marked.
		{name: "no final newline", a: "a\nb", b: "a\nc", want: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", added: 1, removed: 1},
		{name: "final newline only", a: "a\nb", b: "a\nb\n"},
		{name: "equal", a: "same\n", b: "same\n"},
		{name: "crlf kept", a: "a\r\nb\r\n", b: "a\r\nc\r\n", want: "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n", added: 1, removed: 1},
	} {
		patch, added, removed, approx := unifiedDiff("a", "b", tc.a, tc.b)
		if diff := cmp.Diff(tc.want, patch); diff != "" || added != tc.added || removed != tc.removed || approx {
			t.Errorf("%s: +%d -%d approx=%v, want +%d -%d; patch (-want +got):\n%s", tc.name, added, removed, approx, tc.added, tc.removed, diff)
		}
	}
}
