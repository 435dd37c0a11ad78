package gateway

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/enrich"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/wirejson"
)

// Enricher adds context to a tool's successful result before it leaves
// the gateway: *enrich.Enricher, built from the config's rules and Go
// hooks. It returns the result to send (the same bytes when it adds
// nothing) and what failed, which never fails the call.
type Enricher interface {
	Apply(ctx context.Context, call *enrich.Call, result json.RawMessage) (json.RawMessage, []error)
	// StructuredKeys are the structuredContent keys Apply may add to the
	// tool's results: the gateway declares them in its outputSchema.
	StructuredKeys(tool string) []string
}

// enrichResult applies e to a forwarded tool result (raw bytes; the
// gateway's own failure results are left alone).
func (g *Gateway) enrichResult(ctx context.Context, e Enricher, rec *audit.Record, id policy.Identity, args json.RawMessage, res any) any {
	raw, ok := res.(json.RawMessage)
	if !ok {
		return res
	}
	call := &enrich.Call{Tool: rec.Tool, Upstream: rec.Upstream, Arguments: args,
		Identity: id.String(), Persona: rec.Persona, Claims: id.Claims}
	out, errs := e.Apply(ctx, call, raw)
	for _, err := range errs {
		g.metrics.enrichFailed()
		g.opts.logger.Warn("enrichment rule failed; the result goes out without it", "tool", rec.Tool, "error", err)
	}
	if out == nil {
		return raw
	}
	return out
}

// widenSchemas declares, in the outputSchema of every tool whose results
// enrichment may add structuredContent keys to, those keys (as properties
// of any type), so that a client validating results against the schema
// does not refuse an enriched one. A key the schema already has is left
// as it is.
func widenSchemas(cat *catalog, e Enricher) {
	if e == nil {
		return
	}
	for name, def := range cat.toolDefs {
		if len(def.OutputSchema) == 0 {
			continue
		}
		keys := e.StructuredKeys(name)
		if len(keys) == 0 {
			continue
		}
		var schema map[string]json.RawMessage
		if wirejson.Unmarshal(def.OutputSchema, &schema) != nil {
			continue
		}
		props := map[string]json.RawMessage{}
		if raw, ok := schema["properties"]; ok && wirejson.Unmarshal(raw, &props) != nil {
			continue
		}
		for _, k := range keys {
			if _, ok := props[k]; !ok {
				props[k] = json.RawMessage(`{}`)
			}
		}
		var err error
		if schema["properties"], err = json.Marshal(props); err != nil {
			continue
		}
		wide, err := json.Marshal(schema)
		if err != nil {
			continue
		}
		nd := *def
		nd.OutputSchema = wide
		cat.toolDefs[name] = &nd
	}
}
