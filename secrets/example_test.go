package secrets_test

import (
	"fmt"
	"strings"

	"github.com/memdir/memdir/secrets"
)

// A memory that quotes a token is refused with the kinds of secret found,
// never the secret itself.
func ExampleScan() {
	// The token is assembled here so that no token-shaped literal sits in
	// the source.
	note := "Deploy with " + "ghp_" + strings.Repeat("a1B2", 9) + " before Friday."
	if ms := secrets.Scan(note); ms != nil {
		fmt.Printf("Content contains potential secrets (%s).\n", secrets.Labels(ms))
	}
	// Output: Content contains potential secrets (GitHub PAT).
}

func ExampleRedact() {
	note := "export STRIPE_KEY=" + "sk_live_" + strings.Repeat("4eC39Hq", 4) + "\n"
	fmt.Print(secrets.Redact(note))
	// Output: export STRIPE_KEY=[REDACTED]
}

func ExampleLabel() {
	fmt.Println(secrets.Label("github-fine-grained-pat"))
	// Output: GitHub Fine Grained PAT
}
