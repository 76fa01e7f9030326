package sanitize

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestSanitizePath(t *testing.T) {
	t.Parallel()
	deep := "/Users/alice/work/" + strings.Repeat("deeply-nested-folder/", 10) + "service"
	cjk := "/home/bob/项目/" + strings.Repeat("模块/", 70) + "api"
	for _, tc := range []struct {
		name    string
		in      string
		runtime Runtime
		want    string // full result, or the part after the first 190 characters when tail is set
		tail    bool
	}{
		{name: "simple", in: "/Users/foo/my_proj.v2", want: "-Users-foo-my-proj-v2"},
		{name: "spaces and colon", in: `C:\Users\a b`, want: "C--Users-a-b"},
		{name: "BMP non-ASCII is one dash per unit", in: "/home/bob/项目", want: "-home-bob---"},
		{name: "astral is two dashes", in: "/x/😀", want: "-x---"},
		{name: "accented", in: "/café", want: "-caf-"},
		{name: "exactly 200 units kept whole", in: strings.Repeat("a", 200), want: strings.Repeat("a", 200)},
		// Vectors computed with the real Bun and Node runtimes.
		{name: "long ASCII bun", in: deep, runtime: Bun, want: "ly-nested--1wxs3ky8fi6t6", tail: true},
		{name: "long ASCII node", in: deep, runtime: Node, want: "ly-nested--xk4xw", tail: true},
		{name: "long CJK bun", in: cjk, runtime: Bun, want: "-----------ibj10tdfu5ni", tail: true},
		{name: "long CJK node", in: cjk, runtime: Node, want: "-----------izm2gr", tail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Path(tc.in, tc.runtime)
			if tc.tail {
				if len(got) < 190 {
					t.Fatalf("SanitizePath = %q, shorter than 190", got)
				}
				got = got[190:]
			}
			if got != tc.want {
				t.Errorf("Path(%q, %v) = %q, want %q", tc.in, tc.runtime, got, tc.want)
			}
		})
	}
}

func TestSanitizePathLengthRule(t *testing.T) {
	t.Parallel()
	// 199 ASCII units plus one astral character: 201 units, so hashed.
	in := strings.Repeat("a", 199) + "😀"
	got := Path(in, Bun)
	if !strings.HasPrefix(got, strings.Repeat("a", 199)+"--") {
		t.Fatalf("prefix wrong: %q", got)
	}
	if len(utf16.Encode([]rune(in))) != 201 {
		t.Fatal("test input is not 201 units")
	}
	if got[:200] != strings.Repeat("a", 199)+"-" || got[200] != '-' {
		t.Errorf("SanitizePath = %q: want the first 200 sanitised units, then '-' and a hash", got)
	}
}

func TestWyhashSmallInputs(t *testing.T) {
	t.Parallel()
	// Every length class of the algorithm: empty, 1-3, 4-16, 17-47, 48+, and
	// exact multiples of 48 (the loop runs while i+48 < n).
	seen := map[uint64]int{}
	for n := 0; n <= 150; n++ {
		h := wyhash([]byte(strings.Repeat("x", n)), 0)
		if prev, dup := seen[h]; dup {
			t.Fatalf("wyhash collides for lengths %d and %d", prev, n)
		}
		seen[h] = n
	}
}
