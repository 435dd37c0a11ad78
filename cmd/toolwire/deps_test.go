package main

import (
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// The toolwire binary links neither gRPC nor the OTLP protobuf packages:
// traces go out as OTLP/HTTP JSON (internal/otlpjson), so the gateway does
// not pay their start-up memory whether or not tracing is on.
func TestLinksNoGRPC(t *testing.T) {
	testenv.LinksNone(t, "google.golang.org/grpc", "go.opentelemetry.io/proto/otlp")
}
