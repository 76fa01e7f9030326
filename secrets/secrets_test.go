package secrets

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specRuleIDs is the rule list of the spec (§9, "Secret scanning"), in its
// order.
var specRuleIDs = []string{
	"aws-access-token", "gcp-api-key", "azure-ad-client-secret", "digitalocean-pat",
	"digitalocean-access-token", "anthropic-api-key", "anthropic-admin-api-key", "openai-api-key",
	"huggingface-access-token", "github-pat", "github-fine-grained-pat", "github-app-token",
	"github-oauth", "github-refresh-token", "gitlab-pat", "gitlab-deploy-token", "slack-bot-token",
	"slack-user-token", "slack-app-token", "twilio-api-key", "sendgrid-api-token", "npm-access-token",
	"pypi-upload-token", "databricks-api-token", "hashicorp-tf-api-token", "pulumi-api-token",
	"postman-api-token", "grafana-api-key", "grafana-cloud-api-token", "grafana-service-account-token",
	"sentry-user-token", "sentry-org-token", "stripe-access-token", "shopify-access-token",
	"shopify-shared-secret", "private-key",
}

// ownRuleIDs are the rules memdir adds after the spec's, in order.
var ownRuleIDs = []string{"jwt", "slack-webhook-url", "aws-secret-access-key", "url-password"}

// allRuleIDs is every rule id, in the order Scan reports them.
var allRuleIDs = append(append([]string{}, specRuleIDs...), ownRuleIDs...)

// contexts are the surroundings each positive vector is tested in.
var contexts = []struct{ name, format string }{
	{"bare", "%s"},
	{"shell", "export TOKEN=%s\n"},
	{"markdown", "- The CI key is `%s` (rotate monthly).\n"},
	{"json", `{"token": "%s", "ttl": 3600}`},
	{"prose", "Use %s, then revoke it."},
}

func TestRules(t *testing.T) {
	t.Parallel()
	var ids []string
	for _, r := range Rules() {
		ids = append(ids, r.ID)
		if r.Label != Label(r.ID) {
			t.Errorf("rule %s: Label = %q, want %q", r.ID, r.Label, Label(r.ID))
		}
	}
	if diff := cmp.Diff(allRuleIDs, ids); diff != "" {
		t.Errorf("rule ids (-want +got):\n%s", diff)
	}

	// Rules returns a copy: changing it must not change the scanner.
	rs := Rules()
	rs[0].ID = "changed"
	if got := Rules()[0].ID; got != specRuleIDs[0] {
		t.Errorf("after changing the result of Rules, Rules()[0].ID = %q", got)
	}
}

func TestEveryRuleHasVectors(t *testing.T) {
	t.Parallel()
	pos, neg := vectors()
	havePos, haveNeg := map[string]bool{}, map[string]bool{}
	for _, p := range pos {
		havePos[p.rule] = true
	}
	for _, n := range neg {
		haveNeg[n.rule] = true
	}
	for _, id := range allRuleIDs {
		if !havePos[id] || !haveNeg[id] {
			t.Errorf("rule %s: positive vector %v, negative vector %v", id, havePos[id], haveNeg[id])
		}
	}
}

// Scan looks only where a rule's keywords occur, so every keyword needs a
// vector that shows the pattern matches around it.
func TestEveryKeywordHasVector(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	for _, r := range Rules() {
		for _, kw := range r.keywords {
			covered := false
			for _, p := range pos {
				covered = covered || p.rule == r.ID && strings.Contains(p.text(), kw)
			}
			if !covered {
				t.Errorf("rule %s: no positive vector contains keyword %q", r.ID, kw)
			}
		}
	}
}

