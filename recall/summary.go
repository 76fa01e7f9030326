package recall

import (
	"fmt"
	"strings"
)

// Summary says in a line or two, for a person (the CLI's and the hooks'
// standard error), how the memories were chosen: by which method, among
// how many candidates, at what token cost, and any note the result
// carries. Each line ends with a newline.
func (r *Result) Summary() string {
	var b strings.Builder
	var how string
	switch r.Method {
	case MethodSkipped, MethodEmpty:
		fmt.Fprintf(&b, "recall: nothing looked up: %s\n", r.Reason)
		return b.String()
	case MethodModel:
		how = fmt.Sprintf("the model chose %s from a manifest of %d (%d ranked, ~%d tokens; Claude Code's would be ~%d)", plural(len(r.Memories), "memory", "memories"), len(r.Shortlist), r.Ranked, r.ManifestTokens, r.BaselineTokens)
	case MethodLexical:
		how = fmt.Sprintf("lexical ranking (no model configured) found %s", plural(len(r.Memories), "memory", "memories"))
	case MethodHybrid:
		how = fmt.Sprintf("hybrid ranking, lexical and embeddings (no model configured), found %s", plural(len(r.Memories), "memory", "memories"))
	case MethodFallback:
		how = fmt.Sprintf("lexical ranking found %s", plural(len(r.Memories), "memory", "memories"))
	}
	fmt.Fprintf(&b, "recall: %s among %s", how, plural(r.Candidates, "candidate", "candidates"))
	if r.Usage.Calls > 0 || r.Usage.InputTokens > 0 {
		fmt.Fprintf(&b, "; model tokens: %d in, %d out", r.Usage.InputTokens, r.Usage.OutputTokens)
	}
	b.WriteByte('\n')
	if r.Reason != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Reason)
	}
	switch {
	case r.EmbedError != "":
		fmt.Fprintf(&b, "note: embeddings took no part: %s\n", r.EmbedError)
	case r.VectorsMissing > 0:
		fmt.Fprintf(&b, "note: %s without a vector yet ranked lexically ('memdir embed' fills them)\n", plural(r.VectorsMissing, "memory", "memories"))
	}
	return b.String()
}

// plural is "1 one" or "N many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
