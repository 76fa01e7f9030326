package secrets

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// The test vectors are assembled at run time from prefixes and seeded random
// bodies, so that no complete credential-shaped string sits in the source for
// other people's secret scanners to trip over.

const (
	upper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower    = "abcdefghijklmnopqrstuvwxyz"
	digits   = "0123456789"
	alnum    = upper + lower + digits
	hexLower = digits + "abcdef"
	base32   = upper + "234567"
	urlsafe  = alnum + "_-"
	std64    = alnum + "+/"
)

// positive is text that holds one secret of rule: pre+secret+post, where
// Redact replaces exactly secret.
type positive struct {
	name, rule        string
	pre, secret, post string
}

func (p positive) text() string { return p.pre + p.secret + p.post }

// negative is text that resembles a secret of rule but must not match any
// rule.
type negative struct {
	name, rule, text string
}

// gen makes random strings from a fixed seed, so the vectors are the same on
// every run.
type gen struct{ r *rand.Rand }

func newGen() *gen { return &gen{rand.New(rand.NewPCG(5, 36))} }

func (g *gen) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// tok is a positive whose whole text is the secret.
func tok(name, rule string, parts ...string) positive {
	return positive{name: name, rule: rule, secret: strings.Join(parts, "")}
}

// pemBody returns n lines of 64 base64 characters and a short last line.
func (g *gen) pemBody(n int, sep string) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = g.s(std64, 64)
	}
	return strings.Join(lines, sep) + sep + g.s(std64, 22) + "=="
}

