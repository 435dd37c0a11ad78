// Package reference hosts the reference tools that `toolwire serve` serves:
// tools in the style of the MCP reference "everything" server, covering every
// content type, structured output with its text fallback, both failure
// channels, progress and cancellation, a tool without parameters, and one
// that calls the client back mid-call.
package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
	"github.com/toolwire/toolwire/server"
)

// Info is the reference server's implementation info; its version is the
// module's (toolwire.Version).
func Info() mcp.Implementation {
	return mcp.Implementation{Name: "toolwire-reference", Title: "toolwire reference tools", Version: toolwire.Version()}
}

// NewServer returns a server hosting every reference tool.
func NewServer(opts ...server.Option) (*server.Server, error) {
	s := server.New(Info(), opts...)
	if err := Register(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Register adds every reference tool and prompt to s.
func Register(s *server.Server, opts ...Option) error {
	return newConfig(opts).register(s)
}

func (c *config) register(s *server.Server) error {
	for _, add := range []func(*server.Server) error{
		addEcho, addGetSum, addStructured, addWeather, addTinyImage, addAnnotated,
		addResourceLinks, addResourceReference, addGallery, addSafeDivide, addLongRunning, addGetVersion,
		addGetRootsList, c.addGetEnv, c.addResearch, c.addPrompts, c.addCompletions, c.addResources,
		c.addGzip, c.addToggles,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// echoSchema is hand-written and pins draft-07, as the reference
// "everything" server's does: raw schemas and older dialects are first-class.
const echoSchema = `{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},` +
	`"required":["message"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`

func addEcho(s *server.Server) error {
	type in struct {
		Message string `json:"message"`
	}
	return server.AddTool(s, &mcp.Tool{
		Name: "echo", Title: "Echo Tool", Description: "Echoes back the input string",
		InputSchema: json.RawMessage(echoSchema),
		Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskForbidden},
	}, func(ctx context.Context, req *server.CallRequest, in in) (string, error) {
		return "Echo: " + in.Message, nil
	})
}

// SumInput is the input of get-sum.
type SumInput struct {
	A float64 `json:"a" jsonschema:"First number"`
	B float64 `json:"b" jsonschema:"Second number"`
}

func addGetSum(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-sum", Title: "Get Sum Tool", Description: "Returns the sum of two numbers",
	}, func(ctx context.Context, req *server.CallRequest, in SumInput) (string, error) {
		return fmt.Sprintf("The sum of %s and %s is %s.", num(in.A), num(in.B), num(in.A+in.B)), nil
	})
}

func num(f float64) string { return fmt.Sprint(f) }

// CityInput picks one of the cities get-structured-content knows.
type CityInput struct {
	Location string `json:"location" jsonschema:"Choose city" enum:"New York,Chicago,Los Angeles"`
}

// CityWeather is the structured output of get-structured-content.
type CityWeather struct {
	Temperature float64 `json:"temperature" jsonschema:"Temperature in celsius"`
	Conditions  string  `json:"conditions" jsonschema:"Weather conditions description"`
	Humidity    float64 `json:"humidity" jsonschema:"Humidity percentage"`
}

var cityWeather = map[string]CityWeather{
	"New York":    {Temperature: 33, Conditions: "Cloudy", Humidity: 82},
	"Chicago":     {Temperature: 36, Conditions: "Light rain / drizzle", Humidity: 82},
	"Los Angeles": {Temperature: 73, Conditions: "Sunny / Clear", Humidity: 48},
}

func addStructured(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-structured-content", Title: "Get Structured Content Tool",
		Description: "Returns structured content along with an output schema for client data validation",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), DestructiveHint: mcp.Bool(false),
			IdempotentHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
	}, func(ctx context.Context, req *server.CallRequest, in CityInput) (CityWeather, error) {
		return cityWeather[in.Location], nil
	})
}

// WeatherInput is the input of weather.
type WeatherInput struct {
	City string `json:"city,omitempty" jsonschema:"city to report on" default:"Amsterdam"`
}

// WeatherOutput is the structured output of weather.
type WeatherOutput struct {
	Conditions string  `json:"conditions" jsonschema:"short weather description"`
	TempC      float64 `json:"temp_c" jsonschema:"temperature in celsius"`
}

func addWeather(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "weather", Title: "Weather", Description: "Reports the current weather of a city as structured data",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true)},
	}, func(ctx context.Context, req *server.CallRequest, in WeatherInput) (WeatherOutput, error) {
		return WeatherOutput{TempC: 22.5, Conditions: "partly cloudy"}, nil
	})
}

// tinyPNG returns the 2x2 PNG get-tiny-image returns.
func TinyPNG() []byte { return slices.Clone(tinyPNG()) }