// TestPositive checks every positive vector in every context: Scan reports
// its rule and nothing else, and Redact replaces the secret and keeps the
// rest.
func TestPositive(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	for _, p := range pos {
		for _, c := range contexts {
			t.Run(p.rule+"/"+p.name+"/"+c.name, func(t *testing.T) {
				text := fmt.Sprintf(c.format, p.text())
				want := []Match{{RuleID: p.rule, Label: Label(p.rule)}}
				if diff := cmp.Diff(want, Scan(text)); diff != "" {
					t.Errorf("Scan (-want +got):\n%s", diff)
				}
				got := Redact(text)
				if diff := cmp.Diff(fmt.Sprintf(c.format, p.pre+Marker+p.post), got); diff != "" {
					t.Errorf("Redact (-want +got):\n%s", diff)
				}
				if strings.Contains(got, p.secret) {
					t.Errorf("Redact left the secret in place")
				}
			})
		}
	}
}

// TestNegative checks every near miss in every context: Scan finds nothing
// and Redact changes nothing.
func TestNegative(t *testing.T) {
	t.Parallel()
	_, neg := vectors()
	for _, n := range neg {
		for _, c := range contexts {
			text := fmt.Sprintf(c.format, n.text)
			if got := Scan(text); got != nil {
				t.Errorf("%s/%s/%s: Scan = %v, want nil", n.rule, n.name, c.name, got)
			}
			if got := Redact(text); got != text {
				t.Errorf("%s/%s/%s: Redact changed text without secrets:\n%q\n%q", n.rule, n.name, c.name, text, got)
			}
		}
	}
}

// Redact's loop ends because every pass replaces bytes no rule can match
// again with the marker: tokens are longer than the marker, and a URL
// password, which may be shorter, is never matched when it holds the
// marker's brackets.
func TestSecretsAreLongerThanMarker(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	for _, p := range pos {
		if p.rule == "url-password" {
			if Scan(p.pre+Marker+p.post) != nil {
				t.Errorf("%s/%s: the redacted URL still matches", p.rule, p.name)
			}
			continue
		}
		if len(p.secret) <= len(Marker) {
			t.Errorf("%s/%s: secret of %d bytes", p.rule, p.name, len(p.secret))
		}
	}
}

func TestSeveralSecrets(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	byName := map[string]positive{}
	for _, p := range pos {
		byName[p.rule+"/"+p.name] = p
	}
	ghp := byName["github-pat/36"].secret
	ghp2 := byName["github-pat/longer"].secret
	aws := byName["aws-access-token/AKIA"].secret
	stripe := byName["stripe-access-token/live secret"].secret
	key := byName["private-key/RSA"]

	tests := []struct {
		name     string
		text     string
		wantScan []string // rule ids
		want     string   // redacted
	}{
		{
			// One match per rule, in rule order rather than text order.
			name:     "rule order",
			text:     ghp + "\n" + aws + "\n" + ghp2,
			wantScan: []string{"aws-access-token", "github-pat"},
			want:     Marker + "\n" + Marker + "\n" + Marker,
		},
		{
			name:     "separated by one byte",
			text:     ghp + "," + ghp2 + " " + aws + ";" + stripe,
			wantScan: []string{"aws-access-token", "github-pat", "stripe-access-token"},
			want:     Marker + "," + Marker + " " + Marker + ";" + Marker,
		},
		{
			name:     "same token twice",
			text:     "a " + aws + " b " + aws + " c",
			wantScan: []string{"aws-access-token"},
			want:     "a " + Marker + " b " + Marker + " c",
		},
		{
			name:     "token next to a key",
			text:     "TOKEN=" + ghp + "\n" + key.text() + "\n" + stripe,
			wantScan: []string{"github-pat", "stripe-access-token", "private-key"},
			want:     "TOKEN=" + Marker + "\n" + key.pre + Marker + key.post + "\n" + Marker,
		},
		{
			// Glued tokens form one longer run, which is no known token.
			name: "glued",
			text: ghp + ghp2,
			want: ghp + ghp2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []string
			for _, m := range Scan(tt.text) {
				ids = append(ids, m.RuleID)
			}
			if diff := cmp.Diff(tt.wantScan, ids); diff != "" {
				t.Errorf("Scan rule ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, Redact(tt.text)); diff != "" {
				t.Errorf("Redact (-want +got):\n%s", diff)
			}
		})
	}
}

