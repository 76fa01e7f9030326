package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// The rules below go beyond Claude Code's list (memdir's own; see the
// package comment): credentials recognised by their shape together with
// what surrounds them rather than by a vendor prefix alone.

// JSON Web Tokens: three base64url parts separated by dots, the first two
// being JSON objects (so both start "eyJ", the encoding of `{"`). A token
// without a signature (alg "none") proves nothing and is not reported; a
// real signature is at least 16 characters (an HS256 one is 43).
var jwtRule = tokenRule("jwt", dashEdge, 0,
	`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}`, "eyJ")

// Slack incoming webhooks, and workflow and trigger webhooks: the URL's path
// is the credential. The team id starts with T, the channel hook with B, a
// workflow with A; the secret is 24 characters (a range is allowed).
var slackWebhookRule = tokenRule("slack-webhook-url", wordEdge, 0,
	`hooks\.slack\.com/(?:services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{23,34}|(?:workflows|triggers)/T[A-Z0-9]{8,12}/A[A-Z0-9]{8,12}/[0-9]{15,20}/[A-Za-z0-9]{23,40})`,
	"hooks.slack.com/")

// AWS secret access keys are 40 characters of base64 with nothing to mark
// them, so they are reported only in context: after a name that says what
// they are (aws_secret_access_key = …, "SecretAccessKey": "…"), or within a
// few lines after an access key id (the credentials CSV, a pasted console
// page). The secret must mix capitals, small letters and digits, as random
// keys practically always do and hashes, paths and words do not.
var awsSecretRule = Rule{
	ID: "aws-secret-access-key", Label: Label("aws-secret-access-key"),
	keywords: append(append([]string{}, awsSecretNames...), "AKIA", "ASIA"),
	match:    matchAWSSecret,
}

// awsSecretNames are the spellings of the key's name in the AWS CLI's
// files, environment variables, the SDKs and STS's JSON.
var awsSecretNames = []string{"secret_access_key", "SECRET_ACCESS_KEY", "SecretAccessKey", "secretAccessKey"}

var (
	// awsAssign is what may stand between the name and the value: a
	// closing quote, an assignment sign, an opening quote.
	awsAssign = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^["']?[ \t]*(?:=>|:=|=|:)[ \t]*["']?`) })
	awsKeyID  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:AKIA|ASIA)[A-Z2-7]{16}`) })
)

// awsSecretWindow is how far after a key id a secret is looked for.
const awsSecretWindow = 160

func matchAWSSecret(s string, p int) (end, lo, hi int, ok bool) {
	for _, name := range awsSecretNames {
		if !strings.HasPrefix(s[p:], name) {
			continue
		}
		at := p + len(name)
		m := awsAssign().FindStringIndex(s[at:])
		if m == nil {
			return 0, 0, 0, false
		}
		lo := at + m[1]
		if hi, ok := awsSecretAt(s, lo); ok {
			return hi, lo, hi, true
		}
		return 0, 0, 0, false
	}
	if p > 0 && wordEdge.has(s[p-1]) {
		return 0, 0, 0, false // a key id glued to a longer word
	}
	id := awsKeyID().FindStringIndex(s[p:])
	if id == nil || p+id[1] < len(s) && wordEdge.has(s[p+id[1]]) {
		return 0, 0, 0, false
	}
	// The first run of base64 characters in the window that is exactly 40
	// long and mixed: runs are split at anything outside the alphabet.
	start := p + id[1]
	stop := min(len(s), start+awsSecretWindow)
	for i := start; i < stop; {
		if !base64Edge.has(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && base64Edge.has(s[j]) {
			j++
		}
		if hi, ok := awsSecretAt(s, i); ok {
			return hi, i, hi, true
		}
		i = j
	}
	return 0, 0, 0, false
}

// awsSecretAt reports whether an AWS secret key starts at s[lo:]: exactly 40
// base64 characters, not glued to more, mixed, and not a placeholder.
func awsSecretAt(s string, lo int) (hi int, ok bool) {
	hi = lo
	for hi < len(s) && base64Edge.has(s[hi]) {
		hi++
	}
	if hi-lo != 40 || hi < len(s) && s[hi] == '=' {
		return 0, false
	}
	tok := s[lo:hi]
	var up, low, dig bool
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		up = up || 'A' <= c && c <= 'Z'
		low = low || 'a' <= c && c <= 'z'
		dig = dig || '0' <= c && c <= '9'
	}
	if !up || !low || !dig || strings.Contains(tok, "EXAMPLE") || placeholder(tok) {
		return 0, false
	}
	return hi, true
}

// URLs whose user information holds a password: database, cache and queue
// URLs (postgres://app:pw@db/…), and http(s), ftp and smtp ones. The
// password is the secret; the user name and host stay when redacted.
//
// Not reported, since they are not real credentials or not secret:
//   - no password or an empty one (user@host, user:@host);
//   - a template or variable: $VAR, ${VAR}, $(cmd), {{ var }}, {var},
//     <password>, [password], %s, %(pw)s;
//   - a mask: one character repeated (***, xxxx, ....);
//   - a stand-in word: anything containing password, passwd, secret,
//     example, placeholder, redacted, changeme or your, and the words pass,
//     pwd, pw, test, dummy, foo, bar, baz, foobar, token, hunter2;
//   - a password equal to the user name (guest:guest, postgres:postgres),
//     the product defaults documentation uses, or shorter than 4 bytes
//     (a:b@, abc:xyz@: shorthand, not a password anyone shares);
//   - a host reserved for documentation or shaped like a stand-in: a
//     one-letter name, example.com and the like (RFC 2606 names, .test,
//     .invalid, .example), or a name containing example, company, domain
//     or your (pypi.company.com, yourdomain.com).
var urlPasswordRule = Rule{
	ID: "url-password", Label: Label("url-password"),
	keywords: urlSchemes,
	match:    matchURLPassword,
}

var urlSchemes = []string{
	"postgres://", "postgresql://", "mysql://", "mariadb://", "redis://", "rediss://",
	"amqp://", "amqps://", "mongodb://", "mongodb+srv://", "https://", "http://", "ftp://", "smtp://", "smtps://",
}

// urlUserinfo is the user and password of an authority, then "@" and the
// first byte of a host. The user may be empty (redis://:pw@host). Lengths
// are bounded so a long run without "@" costs little.
var urlUserinfo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^([^\\s:/?#@\\[\\]<>\"'`\\\\|^]{0,128}):([^\\s/?#@<>\"'`\\\\|^]{1,256})@([A-Za-z0-9\\[_$%{][A-Za-z0-9._~%\\[\\]:-]{0,253})")
})