// tinyPNG is encoded on first use: the PNG encoder's compressor takes
// most of a megabyte, which a program that never serves the image (the
// gateway links this package) should not pay at start-up.
var tinyPNG = sync.OnceValue(func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{R: 0xd9, G: 0x77, B: 0x57, A: 0xff})
	img.Set(1, 0, color.NRGBA{R: 0x1f, G: 0x1e, B: 0x1d, A: 0xff})
	img.Set(0, 1, color.NRGBA{R: 0x1f, G: 0x1e, B: 0x1d, A: 0xff})
	img.Set(1, 1, color.NRGBA{R: 0xd9, G: 0x77, B: 0x57, A: 0xff})
	var b bytes.Buffer
	_ = png.Encode(&b, img) // encoding an in-memory image cannot fail
	return b.Bytes()
})

type noInput struct{}

func addTinyImage(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-tiny-image", Title: "Get Tiny Image Tool", Description: "Returns a tiny PNG image between two text blocks",
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Here is a tiny image:"},
			&mcp.ImageContent{Data: tinyPNG(), MIMEType: "image/png"},
			&mcp.TextContent{Text: "That was a 2x2 PNG image."},
		}}, nil
	})
}

// AnnotatedInput selects the message get-annotated-message returns.
type AnnotatedInput struct {
	MessageType  string `json:"messageType" jsonschema:"Type of message to demonstrate annotations" enum:"error,success,debug"`
	IncludeImage bool   `json:"includeImage,omitempty" jsonschema:"Whether to add an annotated image" default:"false"`
}

func addAnnotated(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-annotated-message", Title: "Get Annotated Message Tool",
		Description: "Shows how annotations tell a client who a block is for and how much it matters",
	}, func(ctx context.Context, req *server.CallRequest, in AnnotatedInput) (*mcp.CallToolResult, error) {
		var block *mcp.TextContent
		switch in.MessageType {
		case "error":
			block = &mcp.TextContent{Text: "Error: operation failed",
				Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser, mcp.RoleAssistant}, Priority: mcp.Priority(1)}}
		case "success":
			block = &mcp.TextContent{Text: "Operation completed successfully",
				Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: mcp.Priority(0.7)}}
		default:
			block = &mcp.TextContent{Text: "Debug: cache hit ratio 0.95, latency 150ms",
				Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleAssistant}, Priority: mcp.Priority(0)}}
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{block}}
		if in.IncludeImage {
			res.Content = append(res.Content, &mcp.ImageContent{Data: tinyPNG(), MIMEType: "image/png",
				Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: mcp.Priority(0.5)}})
		}
		return res, nil
	})
}

// LinksInput is the input of get-resource-links.
type LinksInput struct {
	Count int `json:"count,omitempty" jsonschema:"Number of resource links to return (1-10)" default:"3"`
}

func addResourceLinks(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-resource-links", Title: "Get Resource Links Tool",
		Description: "Returns links to resources the client can read later",
	}, func(ctx context.Context, req *server.CallRequest, in LinksInput) (*mcp.CallToolResult, error) {
		if in.Count < 1 || in.Count > 10 {
			return mcp.ErrorResult("count must be between 1 and 10, got %d", in.Count), nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: fmt.Sprintf("Here are %d resource links:", in.Count)},
		}}
		for i := 1; i <= in.Count; i++ {
			l := &mcp.ResourceLink{URI: fmt.Sprintf("demo://resource/%d", i), Name: fmt.Sprintf("Resource %d", i)}
			if i%2 == 1 {
				l.MIMEType, l.Description = "text/plain", fmt.Sprintf("Plaintext resource %d", i)
			} else {
				l.MIMEType, l.Description = "application/octet-stream", fmt.Sprintf("Binary resource %d", i)
			}
			res.Content = append(res.Content, l)
		}
		return res, nil
	})
}

// ReferenceInput is the input of get-resource-reference.
type ReferenceInput struct {
	ResourceType string `json:"resourceType,omitempty" jsonschema:"Kind of resource to embed" enum:"text,blob" default:"text"`
	ResourceID   int    `json:"resourceId,omitempty" jsonschema:"ID of the resource (1-100)" default:"1"`
}

func addResourceReference(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-resource-reference", Title: "Get Resource Reference Tool",
		Description: "Returns a resource embedded in the result",
	}, func(ctx context.Context, req *server.CallRequest, in ReferenceInput) (*mcp.CallToolResult, error) {
		if in.ResourceID < 1 || in.ResourceID > MaxResourceID {
			return mcp.ErrorResult("resourceId must be an integer from 1 to %d, got %d", MaxResourceID, in.ResourceID), nil
		}
		uri := fmt.Sprintf("demo://%s/%d", in.ResourceType, in.ResourceID)
		var rc mcp.ResourceContents = &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain",
			Text: fmt.Sprintf("Resource %d: this is a plaintext resource", in.ResourceID)}
		if in.ResourceType == "blob" {
			rc = &mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream",
				Blob: []byte(fmt.Sprintf("Resource %d: this is a binary resource", in.ResourceID))}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Returning resource reference for " + uri},
			&mcp.EmbeddedResource{Resource: rc},
			&mcp.TextContent{Text: "The resource above can also be read with resources/read at " + uri},
		}}, nil
	})
}

