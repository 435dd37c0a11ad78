package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The handler's own types are the contract: the input schema comes from
// WeatherIn, the output schema from WeatherOut, and arguments are validated
// before the handler runs.
func ExampleAddTool() {
	type WeatherIn struct {
		City  string `json:"city" jsonschema:"city to report on"`
		Units string `json:"units,omitempty" jsonschema:"temperature units" enum:"celsius,fahrenheit" default:"celsius"`
	}
	type WeatherOut struct {
		Conditions string  `json:"conditions"`
		Temp       float64 `json:"temp"`
		Units      string  `json:"units"`
	}
	s := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"})
	err := server.AddTool(s, &mcp.Tool{Name: "weather", Description: "Current weather for a city"},
		func(ctx context.Context, req *server.CallRequest, in WeatherIn) (WeatherOut, error) {
			return WeatherOut{Conditions: "partly cloudy", Temp: 22.5, Units: in.Units}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool, _ := s.Tool("weather")
	fmt.Println(string(tool.InputSchema))

	res, _ := s.CallTool(context.Background(), "weather", json.RawMessage(`{"city":"Utrecht"}`), nil)
	fmt.Println(string(res.StructuredContent))

	res, _ = s.CallTool(context.Background(), "weather", json.RawMessage(`{"units":"kelvin"}`), nil)
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"city to report on"},"units":{"type":"string","description":"temperature units","default":"celsius","enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}
	// {"conditions":"partly cloudy","temp":22.5,"units":"celsius"}
	// true invalid arguments for tool "weather": /city: required property is missing; /units: value must be one of 'celsius', 'fahrenheit'
}

// A handler error becomes an isError result the model can read and act on.
func ExampleAddTool_toolError() {
	type DivideIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	s := server.New(mcp.Implementation{Name: "math", Version: "1.0.0"})
	_ = server.AddTool(s, &mcp.Tool{Name: "divide"},
		func(ctx context.Context, req *server.CallRequest, in DivideIn) (float64, error) {
			if in.B == 0 {
				return 0, errors.New("cannot divide by zero; pass a non-zero b")
			}
			return in.A / in.B, nil
		})
	res, _ := s.CallTool(context.Background(), "divide", json.RawMessage(`{"a":1,"b":0}`), nil)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	// Output:
	// {"content":[{"type":"text","text":"cannot divide by zero; pass a non-zero b"}],"isError":true}
}

// A handler that builds the result itself returns *mcp.CallToolResult; the
// encoder writes each block's type.
func ExampleAddTool_content() {
	s := server.New(mcp.Implementation{Name: "pics", Version: "1.0.0"})
	_ = server.AddTool(s, &mcp.Tool{Name: "logo"},
		func(ctx context.Context, req *server.CallRequest, in struct{}) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "our logo", Annotations: &mcp.Annotations{Priority: mcp.Priority(0)}},
				&mcp.ImageContent{Data: []byte("PNGDATA"), MIMEType: "image/png"},
			}}, nil
		})
	res, _ := s.CallTool(context.Background(), "logo", nil, nil)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	// Output:
	// {"content":[{"type":"text","text":"our logo","annotations":{"priority":0}},{"type":"image","data":"UE5HREFUQQ==","mimeType":"image/png"}]}
}
