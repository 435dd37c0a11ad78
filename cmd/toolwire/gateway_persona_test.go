package main

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// personaConfig is a gateway config with API keys alice and bob, and one
// persona, analyst, for alice only, with rules for tools, prompts,
// resources and resource templates (the last decided by the resources
// rules on their uriTemplate): the persona the docs show.
const personaConfig = `personas:
  analyst:
    identities: [alice]
    tools:
      allow: ["ref__get-*", "ref__echo"]
      deny: ["ref__get-env"]
    prompts:
      allow: ["ref__simple-prompt"]
    resources:
      allow: ["demo://readme", "demo://text/*"]
`

// TestGatewayPersonaCoversResourcesAndTemplates: one persona's rules
// reach every kind: explain decides tools, prompts, resources and
// resource templates; through the gateway alice lists what it allows and
// reads an allowed resource, and her call of a tool it hides is sent,
// denied and audited; bob, whom no persona matches, is refused
// (403, naming him) in both eras, and explain tells him so instead of a
// table of denials.
func TestGatewayPersonaCoversResourcesAndTemplates(t *testing.T) {
	bin := testenv.Toolwire(t)
	keys, auth := apiKeys(t, "alice", "bob")
	addr := testenv.FreeAddr(t)
	cfg := writeConfig(t, t.TempDir(), "listen: "+addr+"\n"+auth+personaConfig+stdioUpstreams(bin, "ref"))

	out, stderr, code := runToolwire(t, "gateway", "explain", "--config", cfg, "--identity", "alice")
	if code != 0 {
		t.Fatalf("explain alice: exit %d\n%s", code, stderr)
	}
	for _, line := range []string{
		`tool\s+ref__echo\s+allowed\s+ref__echo`,
		`tool\s+ref__get-env\s+denied\s+ref__get-env`,
		`prompt\s+ref__simple-prompt\s+allowed\s+ref__simple-prompt`,
		`prompt\s+ref__args-prompt\s+denied\s+no rule matched`,
		`resource\s+demo://readme\s+allowed\s+demo://readme`,
		`resource\s+demo://logo.png\s+denied\s+no rule matched`,
		`template\s+demo://text/\{id\}\s+allowed\s+demo://text/\*`,
		`template\s+demo://blob/\{id\}\s+denied\s+no rule matched`,
	} {
		if !regexpLine(out, line) {
			t.Errorf("explain alice: no line %s\n%s", line, out)
		}
	}
	out, _, code = runToolwire(t, "gateway", "explain", "--config", cfg, "--identity", "bob")
	if code != 0 || !strings.HasPrefix(out, "caller api_key:bob matches no persona: the gateway refuses its every request (403") ||
		!strings.Contains(out, "analyst: ") || strings.Contains(out, "KIND") {
		t.Errorf("explain bob: exit %d\n%s", code, out)
	}

	g := startGateway(t, "--config", cfg, "--listen", addr)
	alice := []string{"-H", "Authorization: Bearer " + keys[0]}
	r := runCLI(t, append(append([]string{"resources"}, alice...), g.url)...)
	if r.code != 0 || !strings.Contains(r.stdout, "demo://readme") || strings.Contains(r.stdout, "demo://logo.png") ||
		!strings.Contains(r.stdout, "demo://text/{id}") || strings.Contains(r.stdout, "demo://blob/{id}") {
		t.Errorf("alice's resources: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, append(append([]string{"read"}, alice...), g.url, "demo://text/7")...)
	if r.code != 0 {
		t.Errorf("alice reads demo://text/7: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, append(append([]string{"prompts"}, alice...), g.url)...)
	if r.code != 0 || !strings.Contains(r.stdout, "ref__simple-prompt") || strings.Contains(r.stdout, "ref__args-prompt") {
		t.Errorf("alice's prompts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A tool her persona hides is called all the same: the gateway denies
	// it, says why, and audits the denial.
	r = runCLI(t, append(append([]string{"call"}, alice...), g.url, "ref__get-env")...)
	if r.code != 6 || !strings.Contains(r.stderr, `denied by persona "analyst": tools.deny "ref__get-env"`) {
		t.Errorf("alice calls the hidden ref__get-env: exit %d\n%s", r.code, r.stderr)
	}
	if denied := auditJSONL(t, "--config", cfg, "--outcome", "denied"); len(denied) != 1 || denied[0].Tool != "ref__get-env" || denied[0].Identity != "api_key:alice" {
		t.Errorf("denied records: %+v", denied)
	}
	for _, era := range []string{"modern", "legacy"} {
		r = runCLI(t, "tools", "--era", era, "-H", "Authorization: Bearer "+keys[1], g.url)
		if r.code != 3 || !strings.Contains(r.stderr, "HTTP 403") || !strings.Contains(r.stderr, "no persona admits api_key:bob") || r.stdout != "" {
			t.Errorf("%s: bob lists tools: exit %d\n%s%s", era, r.code, r.stdout, r.stderr)
		}
	}
}
