package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// Bytes that may not touch a token, by the alphabet of the token: a token
// glued to one of them is really part of a longer run. Each set holds every
// byte of the token's own alphabet, so a keyword inside a run that an earlier
// candidate already covered is skipped without running the pattern. (Only a
// base64 token's trailing "=" padding lies outside its set.)
var (
	wordEdge   = newByteSet("A-Za-z0-9_")
	dashEdge   = newByteSet("A-Za-z0-9_-")
	azureEdge  = newByteSet("A-Za-z0-9_~-")
	base64Edge = newByteSet("A-Za-z0-9+/") // not "=": it ends base64 and starts it in "KEY=…"
	sentryEdge = newByteSet("A-Za-z0-9+/_")
)

// rules is the catalogue: first the rule ids of the spec (§9, "Secret
// scanning"), in its order, then memdir's own. The formats come from the vendors' published token
// formats; where a vendor allows a range or may lengthen its tokens, the
// pattern takes the range rather than one observed length.
var rules = [...]Rule{
	// Access key IDs: a four-letter kind prefix, then 16 base32 characters.
	tokenRule("aws-access-token", wordEdge, 0,
		`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}`,
		"AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
	// Google API keys: "AIza" and 35 base64url characters.
	tokenRule("gcp-api-key", dashEdge, 0, `AIza[A-Za-z0-9_-]{35}`, "AIza"),
	// Entra ID (Azure AD) client secrets: three characters, a digit, "Q~",
	// then 31 to 34 more. The only fixed part is "Q~", four bytes in.
	tokenRule("azure-ad-client-secret", azureEdge, 4,
		`[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`, "Q~"),
	tokenRule("digitalocean-pat", wordEdge, 0, `dop_v1_[a-f0-9]{64}`, "dop_v1_"),
	tokenRule("digitalocean-access-token", wordEdge, 0, `doo_v1_[a-f0-9]{64}`, "doo_v1_"),
	// Anthropic keys: "sk-ant-api03-" (or a later version) and about 95
	// base64url characters.
	tokenRule("anthropic-api-key", dashEdge, 0,
		`sk-ant-api[0-9]{2}-[A-Za-z0-9_-]{80,120}`, "sk-ant-api"),
	tokenRule("anthropic-admin-api-key", dashEdge, 0,
		`sk-ant-admin[0-9]{2}-[A-Za-z0-9_-]{80,120}`, "sk-ant-admin"),
	// OpenAI: project, service-account and admin keys carry their kind after
	// "sk-"; older user keys are "sk-", 20 characters, "T3BlbkFJ" (base64 of
	// "OpenAI") and 20 more. A bare "sk-" and 48 characters is too common a
	// shape to report without the marker.
	tokenRule("openai-api-key", dashEdge, 0,
		`sk-(?:(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{10,}T3BlbkFJ[A-Za-z0-9_-]{10,}|[A-Za-z0-9_-]{80,})|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})`,
		"sk-"),
	tokenRule("huggingface-access-token", wordEdge, 0, `hf_[A-Za-z]{34}`, "hf_"),
	// GitHub's prefixed tokens are 36 characters after the prefix today;
	// GitHub reserves the right to make them longer (up to 255).
	tokenRule("github-pat", wordEdge, 0, `ghp_[A-Za-z0-9]{36,251}`, "ghp_"),
	tokenRule("github-fine-grained-pat", wordEdge, 0,
		`github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}`, "github_pat_"),
	tokenRule("github-app-token", wordEdge, 0, `gh[us]_[A-Za-z0-9]{36,251}`, "ghu_", "ghs_"),
	tokenRule("github-oauth", wordEdge, 0, `gho_[A-Za-z0-9]{36,251}`, "gho_"),
	tokenRule("github-refresh-token", wordEdge, 0, `ghr_[A-Za-z0-9]{36,251}`, "ghr_"),
	// GitLab: 20 characters after "glpat-", or a longer routable token that
	// may end in ".<version>.<checksum>".
	tokenRule("gitlab-pat", dashEdge, 0,
		`glpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9]{1,4}\.[A-Za-z0-9]{4,16})?`, "glpat-"),
	tokenRule("gitlab-deploy-token", dashEdge, 0, `gldt-[A-Za-z0-9_-]{20,}`, "gldt-"),
	// Slack: "xoxb-<team>-<bot>-<secret>", "xoxp-<team>-<user>-<…>-<secret>",
	// refresh tokens "xoxe-1-<secret>", and app tokens
	// "xapp-<n>-<app id>-<number>-<secret>".
	tokenRule("slack-bot-token", dashEdge, 0,
		`xoxb-[0-9]{8,14}-[0-9]{8,14}-[A-Za-z0-9]{20,}`, "xoxb-"),
	tokenRule("slack-user-token", dashEdge, 0,
		`xox[pe]-[0-9]{1,14}(?:-[0-9]{8,14}){0,3}-[A-Za-z0-9]{24,}`, "xoxp-", "xoxe-"),
	tokenRule("slack-app-token", dashEdge, 0,
		`xapp-[0-9]{1,2}-[A-Z0-9]{8,14}-[0-9]{8,16}-[A-Za-z0-9]{24,}`, "xapp-"),
	// Twilio API key SIDs: "SK" and 32 hex digits.
	tokenRule("twilio-api-key", wordEdge, 0, `SK[0-9a-fA-F]{32}`, "SK"),
	tokenRule("sendgrid-api-token", dashEdge, 0,
		`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`, "SG."),
	tokenRule("npm-access-token", wordEdge, 0, `npm_[A-Za-z0-9]{36}`, "npm_"),
	// PyPI tokens are macaroons whose first bytes encode the issuing host,
	// pypi.org or test.pypi.org.
	tokenRule("pypi-upload-token", dashEdge, 0,
		`pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}`, "pypi-Ag"),
	tokenRule("databricks-api-token", wordEdge, 0, `dapi[a-f0-9]{32}(?:-[0-9]+)?`, "dapi"),
	// Terraform Cloud / Enterprise: 14 characters, ".atlasv1.", 60 to 70
	// more.
	tokenRule("hashicorp-tf-api-token", dashEdge, 14,
		`[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}`, ".atlasv1."),
	tokenRule("pulumi-api-token", wordEdge, 0, `pul-[a-f0-9]{40}`, "pul-"),
	tokenRule("postman-api-token", wordEdge, 0,
		`PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`, "PMAK-"),
	// Grafana's legacy API keys are base64 JSON starting {"k":" ; Grafana
	// Cloud tokens are "glc_" and base64; service account tokens are
	// "glsa_", 32 characters, "_" and an 8-digit hex checksum.
	tokenRule("grafana-api-key", base64Edge, 0, `eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2}`, "eyJrIjoi"),
	tokenRule("grafana-cloud-api-token", base64Edge, 0, `glc_[A-Za-z0-9+/]{32,400}={0,2}`, "glc_"),
	tokenRule("grafana-service-account-token", wordEdge, 0,
		`glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`, "glsa_"),
	// Sentry user tokens are "sntryu_" and 64 hex digits; organization
	// tokens are "sntrys_", base64 JSON (so "eyJ"), "_" and a base64 secret.
	tokenRule("sentry-user-token", wordEdge, 0, `sntryu_[a-f0-9]{64}`, "sntryu_"),
	tokenRule("sentry-org-token", sentryEdge, 0,
		`sntrys_eyJ[A-Za-z0-9+/]{30,}={0,2}_[A-Za-z0-9+/]{20,}={0,2}`, "sntrys_eyJ"),
	// Stripe secret ("sk_") and restricted ("rk_") keys, live or test.
	tokenRule("stripe-access-token", wordEdge, 1,
		`[rs]k_(?:live|test|prod)_[A-Za-z0-9]{20,}`, "k_live_", "k_test_", "k_prod_"),
	// Shopify: admin API ("shpat_"), custom app ("shpca_") and private app
	// ("shppa_") access tokens, and app shared secrets ("shpss_").
	tokenRule("shopify-access-token", wordEdge, 0, `shp(?:at|ca|pa)_[a-fA-F0-9]{32}`, "shp"),
	tokenRule("shopify-shared-secret", wordEdge, 0, `shpss_[a-fA-F0-9]{32}`, "shpss_"),
	{
		ID: "private-key", Label: Label("private-key"),
		keywords: []string{"-----BEGIN"}, match: matchPrivateKey,
	},
	// memdir's own rules, beyond the spec's list (see context.go).
	jwtRule,
	slackWebhookRule,
	awsSecretRule,
	urlPasswordRule,
}

// tokenRule builds a rule for a single-token credential: the whole match of
// pattern is the secret. Every match contains one of keywords, at byte
// offset at from its start. The pattern is compiled the first time a
// keyword of the rule turns up, so a process that never scans (or scans
// text without that keyword) does not pay for it.
func tokenRule(id string, edge *byteSet, at int, pattern string, keywords ...string) Rule {
	re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:` + pattern + `)`) })
	return Rule{
		ID: id, Label: Label(id),
		keywords: keywords, at: at, edge: edge,
		match: func(s string, p int) (end, lo, hi int, ok bool) {
			loc := re().FindStringIndex(s[p:])
			if loc == nil || placeholder(s[p:p+loc[1]]) {
				return 0, 0, 0, false
			}
			return p + loc[1], p, p + loc[1], true
		},
	}
}

// placeholder reports whether a token-shaped string is a stand-in that
// documentation and examples use rather than a real credential: AWS's
// published example key, a run of eight equal characters ("xxxxxxxx",
// "00000000"), or a last 20 characters without a digit or a capital, which
// random tokens practically always have (the odds against are about one in
// a million or less for every alphabet here) and kebab-case slugs never do. The last
// 20 characters are always in the random part of a token, never its prefix.
func placeholder(tok string) bool {
	if strings.HasSuffix(tok, "EXAMPLE") {
		return true
	}
	run, mixed := 1, false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if i >= len(tok)-20 && ('0' <= c && c <= '9' || 'A' <= c && c <= 'Z') {
			mixed = true
		}
		if i > 0 && c == tok[i-1] {
			if run++; run >= 8 {
				return true
			}
		} else {
			run = 1
		}
	}
	return !mixed
}

// PEM private keys: OpenSSL's "RSA", "EC", "DSA", "ENCRYPTED" and bare forms,
// OpenSSH, and PGP's "PRIVATE KEY BLOCK".
var (
	pemHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^-----BEGIN ?(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----`)
	})
	pemFooter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^-----END ?(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----`)
	})
	// pemLines is the body of a key whose END line is missing: lines of 40
	// or more base64 characters, separated by newlines or by the "\n" escapes
	// of a JSON or YAML string.
	pemLines = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:\s|\\[nr])*([A-Za-z0-9+/]{40,}={0,2}(?:(?:\s|\\[nr])+[A-Za-z0-9+/]{40,}={0,2})*)`)
	})
)

