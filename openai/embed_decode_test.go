package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseNumbers must read every vector as encoding/json reads it into
// float64s converted to float32, which is how the SDK's vectors were made.
func TestParseNumbersAgreesWithEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var inputs []string
	for range 200 {
		n := r.IntN(40)
		parts := make([]string, n)
		for i := range parts {
			x := r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6))
			switch r.IntN(5) {
			case 0:
				parts[i] = fmt.Sprintf("%g", x)
			case 1:
				parts[i] = fmt.Sprintf("%.17e", x)
			case 2:
				parts[i] = fmt.Sprint(float32(x))
			case 3:
				parts[i] = fmt.Sprintf("%d", r.IntN(1000)-500)
			default:
				parts[i] = fmt.Sprintf("%E", x)
			}
		}
		sep := []string{",", ", ", " ,\n\t", ",\r\n  "}[r.IntN(4)]
		inputs = append(inputs, "["+strings.Join(parts, sep)+"]", "[ \n"+strings.Join(parts, sep)+"\n ]")
	}
	inputs = append(inputs, "[]", "[ ]", "[0]", "[-0]", "[1e-45]", "[3.4028235e38]", "[1e39]", "[-1e39]", "[1E+2, 2e-2]")
	for _, in := range inputs {
		var want []float64
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got, err := parseNumbers([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d numbers, want %d", in, len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(float32(want[i])) {
				t.Fatalf("%q: number %d is %v, want %v", in, i, got[i], float32(want[i]))
			}
		}
	}
}

func TestEmbedReplyVectors(t *testing.T) {
	packed := make([]byte, 12)
	for i, x := range []float32{0.5, -2, 3.25} {
		binary.LittleEndian.PutUint32(packed[4*i:], math.Float32bits(x))
	}
	b64 := base64.StdEncoding.EncodeToString(packed)
	tests := []struct {
		body    string
		want    [][]float32
		wantErr string
	}{
		{`{"data":[{"embedding":[0.5,-2,3.25],"index":0}],"usage":{"prompt_tokens":3}}`, [][]float32{{0.5, -2, 3.25}}, ""},
		{`{"data":[{"embedding":"` + b64 + `","index":0}]}`, [][]float32{{0.5, -2, 3.25}}, ""},
		{`{"data":[{"embedding":null}]}`, [][]float32{nil}, ""},
		{`{"data":[{"embedding":[]}]}`, [][]float32{{}}, ""},
		{`{"data":[{"embedding":[1,null]}]}`, nil, "component 1"},
		{`{"data":[{"embedding":[1,"2"]}]}`, nil, "component 1"},
		{`{"data":[{"embedding":[1,[2]]}]}`, nil, "component 1"},
		{`{"data":[{"embedding":[{"a":1,"b":2}]}]}`, nil, "component 0"},
		{`{"data":[{"embedding":{"x":1}}]}`, nil, "not a list"},
		{`{"data":[{"embedding":"` + b64[:len(b64)-4] + `"}]}`, nil, "multiple of 4"},
		{`{"data":[{"embedding":[0.1,`, nil, "unexpected end"},
	}
	for _, tt := range tests {
		r, err := decodeEmbedReply([]byte(tt.body))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one mentioning %q", tt.body, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		var got [][]float32
		for _, d := range r.Data {
			got = append(got, []float32(d.Embedding))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.body, diff)
		}
	}
}
