package daemon_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/gateway/daemon"
)

// TestTracerProviderFromEnvRefuses: an OTLP protocol other than
// http/json, or an exporter that does not exist, is an error that names
// what to set instead, not a gateway that silently sends nothing.
func TestTracerProviderFromEnvRefuses(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct{ env, value, want string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: toolwire sends OTLP traces as http/json only"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "set OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
		{"OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER=zipkin: want otlp, console or none"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("OTEL_SDK_DISABLED", "")
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			t.Setenv(tc.env, tc.value)
			tp, err := daemon.TracerProviderFromEnv(t.Context(), logger)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s=%s: %v, want an error with %q", tc.env, tc.value, err, tc.want)
			}
			if tp != nil {
				_ = tp.Shutdown(t.Context())
			}
		})
	}
}

// TestTracerProviderFromEnvOTLP: an OTLP endpoint alone turns traces on
// with the http/json exporter.
func TestTracerProviderFromEnvOTLP(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tp, err := daemon.TracerProviderFromEnv(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || tp == nil {
		t.Fatalf("provider %v, error %v", tp, err)
	}
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}