// matchPrivateKey matches a PEM private key whose header starts at s[p:].
// The secret is the body between the BEGIN and END lines. A body needs a run
// of 40 base64 characters, so documentation that shows the two lines around
// "..." is not reported. A key cut off before its END line still counts, up
// to the end of its base64 lines.
func matchPrivateKey(s string, p int) (end, lo, hi int, ok bool) {
	// Most BEGIN lines in notes are certificates and public keys; looking
	// for the words first is much cheaper than running the pattern.
	if !strings.Contains(s[p:min(len(s), p+80)], "PRIVATE KEY") {
		return 0, 0, 0, false
	}
	h := pemHeader().FindStringIndex(s[p:])
	if h == nil {
		return 0, 0, 0, false
	}
	start := p + h[1]
	// The body ends at the next dashes, which is the END line if there is
	// one. Stopping there also bounds the work per header: the next header
	// starts with dashes too.
	stop := len(s)
	if i := strings.Index(s[start:], "-----"); i >= 0 {
		stop = start + i
	}
	body := s[start:stop]
	if f := pemFooter().FindStringIndex(s[stop:]); f != nil && longestBase64Run(body) >= 40 {
		lo, hi := trimPEMBody(body)
		return stop + f[1], start + lo, start + hi, true
	}
	if m := pemLines().FindStringSubmatchIndex(body); m != nil {
		return start + m[1], start + m[2], start + m[3], true
	}
	return 0, 0, 0, false
}

func longestBase64Run(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if base64Edge[s[i]] {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// trimPEMBody returns the bounds of body without the line breaks, "\n"
// escapes and quoting ("> ", "# ") around it, so that redaction keeps the
// layout of the BEGIN and END lines.
func trimPEMBody(body string) (lo, hi int) {
	lo, hi = 0, len(body)
	for lo < hi {
		if pemDecoration(body[lo]) {
			lo++
		} else if lo+1 < hi && body[lo] == '\\' && (body[lo+1] == 'n' || body[lo+1] == 'r') {
			lo += 2
		} else {
			break
		}
	}
	for lo < hi {
		if pemDecoration(body[hi-1]) {
			hi--
		} else if hi-2 >= lo && body[hi-2] == '\\' && (body[hi-1] == 'n' || body[hi-1] == 'r') {
			hi -= 2
		} else {
			break
		}
	}
	return lo, hi
}

func pemDecoration(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '>', '#':
		return true
	}
	return false
}
