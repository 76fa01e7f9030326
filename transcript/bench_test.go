package transcript

import (
	"bytes"
	"fmt"
	"testing"
)

// synthSession returns a JSONL session of n turns, each a prompt, an
// assistant response split over two records with a tool call, a tool
// result of about 2 KB and a final answer: about 1.6 KB × 5 records a turn.
func synthSession(n int) []byte {
	var b bytes.Buffer
	parent := "null"
	result := bytes.Repeat([]byte("line of tool output "), 100)
	rec := func(uuid, typ, body string) {
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/repo","sessionId":"s","version":"2.1.332","gitBranch":"main","type":%q,%s,"uuid":%q,"timestamp":"2026-11-20T09:14:02.201Z"}`+"\n", parent, typ, body, uuid)
		parent = `"` + uuid + `"`
	}
	for i := range n {
		rec(fmt.Sprintf("u%d", i), "user", fmt.Sprintf(`"message":{"role":"user","content":"turn %d: please look at the settlement cutoff again"}`, i))
		usage := `"usage":{"input_tokens":1200,"output_tokens":95,"cache_creation_input_tokens":0,"cache_read_input_tokens":5000}`
		rec(fmt.Sprintf("a%d-1", i), "assistant", fmt.Sprintf(`"message":{"id":"msg_%d","role":"assistant","model":"m","content":[{"type":"text","text":"Reading the file."}],%s},"requestId":"req_%d"`, i, usage, i))
		rec(fmt.Sprintf("a%d-2", i), "assistant", fmt.Sprintf(`"message":{"id":"msg_%d","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"file_path":"/repo/x.go"}}],%s},"requestId":"req_%d"`, i, i, usage, i))
		rec(fmt.Sprintf("r%d", i), "user", fmt.Sprintf(`"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`, i, result))
		rec(fmt.Sprintf("f%d", i), "assistant", fmt.Sprintf(`"message":{"id":"msg_f%d","role":"assistant","model":"m","content":[{"type":"text","text":"Done with turn %d."}],%s},"requestId":"req_f%d"`, i, i, usage, i))
	}
	return b.Bytes()
}

func BenchmarkRead(b *testing.B) {
	for _, turns := range []int{100, 2000} {
		data := synthSession(turns)
		b.Run(fmt.Sprintf("%dturns", turns), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				t, err := Read(bytes.NewReader(data))
				if err != nil || len(t.messages) != 4*turns {
					b.Fatalf("read %d messages, %v; want %d", len(t.messages), err, 4*turns)
				}
			}
		})
	}
}
