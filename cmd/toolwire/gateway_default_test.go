package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/testenv"
)

// TestGatewayDefaultAuditsToStateDir: the embedded default keeps its
// audit trail under toolwire's state directory, says where in one INFO
// line, logs no warning at a clean start, and `toolwire audit query`,
// `verify` and `tail` without flags read that trail, a call made through
// the gateway in it.
func TestGatewayDefaultAuditsToStateDir(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	trail := filepath.Join(state, "toolwire", "gateway", daemon.AuditFile)

	// Before the gateway ever ran: a clear message, not a raw error.
	r := runCLIEnv(t, env, "audit", "query")
	if r.code == 0 || !strings.Contains(r.stderr, "no audit trail at "+trail) || !strings.Contains(r.stderr, "has not run yet") ||
		strings.Contains(r.stderr, "no such file") {
		t.Fatalf("audit query before any gateway: exit %d\n%s", r.code, r.stderr)
	}

	cmd := exec.Command(testenv.Toolwire(t), "gateway", "--listen", "127.0.0.1:0", "--admin-listen", "off")
	cmd.Env = append(os.Environ(), env...)
	g := waitGateway(t, cmd)
	log := g.log.String()
	if n := strings.Count(log, `msg="audit trail on" store=`+trail+" "); n != 1 {
		t.Errorf("want one line naming the trail %s, got %d:\n%s", trail, n, log)
	}
	if strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
		t.Errorf("a clean start of the default logs warnings:\n%s", log)
	}
	r = runCLI(t, "call", g.url, "serve__echo", "message=audited")
	if r.code != 0 {
		t.Fatalf("call: exit %d\n%s", r.code, r.stderr)
	}

	r = runCLIEnv(t, env, "audit", "query")
	if r.code != 0 || !strings.Contains(r.stdout, "serve__echo") || !strings.Contains(r.stdout, "ok") {
		t.Errorf("audit query without flags: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIEnv(t, env, "audit", "tail", "-n", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "serve__echo") {
		t.Errorf("audit tail without flags: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIEnv(t, env, "audit", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: ") || !strings.Contains(r.stdout, "keyed: HMAC-SHA-256") {
		t.Errorf("audit verify without flags: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestGatewayDefaultCheckClean: `gateway --check` of the embedded default
// logs no warning (its two upstreams' resources do not collide: each is
// served once), names each upstream's transport, says where calls are
// audited and exits 0.
func TestGatewayDefaultCheckClean(t *testing.T) {
	state := t.TempDir()
	r := runCLIEnv(t, []string{"XDG_STATE_HOME=" + state}, "gateway", "--check")
	if r.code != 0 {
		t.Fatalf("gateway --check: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "level=WARN") || strings.Contains(r.stderr, "level=ERROR") {
		t.Errorf("gateway --check of the default logs warnings:\n%s", r.stderr)
	}
	for _, want := range []string{"reference__echo", "serve__echo", "reference  ready  in-process", "serve      ready  stdio",
		"\naudit: every call recorded in " + filepath.Join(state, "toolwire", "gateway", daemon.AuditFile) + "; read them with toolwire audit query\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("gateway --check: %q missing:\n%s", want, r.stdout)
		}
	}
}

// TestAuditQueryNewestByDefault: `audit query` shows the newest --limit
// records, oldest of them first; --oldest the first ones.
func TestAuditQueryNewestByDefault(t *testing.T) {
	dir := auditDir(t, 12, "api_key:alice")
	seqs := func(out string) []string {
		var s []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			s = append(s, strings.Fields(l)[0])
		}
		return s
	}
	out, _, err := runInProcess(t, nil, "audit", "query", "--data-dir", dir, "--limit", "3")
	if got := strings.Join(seqs(out), " "); err != nil || got != "10 11 12" {
		t.Errorf("query --limit 3: %v, records %s\n%s", err, got, out)
	}
	out, _, err = runInProcess(t, nil, "audit", "query", "--data-dir", dir, "--limit", "3", "--oldest")
	if got := strings.Join(seqs(out), " "); err != nil || got != "1 2 3" {
		t.Errorf("query --limit 3 --oldest: %v, records %s\n%s", err, got, out)
	}
	out, _, err = runInProcess(t, nil, "audit", "query", "--data-dir", dir)
	if got := seqs(out); err != nil || len(got) != 12 || got[0] != "1" {
		t.Errorf("query: %v, records %v\n%s", err, got, out)
	}
}
