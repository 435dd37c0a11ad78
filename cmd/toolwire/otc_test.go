package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
)

// otcServe runs `toolwire serve --stdio --otc-addr` and returns the OTC
// endpoint. Closing stdin must stop both servers.
func otcServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Toolwire(t), append([]string{"serve", "--stdio", "--otc-addr", "127.0.0.1:0"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	endpoints := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`otc_endpoint=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				endpoints <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve did not exit cleanly at end of stdin: %v", err)
			}
		case <-time.After(30 * time.Second): // a failure bound, not a speed check
			_ = cmd.Process.Kill()
			t.Error("serve kept running after stdin closed")
		}
	})
	select {
	case ep := <-endpoints:
		return ep
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no OTC endpoint")
		return ""
	}
}

func TestCallOverOTC(t *testing.T) {
	ep := otcServe(t, "--otc-api-key", "secret-key-1")
	key := []string{"--otc", ep, "--otc-api-key", "secret-key-1"}
	call := func(args ...string) cliResult {
		t.Helper()
		return runCLI(t, append(append([]string{"call"}, key...), args...)...)
	}

	r := call("toolwire_reference.get_sum", "a=7", "b=5")
	if r.code != 0 || r.stdout != "The sum of 7 and 5 is 12.\n" {
		t.Errorf("get_sum: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = call("toolwire_reference.weather@1", "--json")
	var resp struct {
		CallID  string          `json:"call_id"`
		Success bool            `json:"success"`
		Value   json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || !resp.Success || resp.CallID == "" ||
		!sameJSON(t, string(resp.Value), `{"conditions":"partly cloudy","temp_c":22.5}`) {
		t.Errorf("weather --json: %v %q", err, r.stdout)
	}
	r = call("toolwire_reference.safe_divide", "a=1", "b=0")
	if r.code != 6 || !strings.Contains(r.stderr, "cannot divide by zero; pass a non-zero b") || !strings.Contains(r.stderr, "ERR_OTC_TOOL_ERROR") {
		t.Errorf("tool error: code %d stderr %q", r.code, r.stderr)
	}
	r = call("toolwire_reference.get_sum", `{"a":"seven","b":1}`)
	if r.code != 5 || !strings.Contains(r.stderr, "422") || !strings.Contains(r.stderr, "a:") || !strings.Contains(r.stderr, "ERR_OTC_REJECTED") {
		t.Errorf("invalid input: code %d stderr %q", r.code, r.stderr)
	}
	r = call("toolwire_reference.get_sm", "a=1")
	if r.code != 2 || !strings.Contains(r.stderr, "toolwire_reference.get_sum@1.0.0") {
		t.Errorf("unknown tool: code %d stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, "call", "--otc", ep, "toolwire_reference.get_sum", "a=7", "b=5")
	if r.code != 5 || !strings.Contains(r.stderr, "401") {
		t.Errorf("without the key: code %d stderr %q", r.code, r.stderr)
	}
}

func TestCallOverOTCUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := runCLI(t, "call", "--otc", "http://"+addr, "Calculator.Add", "a=1")
	if r.code != 3 || !strings.Contains(r.stderr, "ERR_OTC_TRANSPORT") {
		t.Errorf("code %d stderr %q", r.code, r.stderr)
	}
}