func vectors() ([]positive, []negative) {
	g := newGen()
	b64 := func(json string) string { return base64.StdEncoding.EncodeToString([]byte(json)) }
	rsaHead, rsaFoot := "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
	sentryPayload := base64.RawStdEncoding.EncodeToString([]byte(
		`{"iat":1712345678.1,"url":"https://sentry.io","region_url":"https://us.sentry.io","org":"acme"}`))

	pos := []positive{
		tok("AKIA", "aws-access-token", "AKIA", g.s(base32, 16)),
		tok("ASIA", "aws-access-token", "ASIA", g.s(base32, 16)),
		tok("ABIA", "aws-access-token", "ABIA", g.s(base32, 16)),
		tok("ACCA", "aws-access-token", "ACCA", g.s(base32, 16)),
		tok("A3T", "aws-access-token", "A3TX", g.s(base32, 16)),
		tok("key", "gcp-api-key", "AIza", g.s(urlsafe, 35)),
		tok("34", "azure-ad-client-secret", g.s(alnum, 3), "8Q~", g.s(alnum+"_~.-", 33), "x"),
		tok("31", "azure-ad-client-secret", g.s(alnum, 3), "7Q~", g.s(alnum, 31)),
		tok("pat", "digitalocean-pat", "dop_v1_", g.s(hexLower, 64)),
		tok("oauth", "digitalocean-access-token", "doo_v1_", g.s(hexLower, 64)),
		tok("api03", "anthropic-api-key", "sk-ant-api03-", g.s(urlsafe, 93), "AA"),
		tok("admin01", "anthropic-admin-api-key", "sk-ant-admin01-", g.s(urlsafe, 93), "AA"),
		tok("project", "openai-api-key", "sk-proj-", g.s(urlsafe, 74), "T3BlbkFJ", g.s(urlsafe, 74)),
		tok("service account", "openai-api-key", "sk-svcacct-", g.s(urlsafe, 58), "T3BlbkFJ", g.s(urlsafe, 58)),
		tok("admin unmarked", "openai-api-key", "sk-admin-", g.s(urlsafe, 120)),
		tok("legacy", "openai-api-key", "sk-", g.s(alnum, 20), "T3BlbkFJ", g.s(alnum, 20)),
		tok("token", "huggingface-access-token", "hf_", g.s(upper+lower, 34)),
		tok("36", "github-pat", "ghp_", g.s(alnum, 36)),
		tok("longer", "github-pat", "ghp_", g.s(alnum, 60)),
		tok("token", "github-fine-grained-pat", "github_pat_", g.s(alnum, 22), "_", g.s(alnum, 59)),
		tok("user-to-server", "github-app-token", "ghu_", g.s(alnum, 36)),
		tok("server-to-server", "github-app-token", "ghs_", g.s(alnum, 36)),
		tok("token", "github-oauth", "gho_", g.s(alnum, 36)),
		tok("token", "github-refresh-token", "ghr_", g.s(alnum, 76)),
		tok("legacy", "gitlab-pat", "glpat-", g.s(urlsafe, 19), "x"),
		tok("routable", "gitlab-pat", "glpat-", g.s(urlsafe, 50), ".01.", g.s(lower+digits, 9)),
		tok("token", "gitlab-deploy-token", "gldt-", g.s(urlsafe, 19), "Q"),
		tok("token", "slack-bot-token", "xoxb-", g.s(digits, 11), "-", g.s(digits, 13), "-", g.s(alnum, 24)),
		tok("user", "slack-user-token", "xoxp-", g.s(digits, 11), "-", g.s(digits, 11), "-",
			g.s(digits, 13), "-", g.s(hexLower, 32)),
		tok("refresh", "slack-user-token", "xoxe-1-", g.s(alnum, 140)),
		tok("token", "slack-app-token", "xapp-1-A", g.s(upper+digits, 10), "-", g.s(digits, 13), "-",
			g.s(hexLower, 64)),
		tok("key", "twilio-api-key", "SK", g.s(hexLower, 32)),
		tok("key", "sendgrid-api-token", "SG.", g.s(urlsafe, 22), ".", g.s(urlsafe, 43)),
		tok("token", "npm-access-token", "npm_", g.s(alnum, 36)),
		tok("pypi.org", "pypi-upload-token", "pypi-AgEIcHlwaS5vcmc", g.s(urlsafe, 150)),
		tok("test.pypi.org", "pypi-upload-token", "pypi-AgENdGVzdC5weXBpLm9yZw", g.s(urlsafe, 150)),
		tok("token", "databricks-api-token", "dapi", g.s(hexLower, 32)),
		tok("suffixed", "databricks-api-token", "dapi", g.s(hexLower, 32), "-2"),
		tok("token", "hashicorp-tf-api-token", g.s(alnum, 14), ".atlasv1.", g.s(urlsafe, 67)),
		tok("token", "pulumi-api-token", "pul-", g.s(hexLower, 40)),
		tok("token", "postman-api-token", "PMAK-", g.s(hexLower, 24), "-", g.s(hexLower, 34)),
		tok("key", "grafana-api-key", b64(`{"k":"`+g.s(alnum, 32)+`","n":"deploy","id":1}`)),
		tok("token", "grafana-cloud-api-token", "glc_",
			b64(`{"o":"1234","n":"stack-1-token","k":"`+g.s(alnum, 24)+`","m":{"r":"us"}}`)),
		tok("token", "grafana-service-account-token", "glsa_", g.s(alnum, 32), "_", g.s(hexLower, 8)),
		tok("token", "sentry-user-token", "sntryu_", g.s(hexLower, 64)),
		tok("token", "sentry-org-token", "sntrys_", sentryPayload, "_", g.s(std64, 43)),
		tok("live secret", "stripe-access-token", "sk_live_", g.s(alnum, 24)),
		tok("test restricted", "stripe-access-token", "rk_test_", g.s(alnum, 99)),
		tok("prod", "stripe-access-token", "sk_prod_", g.s(alnum, 32)),
		tok("admin", "shopify-access-token", "shpat_", g.s(hexLower, 32)),
		tok("custom app", "shopify-access-token", "shpca_", g.s(hexLower, 32)),
		tok("private app", "shopify-access-token", "shppa_", g.s(hexLower, 32)),
		tok("secret", "shopify-shared-secret", "shpss_", g.s(hexLower, 32)),
		{name: "RSA", rule: "private-key",
			pre: rsaHead + "\n", secret: g.pemBody(12, "\n"), post: "\n" + rsaFoot},
		{name: "OpenSSH", rule: "private-key",
			pre: "-----BEGIN OPENSSH PRIVATE KEY-----\r\n", secret: g.pemBody(6, "\r\n"),
			post: "\r\n-----END OPENSSH PRIVATE KEY-----"},
		{name: "PGP", rule: "private-key",
			pre: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n", secret: g.pemBody(8, "\n") + "\n=" + g.s(std64, 4),
			post: "\n-----END PGP PRIVATE KEY BLOCK-----"},
		{name: "PKCS8 in JSON", rule: "private-key",
			pre: `-----BEGIN PRIVATE KEY-----\n`, secret: g.pemBody(5, `\n`), post: `\n-----END PRIVATE KEY-----\n`},
		{name: "quoted", rule: "private-key",
			pre: "> -----BEGIN EC PRIVATE KEY-----\n> ", secret: g.pemBody(3, "\n> "),
			post: "\n> -----END EC PRIVATE KEY-----"},
		{name: "no END line", rule: "private-key",
			pre: rsaHead + "\n", secret: g.pemBody(4, "\n")[:4*65-1], post: "\n"},
	}

	neg := []negative{
		{"lowercase", "aws-access-token", "AKIA" + g.s(lower, 16)},
		{"short", "aws-access-token", "AKIA" + g.s(base32, 15)},
		{"example key", "aws-access-token", "AKIA" + "IOSFODNN7" + "EXAMPLE"},
		{"glued", "aws-access-token", "X" + "AKIA" + g.s(base32, 16)},
		{"short", "gcp-api-key", "AIza" + g.s(alnum, 34)},
		{"no digit", "azure-ad-client-secret", g.s(lower, 4) + "Q~" + g.s(alnum, 34)},
		{"prose", "azure-ad-client-secret", "press 1Q~ to quit the pager"},
		{"short", "digitalocean-pat", "dop_v1_" + g.s(hexLower, 63)},
		{"uppercase", "digitalocean-access-token", "doo_v1_" + strings.ToUpper(g.s(hexLower, 64))},
		{"short", "anthropic-api-key", "sk-ant-api03-" + g.s(urlsafe, 40)},
		{"placeholder", "anthropic-api-key", "sk-ant-api03-" + strings.Repeat("x", 95)},
		{"short", "anthropic-admin-api-key", "sk-ant-admin01-" + g.s(urlsafe, 60)},
		{"slug", "openai-api-key", "sk-proj-" + strings.Repeat("notes-on-the-rollout-", 5)},
		{"no marker", "openai-api-key", "sk-" + g.s(alnum, 48)},
		{"in a word", "openai-api-key", "task-" + g.s(alnum, 20) + "T3BlbkFJ" + g.s(alnum, 20)},
		{"lowercase", "huggingface-access-token", "hf_" + g.s(lower, 34)},
		{"identifier", "huggingface-access-token", "hf_hub_download(repo_id=model_name)"},
		{"short", "github-pat", "ghp_" + g.s(alnum, 35)},
		{"short", "github-fine-grained-pat", "github_pat_" + g.s(alnum, 22) + "_" + g.s(alnum, 30)},
		{"glued", "github-app-token", "ghs_" + g.s(alnum, 36) + "_suffix"},
		{"short", "github-oauth", "gho_" + g.s(alnum, 20)},
		{"glued", "github-refresh-token", "my_ghr_" + g.s(alnum, 36)},
		{"short", "gitlab-pat", "glpat-" + g.s(alnum, 19)},
		{"placeholder", "gitlab-pat", "glpat-" + strings.Repeat("X", 20)},
		{"placeholder", "gitlab-deploy-token", "gldt-" + "your-deploy-token-here"},
		{"placeholder", "slack-bot-token", "xoxb-" + "your-bot-token"},
		{"short", "slack-user-token", "xoxp-" + g.s(digits, 11) + "-" + g.s(alnum, 10)},
		{"short", "slack-app-token", "xapp-1-" + g.s(upper, 10) + "-" + g.s(digits, 13)},
		{"short", "twilio-api-key", "SK" + g.s(hexLower, 31)},
		{"in a word", "twilio-api-key", "TASK" + g.s(hexLower, 32)},
		{"short", "sendgrid-api-token", "SG." + g.s(urlsafe, 22) + "." + g.s(urlsafe, 20)},
		{"env var", "npm-access-token", "npm_config_registry=https://registry.npmjs.org/"},
		{"short", "pypi-upload-token", "pypi-AgEIcHlwaS5vcmc" + g.s(urlsafe, 20)},
		{"short", "databricks-api-token", "dapi" + g.s(hexLower, 31)},
		{"short", "hashicorp-tf-api-token", g.s(alnum, 14) + ".atlasv1." + g.s(urlsafe, 30)},
		{"short", "pulumi-api-token", "pul-" + g.s(hexLower, 39)},
		{"one part", "postman-api-token", "PMAK-" + g.s(hexLower, 24)},
		{"JWT", "grafana-api-key", "eyJhbGciOiJIUzI1NiJ9." + g.s(urlsafe, 60)},
		{"short", "grafana-cloud-api-token", "glc_" + g.s(std64, 20)},
		{"no checksum", "grafana-service-account-token", "glsa_" + g.s(alnum, 32)},
		{"short", "sentry-user-token", "sntryu_" + g.s(hexLower, 32)},
		{"placeholder", "sentry-org-token", "sntrys_" + "YOUR_ORG_AUTH_TOKEN"},
		{"short", "stripe-access-token", "sk_live_" + g.s(alnum, 10)},
		{"in a word", "stripe-access-token", "desk_live_" + g.s(alnum, 24)},
		{"short", "shopify-access-token", "shpat_" + g.s(hexLower, 31)},
		{"not hex", "shopify-shared-secret", "shpss_" + g.s("ghijklmnopqrstuvwxyz", 32)},
		{"elided body", "private-key", rsaHead + "\n...\n" + rsaFoot},
		{"header in prose", "private-key", "A key file starts with " + rsaHead + " and ends with " + rsaFoot + "."},
		{"public key", "private-key", "-----BEGIN PUBLIC KEY-----\n" + g.pemBody(4, "\n") + "\n-----END PUBLIC KEY-----"},
	}
	return pos, neg
}

// vectorTexts returns the texts of the positive vectors named "rule/name".
func vectorTexts(tb testing.TB, names ...string) []string {
	tb.Helper()
	pos, _ := vectors()
	byName := map[string]string{}
	for _, p := range pos {
		byName[p.rule+"/"+p.name] = p.text()
	}
	texts := make([]string, len(names))
	for i, n := range names {
		t, ok := byName[n]
		if !ok {
			tb.Fatalf("no positive vector %q", n)
		}
		texts[i] = t
	}
	return texts
}
