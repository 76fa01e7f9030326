package team

import (
	"strings"

	"github.com/memdir/memdir"
)

// dropSecretIndexLines removes, from the team MEMORY.md about to be pushed
// (local[memdir.EntrypointName]), every line that links to a file skipped
// because it holds a potential secret. The file stays local, so its line
// would reach teammates as a link to nothing and announce the file's title
// and hook, which may name what the secret is for. Every other byte of the
// index is kept; the local MEMORY.md itself is not changed.
func dropSecretIndexLines(local map[string]string, skips []Skip) {
	text, ok := local[memdir.EntrypointName]
	if !ok {
		return
	}
	secret := map[string]bool{}
	for _, s := range skips {
		if s.Reason == SkipSecret {
			secret[s.Key] = true
		}
	}
	if len(secret) == 0 {
		return
	}
	var b strings.Builder
	b.Grow(len(text))
	for _, line := range strings.SplitAfter(text, "\n") {
		if e, ok := memdir.ParseIndexLine(strings.TrimRight(line, "\n")); ok && secret[e.Path()] {
			continue
		}
		b.WriteString(line)
	}
	local[memdir.EntrypointName] = b.String()
}
