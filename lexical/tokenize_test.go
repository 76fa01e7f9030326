package lexical

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation only", " ,.;!? -- // ", nil},
		{"english with stopwords", "How do I fix the tests?", []string{"fix", "test"}},
		{"stemming meets", "tests testing tested", []string{"test", "test", "test"}},
		{"pascal case", "TestInvoiceSettlement", []string{"test", "invoic", "settlement", "testinvoicesettlement"}},
		{"camel case", "useShipmentFilters", []string{"us", "shipment", "filter", "useshipmentfilters"}},
		{"acronym then word", "HTTPServer", []string{"http", "server", "httpserver"}},
		{"plural acronym", "ETAs APIs", []string{"eta", "api"}},
		{"snake case", "shipment_facts", []string{"shipment", "fact", "shipment_facts"}},
		{"kebab case", "on-call", []string{"call", "on-call"}},
		{"dotted call", "context.WithoutCancel(ctx)", []string{"context", "without", "cancel", "withoutcancel", "context.withoutcancel", "ctx"}},
		{"path", "internal/pricing", []string{"internal", "price", "internal/pricing"}},
		{"scoped package", "@haulr/ui", []string{"haulr", "ui", "haulr/ui"}},
		{"letters and digits", "pg16 v2", []string{"pg", "16", "pg16", "2", "v2"}},
		{"date", "2026-12-05", []string{"2026", "12", "05", "2026-12-05"}},
		{"version", "Go 1.26", []string{"go", "1", "26", "1.26"}},
		{"trailing joiner is not part", "done. next_", []string{"done", "next"}},
		{"apostrophes", "carrier's don’t", []string{"carrier"}},
		{"chinese bigrams", "部署脚本", []string{"部署", "署脚", "脚本"}},
		{"single han", "用 go", []string{"用", "go"}},
		{"mixed chinese english", "我们的Grafana面板", []string{"我们", "们的", "grafana", "面板"}},
		{"chinese punctuation splits runs", "集群，部署", []string{"集群", "部署"}},
		{"japanese", "テスト", []string{"テス", "スト"}},
		{"korean", "한국어", []string{"한국", "국어"}},
		{"full width ascii", "ＧＯ１２", []string{"go", "12", "go12"}},
		{"accents kept", "Café", []string{"café"}},
		{"single letters dropped", "a b c x", nil},
		{"long whole dropped, parts kept", strings.Repeat("ab_", 30) + "ab", repeat("ab", 31)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tokenize(tt.in)); diff != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestStem(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"tests", "test"},
		{"testing", "test"},
		{"tested", "test"},
		{"caches", "cach"},
		{"caching", "cach"},
		{"cache", "cach"},
		{"queries", "queri"},
		{"query", "queri"},
		{"retries", "retri"},
		{"retrying", "retri"},
		{"deploys", "deploi"},
		{"deployed", "deploi"},
		{"deployment", "deployment"},
		// -ion after s or t meets its verb, in stems long enough.
		{"deletion", "delet"},
		{"deleted", "delet"},
		{"migration", "migrat"},
		{"migrate", "migrat"},
		{"connection", "connect"},
		{"session", "session"},
		{"version", "version"},
		{"action", "action"},
		{"union", "union"},
		{"hopping", "hop"},
		{"hoping", "hope"},
		{"agreed", "agre"},
		{"rename", "renam"},
		{"renamed", "renam"},
		{"status", "statu"},
		{"class", "class"},
		{"string", "string"},
		{"go", "go"},
		{"naïve", "naïve"},
		{"k8s", "k8s"},
	}
	for _, tt := range tests {
		if got := string(stem([]byte(tt.in))); got != tt.want {
			t.Errorf("stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTokenizeReuse checks that a tokenizer's reused buffers never leak
// one text's terms into the next.
func TestTokenizeReuse(t *testing.T) {
	t.Parallel()
	var tok tokenizer
	texts := []string{"TestInvoiceSettlement 部署脚本", "a", "HTTPServer_v2.go", "集群"}
	for _, s := range texts {
		var got []string
		tok.run(s, func(b []byte) { got = append(got, string(b)) })
		if diff := cmp.Diff(Tokenize(s), got); diff != "" {
			t.Errorf("reused tokenizer on %q (-fresh +reused):\n%s", s, diff)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"TestInvoiceSettlement failed again on CI",
		"把部署脚本改成用新的集群",
		"context.WithoutCancel(ctx) @haulr/ui 2026-12-05",
		"ＧＯ１２ café ΣΊΣΥΦΟΣ 한국어 テスト",
		"APIs HTTPServer a_b-c.d/e",
		"\xff\xfe invalid utf8 \xc3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := Tokenize(s)
		for _, term := range terms {
			if term == "" {
				t.Fatalf("empty term from %q", s)
			}
			if len(term) > maxTokenBytes {
				t.Fatalf("term %q longer than %d bytes", term, maxTokenBytes)
			}
			for _, r := range term {
				if unicode.IsUpper(r) && unicode.ToLower(r) != r && unicode.ToUpper(unicode.ToLower(r)) == r {
					t.Fatalf("term %q from %q is not lowercase", term, s)
				}
				if unicode.IsSpace(r) {
					t.Fatalf("term %q from %q holds a space", term, s)
				}
			}
		}
		// Terms of valid text are valid text.
		if utf8.ValidString(s) {
			for _, term := range terms {
				if !utf8.ValidString(term) {
					t.Fatalf("invalid UTF-8 term %q from %q", term, s)
				}
			}
		}
		// The plain-word path changes nothing.
		if diff := cmp.Diff(slowTokens(s), terms); diff != "" {
			t.Fatalf("plain-word path differs on %q (-general +plain):\n%s", s, diff)
		}
		// Tokenizing is deterministic.
		if diff := cmp.Diff(terms, Tokenize(s)); diff != "" {
			t.Fatalf("second run differs (-first +second):\n%s", diff)
		}
	})
}

// slowTokens tokenizes s without the plain-word path.
func slowTokens(s string) []string {
	var out []string
	t := tokenizer{slowOnly: true}
	t.run(s, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// TestPlainWordsAsCompounds checks that the plain-word path emits what
// the general one does, on the labelled sets' text (prose, identifiers,
// Chinese) and on words built to sit at its edges.
func TestPlainWordsAsCompounds(t *testing.T) {
	t.Parallel()
	texts := []string{
		"The quick brown fox, a dog and I.", "A", "a b c", "Hello world", "HTTPServer APIs ETAs",
		"don't carrier's it’s", "snake_case kebab-case pkg.Func a/b/c 2026-12-05 end. end- end_",
		"fooBar FooBar foo123 Foo123 foo\u00e9 caf\u00e9 na\u00efve", "word\u4e2d\u6587 \u4e2d\u6587word",
		strings.Repeat("x", maxTokenBytes) + " " + strings.Repeat("y", maxTokenBytes+1),
		"Ｆoo ｆｏｏ foo\u0301 running runs ran the THE The tHe", "x\ty\nz\r\nand, or; but: so!",
	}
	for _, name := range []string{"recall-dev.json", "recall-oss.json", "recall-app.json"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "eval", name))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	for _, s := range texts {
		if diff := cmp.Diff(slowTokens(s), Tokenize(s)); diff != "" {
			t.Errorf("plain-word path on %.60q (-general +plain):\n%s", s, diff)
		}
	}
}
