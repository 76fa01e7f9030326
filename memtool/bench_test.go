package memtool

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// oneMiB returns a text file of exactly 1 MiB: 16,384 lines of 64 bytes,
// with a unique marker on the middle line.
func oneMiB() string {
	var b strings.Builder
	for i := range 16384 {
		line := fmt.Sprintf("line %05d: the user prefers small, focused commits", i)
		if i == 8192 {
			line = fmt.Sprintf("line %05d: MARKER-A", i)
		}
		b.WriteString(line + strings.Repeat(".", 63-len(line)) + "\n")
	}
	return b.String()
}

func BenchmarkView(b *testing.B) {
	data := oneMiB()
	for _, bc := range []struct {
		name string
		in   string
	}{
		{"whole-capped", `{"command":"view","path":"/memories/big.md"}`},
		{"range-tail", `{"command":"view","path":"/memories/big.md","view_range":[16000,-1]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tool, root := mustTool(b, &Options{MaxFileBytes: 2 << 20})
			mustWrite(b, root, map[string]string{"big.md": data})
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := tool.Execute(context.Background(), []byte(bc.in)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStrReplace(b *testing.B) {
	data := oneMiB()
	tool, root := mustTool(b, &Options{MaxFileBytes: 2 << 20})
	mustWrite(b, root, map[string]string{"big.md": data})
	ins := []string{
		`{"command":"str_replace","path":"/memories/big.md","old_str":"MARKER-A","new_str":"MARKER-B"}`,
		`{"command":"str_replace","path":"/memories/big.md","old_str":"MARKER-B","new_str":"MARKER-A"}`,
	}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		if _, err := tool.Execute(context.Background(), []byte(ins[i%2])); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