func matchURLPassword(s string, p int) (end, lo, hi int, ok bool) {
	if p > 0 && wordEdge.has(s[p-1]) || !hasAnyPrefix(s[p:], urlSchemes) {
		return 0, 0, 0, false
	}
	at := p + strings.Index(s[p:], "://") + 3
	m := urlUserinfo().FindStringSubmatchIndex(s[at:])
	if m == nil {
		return 0, 0, 0, false
	}
	user, pw, host := s[at+m[2]:at+m[3]], s[at+m[4]:at+m[5]], s[at+m[6]:at+m[7]]
	if placeholderPassword(user, pw) || placeholderHost(host) {
		return 0, 0, 0, false
	}
	return at + m[5] + 1, at + m[4], at + m[5], true
}

// placeholderHost reports a host name that documentation uses, not a
// server anyone's password is for.
func placeholderHost(host string) bool {
	name := strings.ToLower(host)
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name, "]") {
		name = name[:i] // the port
	}
	name = strings.TrimSuffix(name, ".")
	if len(name) < 2 {
		return true
	}
	for _, w := range []string{"example", "company", "domain", "your"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".invalid") || name == "test" || name == "invalid"
}

// placeholderWords are stand-ins documentation puts where a password goes.
var (
	placeholderParts = []string{"password", "passwd", "secret", "example", "placeholder", "redacted", "changeme", "your"}
	placeholderWords = map[string]bool{"pass": true, "pwd": true, "pw": true, "test": true, "dummy": true,
		"foo": true, "bar": true, "baz": true, "foobar": true, "token": true, "hunter2": true}
)

func placeholderPassword(user, pw string) bool {
	switch pw[0] {
	case '$', '%', '<', '{', '[', '*':
		return true
	}
	if strings.Contains(pw, "{{") || strings.HasSuffix(pw, "}") || strings.HasSuffix(pw, ">") || strings.HasSuffix(pw, "]") {
		return true
	}
	if strings.Count(pw, pw[:1]) == len(pw) {
		return true
	}
	if pw == user || len(pw) < 4 {
		return true
	}
	low := strings.ToLower(pw)
	if placeholderWords[low] {
		return true
	}
	for _, w := range placeholderParts {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(s, pre) {
			return true
		}
	}
	return false
}