// GalleryContent is the result of the gallery tool: one block of each of the
// five content types (text, image, audio, resource link, embedded resource).
func GalleryContent() []mcp.Content {
	return []mcp.Content{
		&mcp.TextContent{Text: "a result can carry many blocks",
			Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: mcp.Priority(0.9)}},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNGDATA")},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("WAVDATA")},
		&mcp.ResourceLink{MIMEType: "text/x-go", URI: "file:///project/main.go", Name: "main.go"},
		&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: "file:///note.txt", MIMEType: "text/plain", Text: "embedded inline"}},
	}
}

func addGallery(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "gallery", Title: "Gallery", Description: "Returns one content block of each of the five types",
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: GalleryContent()}, nil
	})
}

// DivideInput is the input of safe_divide.
type DivideInput struct {
	A float64 `json:"a" jsonschema:"dividend"`
	B float64 `json:"b" jsonschema:"divisor; must not be zero"`
}

// DivideOutput is the structured output of safe_divide.
type DivideOutput struct {
	Quotient float64 `json:"quotient" jsonschema:"a divided by b"`
}

func addSafeDivide(s *server.Server) error {
	out, err := schema.For[DivideOutput]()
	if err != nil {
		return err
	}
	return server.AddTool(s, &mcp.Tool{
		Name: "safe_divide", Title: "Safe Divide", Description: "Divides a by b; dividing by zero is a tool error the model can fix",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), IdempotentHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
		OutputSchema: out,
	}, func(ctx context.Context, req *server.CallRequest, in DivideInput) (*mcp.CallToolResult, error) {
		if in.B == 0 {
			return mcp.ErrorResult("cannot divide by zero; pass a non-zero b"), nil
		}
		return structured(DivideOutput{Quotient: in.A / in.B})
	})
}

// structured builds a result with structured content and its text fallback,
// for handlers that return *mcp.CallToolResult but declare an outputSchema.
func structured(v any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: raw}, nil
}

// LongRunningInput is the input of trigger-long-running-operation.
type LongRunningInput struct {
	Duration float64 `json:"duration,omitempty" jsonschema:"Duration of the operation in seconds" default:"10"`
	Steps    int     `json:"steps,omitempty" jsonschema:"Number of steps in the operation" default:"5"`
}

// addLongRunning adds trigger-long-running-operation. It may run as a task
// (execution.taskSupport optional): its progress is then also the task's
// status message.
func addLongRunning(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "trigger-long-running-operation", Title: "Trigger Long Running Operation",
		Description: "Runs for a while in steps, reporting progress after each one; honours cancellation",
	}, func(ctx context.Context, req *server.CallRequest, in LongRunningInput) (string, error) {
		if in.Steps < 1 || in.Steps > 1000 {
			return "", fmt.Errorf("steps must be between 1 and 1000, got %d", in.Steps)
		}
		if in.Duration < 0 || in.Duration > 3600 {
			return "", fmt.Errorf("duration must be between 0 and 3600 seconds, got %v", in.Duration)
		}
		step := time.Duration(in.Duration / float64(in.Steps) * float64(time.Second))
		t := time.NewTimer(step)
		defer t.Stop()
		for i := 1; i <= in.Steps; i++ {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-t.C:
				t.Reset(step)
			}
			if err := req.Progress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d of %d", i, in.Steps)); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("Long running operation completed. Duration: %v seconds, Steps: %d.", in.Duration, in.Steps), nil
	}, server.WithTaskSupport(mcp.TaskOptional))
}

func addGetVersion(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-version", Title: "Get Version", Description: "Returns the reference server's version; takes no parameters",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (string, error) {
		return "toolwire reference server " + toolwire.Version(), nil
	})
}

// addGetRootsList adds a tool that uses the session's back channel: it
// pings the client, then asks it for its roots (roots/list), in the middle
// of the call. Server-to-client requests exist only in 2025-era sessions,
// and roots/list only for clients that declare the roots capability.
func addGetRootsList(s *server.Server) error {
	return server.AddTool(s, &mcp.Tool{
		Name: "get-roots-list", Title: "Get Roots List",
		Description: "Lists the roots the client exposes (roots/list; a 2025-era session is pinged first); needs a client with the roots capability",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (string, error) {
		var b strings.Builder
		if req.Session() != nil {
			// Only a 2025-era session can be pinged.
			start := time.Now()
			if err := req.Ping(ctx); err != nil {
				return "", fmt.Errorf("the client did not answer ping: %w", err)
			}
			fmt.Fprintf(&b, "The client answered ping in %s and e", time.Since(start).Round(time.Millisecond))
		} else {
			b.WriteString("The client e")
		}
		res, err := req.ListRoots(ctx)
		if err != nil {
			return "", fmt.Errorf("cannot list the client's roots: %w", err)
		}
		fmt.Fprintf(&b, "xposes %d root(s)", len(res.Roots))
		for i, r := range res.Roots {
			sep := ": "
			if i > 0 {
				sep = ", "
			}
			b.WriteString(sep + r.URI)
			if r.Name != "" {
				b.WriteString(" (" + r.Name + ")")
			}
		}
		b.WriteString(".")
		return b.String(), nil
	})
}