// A Match must be safe to print: nothing in it may come from the secret.
func TestMatchOmitsSecret(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	for _, p := range pos {
		printed := fmt.Sprintf("%#v", Scan(p.text()))
		if strings.Contains(printed, p.secret) {
			t.Errorf("%s/%s: the match %s holds the secret", p.rule, p.name, printed)
		}
	}
}

func TestNoFalsePositivesInMarkdown(t *testing.T) {
	t.Parallel()
	doc := markdownDoc(250_000)
	if got := Scan(doc); got != nil {
		t.Errorf("Scan of the clean benchmark document = %v, want nil", got)
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"aws-access-token":              "AWS Access Token",
		"gcp-api-key":                   "GCP API Key",
		"azure-ad-client-secret":        "Azure AD Client Secret",
		"digitalocean-pat":              "DigitalOcean PAT",
		"digitalocean-access-token":     "DigitalOcean Access Token",
		"anthropic-api-key":             "Anthropic API Key",
		"anthropic-admin-api-key":       "Anthropic Admin API Key",
		"openai-api-key":                "OpenAI API Key",
		"huggingface-access-token":      "Hugging Face Access Token",
		"github-pat":                    "GitHub PAT",
		"github-fine-grained-pat":       "GitHub Fine Grained PAT",
		"github-app-token":              "GitHub App Token",
		"github-oauth":                  "GitHub OAuth",
		"github-refresh-token":          "GitHub Refresh Token",
		"gitlab-pat":                    "GitLab PAT",
		"gitlab-deploy-token":           "GitLab Deploy Token",
		"slack-bot-token":               "Slack Bot Token",
		"slack-user-token":              "Slack User Token",
		"slack-app-token":               "Slack App Token",
		"twilio-api-key":                "Twilio API Key",
		"sendgrid-api-token":            "SendGrid API Token",
		"npm-access-token":              "npm Access Token",
		"pypi-upload-token":             "PyPI Upload Token",
		"databricks-api-token":          "Databricks API Token",
		"hashicorp-tf-api-token":        "HashiCorp Terraform API Token",
		"pulumi-api-token":              "Pulumi API Token",
		"postman-api-token":             "Postman API Token",
		"grafana-api-key":               "Grafana API Key",
		"grafana-cloud-api-token":       "Grafana Cloud API Token",
		"grafana-service-account-token": "Grafana Service Account Token",
		"sentry-user-token":             "Sentry User Token",
		"sentry-org-token":              "Sentry Org Token",
		"stripe-access-token":           "Stripe Access Token",
		"shopify-access-token":          "Shopify Access Token",
		"shopify-shared-secret":         "Shopify Shared Secret",
		"private-key":                   "Private Key",
		"jwt":                           "JWT",
		"slack-webhook-url":             "Slack Webhook URL",
		"aws-secret-access-key":         "AWS Secret Access Key",
		"url-password":                  "URL Password",
		// Ids the scanner does not know get the same treatment.
		"":                   "",
		"acme":               "Acme",
		"acme--oauth-id":     "Acme OAuth ID",
		"GITHUB-token":       "GitHub Token",
		"émoji-api-secret":   "Émoji API Secret",
		"x-\xff-invalid-pat": "X \xff Invalid PAT",
	}
	for id, want := range tests {
		if got := Label(id); got != want {
			t.Errorf("Label(%q) = %q, want %q", id, got, want)
		}
	}
	for _, id := range allRuleIDs {
		if _, ok := tests[id]; !ok {
			t.Errorf("no Label test for rule %s", id)
		}
	}
}

func TestLabels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ms   []Match
		want string
	}{
		{nil, ""},
		{[]Match{{RuleID: "github-pat", Label: "GitHub PAT"}}, "GitHub PAT"},
		{[]Match{{"aws-access-token", "AWS Access Token"}, {"private-key", "Private Key"}},
			"AWS Access Token, Private Key"},
	}
	for _, tt := range tests {
		if got := Labels(tt.ms); got != tt.want {
			t.Errorf("Labels(%v) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}
