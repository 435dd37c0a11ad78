package main

import (
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// serveStdio is a stdio target running `toolwire serve --stdio` with extra
// serve flags, its tasks in a data directory of the test's own.
func serveStdio(t *testing.T, flags ...string) []string {
	return append([]string{"--", testenv.Toolwire(t), "serve", "--stdio", "--log-level", "warn", "--data-dir", t.TempDir()}, flags...)
}

// get-env shows no secret and no unallowed variable; --env-allow (repeated
// or comma-separated) shows allowed ones, secret-looking names redacted.
func TestServeEnvAllowFlag(t *testing.T) {
	t.Setenv("TOOLWIRE_TEST_API_TOKEN", "s3cret-flag-token")
	t.Setenv("TOOLWIRE_TEST_PLAIN", "plain-flag-value")
	t.Setenv("TOOLWIRE_OTHER", "other-flag-value")
	r := runCLI(t, append([]string{"call", "get-env"}, serveStdio(t)...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, v := range []string{"s3cret-flag-token", "plain-flag-value", "other-flag-value", "TOOLWIRE_"} {
		if strings.Contains(r.stdout, v) {
			t.Errorf("get-env without --env-allow shows %s:\n%s", v, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "--env-allow") {
		t.Errorf("get-env does not say how to widen it:\n%s", r.stdout)
	}
	for _, flags := range [][]string{
		{"--env-allow", "TOOLWIRE_TEST_*,TOOLWIRE_OTHER"},
		{"--env-allow", "TOOLWIRE_TEST_*", "--env-allow", "TOOLWIRE_OTHER"},
	} {
		r := runCLI(t, append([]string{"call", "get-env"}, serveStdio(t, flags...)...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", flags, r.code, r.stderr)
		}
		if strings.Contains(r.stdout, "s3cret-flag-token") || !strings.Contains(r.stdout, `"TOOLWIRE_TEST_API_TOKEN": "[redacted]"`) ||
			!strings.Contains(r.stdout, "plain-flag-value") || !strings.Contains(r.stdout, "other-flag-value") {
			t.Errorf("%v: get-env:\n%s", flags, r.stdout)
		}
	}
}

// --files lets gzip-file-as-resource read files inside the directory only;
// --gzip-max-bytes bounds them.
func TestServeFilesAndGzipMaxFlags(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("gzip me please"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, append([]string{"call", "gzip-file-as-resource", "data=note.txt", "outputType=resource", "--json"},
		serveStdio(t, "--files", root)...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"blob"`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
	i := strings.Index(r.stdout, `"blob": "`) + len(`"blob": "`)
	raw, err := base64.StdEncoding.DecodeString(r.stdout[i : i+strings.Index(r.stdout[i:], `"`)])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != "gzip me please" {
		t.Errorf("gunzipped %q", b)
	}
	for _, tc := range []struct {
		flags []string
		data  string
		want  string
	}{
		{[]string{"--files", root}, "file://" + filepath.Join(outside, "secret.txt"), "outside"},
		{[]string{"--files", root}, "http://127.0.0.1:9/x", "never fetches http"},
		{[]string{"--files", root, "--gzip-max-bytes", "4"}, "note.txt", "larger than the 4"},
		{nil, "note.txt", "no file root"},
	} {
		r := runCLI(t, append([]string{"call", "gzip-file-as-resource", "data=" + tc.data}, serveStdio(t, tc.flags...)...)...)
		if r.code == 0 || !strings.Contains(r.stdout+r.stderr, tc.want) || strings.Contains(r.stdout+r.stderr, "not yours") {
			t.Errorf("%v %s: exit %d, stdout %q, stderr %q; want a tool error with %q", tc.flags, tc.data, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

func TestServeReferenceFlagErrors(t *testing.T) {
	bin := testenv.Toolwire(t)
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, want string }{
		{"--gzip-max-bytes=0", "--gzip-max-bytes must be positive"},
		{"--files=" + file, "not a directory"},
		{"--files=" + filepath.Join(file, "missing"), "not a directory"},
		{"--env-allow=*", "invalid --env-allow"},
		{"--env-allow=A*B", "invalid --env-allow"},
		// Sizes and durations share the config file's syntax and messages.
		{"--max-body-size=4MB", `"4MB" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"--memory-budget=-1", `"-1" is not a size`},
		{"--tool-timeout=soon", `"soon" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"--session-ttl=-5s", `"-5s" is not a duration`},
	} {
		out, err := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), tc.flag).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %v: %s", tc.flag, err, out)
		}
	}
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--env-allow", "--files", "--gzip-max-bytes", "gzip-file-as-resource", "never\nfetches network URLs"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}
