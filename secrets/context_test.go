package secrets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A key id with its secret next to it, as in the credentials CSV the AWS
// console offers: both are reported and both are redacted.
func TestAWSKeyPair(t *testing.T) {
	t.Parallel()
	g := newGen()
	id := "AKIA" + g.s(base32, 16)
	secret := awsSecret(g)
	for _, sep := range []string{",", "\n", " / ", "\nSecret access key: "} {
		text := "User,Access key ID,Secret access key\ndeploy," + id + sep + secret + "\n"
		var ids []string
		for _, m := range Scan(text) {
			ids = append(ids, m.RuleID)
		}
		if diff := cmp.Diff([]string{"aws-access-token", "aws-secret-access-key"}, ids); diff != "" {
			t.Errorf("separator %q: rules (-want +got):\n%s", sep, diff)
		}
		want := "User,Access key ID,Secret access key\ndeploy," + Marker + sep + Marker + "\n"
		if got := Redact(text); got != want {
			t.Errorf("separator %q: Redact = %q, want %q", sep, got, want)
		}
	}
	// Too far from the id, a 40-character run is not taken for its secret.
	far := id + "\n" + strings.Repeat("notes about the rotation schedule. ", 6) + secret
	for _, m := range Scan(far) {
		if m.RuleID == "aws-secret-access-key" {
			t.Errorf("a run %d bytes after the key id was reported", len(far)-len(id)-len(secret))
		}
	}
}

// The URL rule redacts only the password: the user, host and path stay.
func TestURLPasswordRedaction(t *testing.T) {
	t.Parallel()
	pw := "Zq8" + strings.Repeat("mK2", 4)
	got := Redact("DATABASE_URL=postgres://app:" + pw + "@db.internal:5432/app and redis://:" + pw + "@cache:6379/0")
	want := "DATABASE_URL=postgres://app:" + Marker + "@db.internal:5432/app and redis://:" + Marker + "@cache:6379/0"
	if got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	for _, host := range []string{"db.example.com", "h", "pypi.company.com", "api.test", "yourdomain.io:8080"} {
		if ms := Scan("https://bot:" + pw + "@" + host + "/x"); ms != nil {
			t.Errorf("stand-in host %s: Scan = %v, want nil", host, ms)
		}
	}
}
