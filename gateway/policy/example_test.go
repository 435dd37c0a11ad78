package policy_test

import (
	"fmt"
	"net/http"

	"github.com/toolwire/toolwire/gateway/policy"
)

// A gateway resolves the caller from its API key, then asks the policy
// about each tool.
func Example() {
	keys, err := policy.NewKeySet(map[string]string{"ci": policy.HashKey("twk_example-only")})
	if err != nil {
		panic(err)
	}
	p, err := policy.New([]policy.Persona{{
		Name:  "builders",
		Match: policy.Match{Identities: []string{"api_key:ci"}},
		Tools: policy.Rules{Allow: []string{"github.*"}, Deny: []string{"github.delete_*"}},
	}})
	if err != nil {
		panic(err)
	}

	h := http.Header{"X-Api-Key": {"twk_example-only"}}
	key, _ := policy.FromRequest(h)
	id := policy.Anonymous()
	if name, ok := keys.Lookup(key); ok {
		id = policy.FromAPIKey(name)
	}
	for _, d := range p.Explain(id, []string{"github.create_issue", "github.delete_repo", "slack.post"}) {
		fmt.Println(d.Name, d.Allowed, d.Rule)
	}
	fmt.Println(p.Decide(policy.Anonymous(), policy.Tools, "github.create_issue").Reason)
	// Output:
	// github.create_issue true github.*
	// github.delete_repo false github.delete_*
	// slack.post false no rule matched
	// denied: anonymous matches no persona
}
