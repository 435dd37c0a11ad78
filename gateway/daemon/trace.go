package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolwire/toolwire/internal/otlpjson"
)

// tracesWanted says whether the OTEL_* environment asks for traces: an
// exporter named in OTEL_TRACES_EXPORTER other than none, or an OTLP
// endpoint; OTEL_SDK_DISABLED=true wins. Nothing set: no traces.
func tracesWanted(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return true
}

// TracerProviderFromEnv builds the tracer provider the OpenTelemetry
// environment asks for, or nil when it asks for none: traces are on with
// an exporter named in OTEL_TRACES_EXPORTER (otlp or console; none is off)
// or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and OTEL_SDK_DISABLED=true keeps
// them off. OTLP is sent over HTTP with JSON bodies (protocol http/json,
// which every OpenTelemetry collector accepts on its OTLP/HTTP port);
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc or http/protobuf is an error, so that
// the gateway does not link gRPC and the OTLP protobuf packages. The
// endpoint, headers, timeout and compression (OTEL_EXPORTER_OTLP_*), the
// sampler (OTEL_TRACES_SAMPLER), the batching (OTEL_BSP_*) and the
// resource (OTEL_SERVICE_NAME, default toolwire-gateway;
// OTEL_RESOURCE_ATTRIBUTES) come from the same environment; an exporter
// it names that does not exist is an error. The caller passes it to Run
// (WithTracerProvider) and shuts it down after Run returns, so that the
// last spans are sent.
func TracerProviderFromEnv(ctx context.Context, logger *slog.Logger) (*sdktrace.TracerProvider, error) {
	if !tracesWanted(os.Getenv) {
		return nil, nil
	}
	exp, err := spanExporter(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry traces: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "toolwire-gateway")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		logger.Warn("OpenTelemetry resource", "error", err) // res still holds what was read
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logger.Warn("OpenTelemetry", "error", err) }))
	exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	if exporter == "" {
		exporter = "otlp"
	}
	logger.Info("OpenTelemetry traces on", "exporter", exporter)
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// spanExporter is the exporter OTEL_TRACES_EXPORTER names: otlp (the
// default) or console (the spans as JSON on stdout).
func spanExporter(getenv func(string) string) (sdktrace.SpanExporter, error) {
	switch name := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); name {
	case "", "otlp":
		cfg, err := otlpjson.FromEnv(getenv)
		if err != nil {
			return nil, err
		}
		return otlpjson.New(cfg)
	case "console":
		return stdouttrace.New()
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: want otlp, console or none", name)
	}
}
