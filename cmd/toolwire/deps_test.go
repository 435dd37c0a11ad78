package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The toolwire binary links neither gRPC nor the OTLP protobuf packages:
// traces go out as OTLP/HTTP JSON (internal/otlpjson), so the gateway does
// not pay their start-up memory whether or not tracing is on.
func TestLinksNoGRPC(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, p := range []string{"google.golang.org/grpc", "go.opentelemetry.io/proto/otlp"} {
			if dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("cmd/toolwire links %s", dep)
			}
		}
	}
}
