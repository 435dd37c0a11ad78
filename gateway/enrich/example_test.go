package enrich_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/gateway/enrich"
)

// A rule that tells the model who owns a repository and where its
// runbook is, on open issues only, and records the owner in the
// structured result.
func Example() {
	e, err := enrich.New([]enrich.Rule{{
		Name:  "ownership",
		Tools: []string{"github__get_issue", "github__list_*"},
		When:  `result.state == "open"`,
		Text:  []string{"{{.args.repo}} is owned by team {{.caller.claims.team}}."},
		Links: []enrich.Link{{
			URI:  "https://runbooks.example/{{pathescape .args.repo}}",
			Name: "runbook",
		}},
		Structured: map[string]string{"owner": `{"team": {{json .caller.claims.team}}}`},
	}})
	if err != nil {
		panic(err)
	}
	call := &enrich.Call{
		Tool:      "github__get_issue",
		Upstream:  "github",
		Arguments: json.RawMessage(`{"repo":"acme/api","number":7}`),
		Identity:  "alice",
		Claims:    map[string]any{"team": "platform"},
	}
	result := json.RawMessage(`{"content":[{"type":"text","text":"#7 Crash on start"}],"structuredContent":{"number":7,"state":"open"}}`)

	out, errs := e.Apply(context.Background(), call, result)
	fmt.Println(string(out))
	fmt.Println(errs)
	// Output:
	// {"content":[{"type":"text","text":"#7 Crash on start"},{"type":"text","text":"acme/api is owned by team platform."},{"type":"resource_link","uri":"https://runbooks.example/acme%2Fapi","name":"runbook"}],"structuredContent":{"number":7,"state":"open","owner":{"team":"platform"}}}
	// []
}
