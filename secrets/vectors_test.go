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

		// memdir's own rules.
		tok("HS256", "jwt", b64url(`{"alg":"HS256","typ":"JWT"}`), ".",
			b64url(`{"sub":"`+g.s(alnum, 12)+`","iat":1764547200,"scope":"deploy"}`), ".", g.s(urlsafe, 43)),
		tok("RS256", "jwt", b64url(`{"alg":"RS256","kid":"`+g.s(alnum, 8)+`"}`), ".",
			b64url(`{"iss":"https://auth.example.net","aud":"api"}`), ".", g.s(urlsafe, 342)),
		{name: "incoming", rule: "slack-webhook-url", pre: "https://",
			secret: "hooks.slack.com/services/T" + g.s(upper+digits, 8) + "/B" + g.s(upper+digits, 10) + "/" + g.s(alnum, 24)},
		{name: "workflow", rule: "slack-webhook-url", pre: "https://",
			secret: "hooks.slack.com/workflows/T" + g.s(upper+digits, 10) + "/A" + g.s(upper+digits, 10) + "/" + g.s(digits, 18) + "/" + g.s(alnum, 32)},
		{name: "credentials file", rule: "aws-secret-access-key", pre: "aws_secret_access_key = ", secret: awsSecret(g)},
		{name: "env", rule: "aws-secret-access-key", pre: "AWS_SECRET_ACCESS_KEY=", secret: awsSecret(g)},
		{name: "STS JSON", rule: "aws-secret-access-key", pre: `"SecretAccessKey": "`, secret: awsSecret(g), post: `"`},
		{name: "SDK", rule: "aws-secret-access-key", pre: "secretAccessKey: '", secret: awsSecret(g), post: "'"},
		// The id is AWS's documented example, so only the secret rule fires.
		{name: "after key id", rule: "aws-secret-access-key", pre: "AKIA" + "IOSFODNN7" + "EXAMPLE,", secret: awsSecret(g)},
		{name: "postgres", rule: "url-password", pre: "postgres://app:", secret: g.s(alnum, 16), post: "@db.internal:5432/app?sslmode=require"},
		{name: "postgresql", rule: "url-password", pre: "postgresql://deploy:", secret: g.s(alnum+"!*", 20), post: "@10.0.0.7/main"},
		{name: "mysql", rule: "url-password", pre: "mysql://root:", secret: g.s(alnum, 12), post: "@127.0.0.1:3306/shop"},
		{name: "redis no user", rule: "url-password", pre: "redis://:", secret: g.s(alnum, 6), post: "@cache:6379/0"},
		{name: "amqp", rule: "url-password", pre: "amqps://worker:", secret: g.s(alnum, 24) + "%2F" + g.s(alnum, 4), post: "@mq.internal/vhost"},
		{name: "mongodb+srv", rule: "url-password", pre: "mongodb+srv://svc:", secret: g.s(alnum, 18), post: "@cluster0.mongodb.net/db"},
		{name: "https", rule: "url-password", pre: "https://ci-bot:", secret: g.s(alnum, 14), post: "@git.internal/org/repo.git"},
		{name: "temporary key id", rule: "aws-secret-access-key", pre: "ASIA" + "IOSFODNN7" + "EXAMPLE\nsecret: ", secret: awsSecret(g)},
		{name: "mariadb", rule: "url-password", pre: "mariadb://app:", secret: g.s(alnum, 16), post: "@db/app"},
		{name: "rediss", rule: "url-password", pre: "rediss://default:", secret: g.s(alnum, 32), post: "@cache.internal:6380"},
		{name: "amqp plain", rule: "url-password", pre: "amqp://svc:", secret: g.s(alnum, 16), post: "@rabbit:5672/%2f"},
		{name: "mongodb", rule: "url-password", pre: "mongodb://admin:", secret: g.s(alnum, 16), post: "@mongo-0:27017,mongo-1:27017/?replicaSet=rs0"},
		{name: "http", rule: "url-password", pre: "http://admin:", secret: g.s(alnum, 12), post: "@192.168.1.20:8080/"},
		{name: "ftp", rule: "url-password", pre: "ftp://upload:", secret: g.s(alnum, 12), post: "@files.internal/in/"},
		{name: "smtp", rule: "url-password", pre: "smtp://mailer:", secret: g.s(alnum, 16), post: "@smtp.internal:587"},
		{name: "smtps", rule: "url-password", pre: "smtps://mailer:", secret: g.s(alnum, 16), post: "@smtp.internal:465"},
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

		{"unsigned", "jwt", b64url(`{"alg":"none"}`) + "." + b64url(`{"sub":"1234"}`) + "."},
		{"header only", "jwt", b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + g.s(urlsafe, 40)},
		{"short signature", "jwt", b64url(`{"alg":"HS256"}`) + "." + b64url(`{"sub":"1234"}`) + "." + g.s(urlsafe, 10)},
		{"placeholder", "slack-webhook-url", "https://hooks.slack.com/services/T00000000/B00000000/" + strings.Repeat("X", 24)},
		{"docs", "slack-webhook-url", "https://hooks.slack.com/services/YOUR/WEBHOOK/URL"},
		{"short", "slack-webhook-url", "https://hooks.slack.com/services/T" + g.s(upper, 8) + "/B" + g.s(upper, 8) + "/" + g.s(alnum, 12)},
		{"hex digest", "aws-secret-access-key", "aws_secret_access_key = " + g.s(hexLower, 40)},
		{"variable", "aws-secret-access-key", "aws_secret_access_key = $AWS_SECRET_ACCESS_KEY"},
		{"documented example", "aws-secret-access-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"},
		{"41 characters", "aws-secret-access-key", "AWS_SECRET_ACCESS_KEY=" + awsSecret(g) + "Q"},
		{"no context", "aws-secret-access-key", "checksum " + awsSecret(g)},
		{"key id then a commit", "aws-secret-access-key", "AKIA" + "IOSFODNN7" + "EXAMPLE at commit " + g.s(hexLower, 40)},
		{"no password", "url-password", "postgres://app@db.internal/app"},
		{"empty password", "url-password", "postgres://app:@db.internal/app"},
		{"placeholder word", "url-password", "postgres://user:password@localhost:5432/mydb"},
		{"your password", "url-password", "mysql://admin:your_db_pass@db/app"},
		{"variable", "url-password", "mysql://root:${MYSQL_ROOT_PASSWORD}@db:3306/app"},
		{"shell variable", "url-password", "postgres://$PGUSER:$PGPASSWORD@$PGHOST/app"},
		{"mask", "url-password", "redis://:****@cache:6379"},
		{"angle brackets", "url-password", "amqp://guest:<password>@mq:5672/"},
		{"template", "url-password", "postgres://app:{{ .Password }}@db/app"},
		{"printf", "url-password", "postgres://%s:%s@%s/%s"},
		{"same as user", "url-password", "amqp://guest:guest@localhost:5672/"},
		{"port", "url-password", "https://example.com:8443/path?q=a:b@c"},
		{"user only", "url-password", "https://user@github.com/org/repo.git"},
		{"in a word", "url-password", "xhttps://bot:" + g.s(alnum, 12) + "@host"},
	}
	return pos, neg
}

// b64url encodes a JWT part.
func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// awsSecret returns a 40-character secret access key that mixes capitals,
// small letters and digits, as real ones do.
func awsSecret(g *gen) string {
	return g.s(upper, 2) + g.s(lower, 2) + g.s(digits, 2) + g.s(std64, 34)
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
