package secrets

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// labelWords spells the words of rule ids that plain capitalisation gets
// wrong: acronyms and brand names.
var labelWords = map[string]string{
	"ad":           "AD",
	"api":          "API",
	"aws":          "AWS",
	"digitalocean": "DigitalOcean",
	"gcp":          "GCP",
	"github":       "GitHub",
	"gitlab":       "GitLab",
	"hashicorp":    "HashiCorp",
	"huggingface":  "Hugging Face",
	"id":           "ID",
	"jwt":          "JWT",
	"npm":          "npm",
	"oauth":        "OAuth",
	"openai":       "OpenAI",
	"pat":          "PAT",
	"pypi":         "PyPI",
	"sendgrid":     "SendGrid",
	"tf":           "Terraform",
	"url":          "URL",
}

// Label turns a kebab-case rule id into the name shown to people: each word
// capitalised, with acronyms and brand names spelled as their owners do, so
// "github-pat" becomes "GitHub PAT" and "npm-access-token" "npm Access
// Token". It works for any id, not only the ones in [Rules].
func Label(ruleID string) string {
	words := strings.FieldsFunc(ruleID, func(r rune) bool { return r == '-' })
	for i, w := range words {
		if s, ok := labelWords[strings.ToLower(w)]; ok {
			words[i] = s
		} else if r, n := utf8.DecodeRuneInString(w); r != utf8.RuneError {
			words[i] = string(unicode.ToUpper(r)) + w[n:]
		}
	}
	return strings.Join(words, " ")
}
