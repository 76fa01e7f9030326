package secrets

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// markdownDoc returns a Markdown document of exactly size bytes that looks
// like a large memory file: headings, prose, lists, tables and code, with the
// near misses real notes contain (kebab-case words, hashes, UUIDs, base64,
// JWT headers, elided keys, placeholder tokens). The secrets, if any, are
// spread evenly through it.
func markdownDoc(size int, secrets ...string) string {
	r := rand.New(rand.NewPCG(250, 0))
	words := strings.Fields(`the a to of and in for on with is it that this be are as was we
		memory team sync push pull file key token deploy build release test server client index
		recall note user project cache task ask disk desk risk config secret rotate revoke expires
		scope repo branch merge commit review should could would before after because when where`)
	// Near misses: words that contain a keyword of some rule. About one word
	// in fifty is one of them, which is far more than real notes have.
	nearMisses := strings.Fields(`review-notes task-list risk-register desk-check sk-learn SKU ASK
		TASK DISK hf_hub_download npm_config_cache dapi-docs pul-request glpat-prefix xoxb-style
		shpat-like AIzaSy Q~ SG.io ghp_ eyJhbGciOi`)
	hex := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	sentence := func() string {
		n := 6 + r.IntN(14)
		ws := make([]string, n)
		for i := range ws {
			if r.IntN(50) == 0 {
				ws[i] = nearMisses[r.IntN(len(nearMisses))]
			} else {
				ws[i] = words[r.IntN(len(words))]
			}
		}
		return strings.ToUpper(ws[0][:1]) + strings.Join(ws, " ")[1:] + "."
	}
	paragraph := func() string { return sentence() + " " + sentence() + " " + sentence() + "\n\n" }
	// Prose is most of a memory file, so paragraphs are listed several times.
	blocks := []func() string{
		func() string { return "## " + sentence() + "\n\n" },
		paragraph, paragraph, paragraph, paragraph, paragraph, paragraph,
		func() string {
			return "- " + sentence() + "\n- [ ] " + sentence() + "\n- see commit " + hex(40) + "\n\n"
		},
		func() string {
			return "| key | value |\n| --- | --- |\n| id | " + fmt.Sprintf("%s-%s-4%s-a%s-%s", hex(8), hex(4), hex(3), hex(3), hex(12)) +
				" |\n| sha256 | " + hex(64) + " |\n\n"
		},
		func() string {
			return "```go\nfunc (s *Server) Push(ctx context.Context, key string) error {\n\tif err := s.store.Put(ctx, key); err != nil {\n\t\treturn fmt.Errorf(\"push %s: %w\", key, err)\n\t}\n\treturn nil\n}\n```\n\n"
		},
		func() string {
			return "```sh\nexport GITHUB_TOKEN=ghp_" + strings.Repeat("x", 36) + "\nexport AWS_ACCESS_KEY_ID=AKIA" + "IOSFODNN7EXAMPLE\ncurl -H \"Authorization: Bearer $TOKEN\" https://example.com/api\n```\n\n"
		},
		func() string {
			return "```\n-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n```\n\n"
		},
		func() string {
			raw := make([]byte, 300)
			for i := range raw {
				raw[i] = byte(r.IntN(256))
			}
			return "![chart](data:image/png;base64," + base64.StdEncoding.EncodeToString(raw) + ")\n\n"
		},
		func() string {
			return "JWT headers start with `eyJhbGciOiJIUzI1NiJ9`; tokens look like `glpat-" + strings.Repeat("X", 20) + "`.\n\n---\n\n"
		},
	}

	var b strings.Builder
	next := 0
	for b.Len() < size {
		if next < len(secrets) && b.Len() >= (next+1)*size/(len(secrets)+1) {
			b.WriteString("Credential: " + secrets[next] + "\n\n")
			next++
		}
		b.WriteString(blocks[r.IntN(len(blocks))]())
	}
	return b.String()[:size]
}

func BenchmarkScan(b *testing.B) {
	few := vectorTexts(b, "aws-access-token/AKIA", "github-pat/36", "sendgrid-api-token/key",
		"stripe-access-token/live secret", "private-key/RSA")
	docs := []struct {
		name string
		doc  string
		want int
	}{
		{"clean", markdownDoc(250_000), 0},
		{"few-secrets", markdownDoc(250_000, few...), len(few)},
	}
	for _, d := range docs {
		if got := len(Scan(d.doc)); got != d.want {
			b.Fatalf("%s: Scan found %d kinds of secret, want %d", d.name, got, d.want)
		}
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(d.doc)))
			for b.Loop() {
				Scan(d.doc)
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	doc := markdownDoc(250_000, vectorTexts(b, "aws-access-token/AKIA", "github-pat/36", "private-key/RSA")...)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Redact(doc)
	}
}
