package transcript_test

import (
	"fmt"
	"log"

	"github.com/memdir/memdir/transcript"
)

func ExampleReadFile() {
	t, err := transcript.ReadFile("testdata/compaction.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	prompt, _ := t.LastHumanPrompt()
	fmt.Println("last prompt:", prompt.HumanText())
	fmt.Println("compactions:", len(t.Boundaries()))
	for _, m := range t.SinceLastCompaction() {
		fmt.Printf("%s summary=%v %q\n", m.Role, m.IsCompactSummary, m.HumanText()[:min(len(m.HumanText()), 40)])
	}
	// An extraction cursor: what came after the first reply?
	rest, ok := t.Since("11111111-0000-4000-8000-000000000002")
	fmt.Println("after cursor:", len(rest), ok)
	// Output:
	// last prompt: open the PR
	// compactions: 2
	// user summary=true "This session is being continued from a p"
	// user summary=false "open the PR"
	// assistant summary=false "Opened PR #4812."
	// after cursor: 10 true
}
