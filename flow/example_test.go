package flow_test

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/flow"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// Example parses a small manifest and runs it against a server in the same
// process: a tool call, an assertion on its result, a caught tool error
// and an output.
func Example() {
	srv := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"})
	type in struct {
		City string `json:"city"`
	}
	_ = server.AddTool(srv, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallRequest, a in) (string, error) {
		if a.City == "Atlantis" {
			return "", fmt.Errorf("no forecast under water")
		}
		return "sunny in " + a.City, nil
	})

	manifest := `
name: weather
inputs:
  city: {type: string, default: Paris}
clients:
  weather: {command: weather-server}   # replaced by WithClient below
steps:
  - name: today
    call: {tool: forecast, arguments: {city: "${{ inputs.city }}"}}
  - assert: {that: "${{ steps.today.result.content.filter(c, c.type == 'text')[0].text }}", contains: sunny}
  - try:
      - call: {tool: forecast, arguments: {city: Atlantis}}
      - throw: {code: UNEXPECTED, message: Atlantis has weather}
    catch:
      - codes: [ERR_MCP_TOOL_ERROR]
        do:
          - name: why
            value: "${{ error.data.content[0].text }}"
outputs:
  today: "${{ steps.today.result.content.filter(c, c.type == 'text')[0].text }}"
  why: "${{ steps.why.result }}"
`
	f, err := flow.Parse("weather.flow.yaml", []byte(manifest))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, &client.Conn{Conn: memory.Serve(ctx, srv)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	res, err := f.Flows[0].Run(ctx, flow.WithClient("weather", c), flow.WithInputs(map[string]string{"city": "Lyon"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failed:", res.Err != nil)
	fmt.Println("today:", res.Outputs["today"])
	fmt.Println("why:", res.Outputs["why"])
	for _, s := range res.Steps {
		fmt.Println(s.Path, s.Kind, s.Status)
	}
	// Output:
	// failed: false
	// today: sunny in Lyon
	// why: no forecast under water
	// steps[0] call ok
	// steps[1] assert ok
	// steps[2].try[0] call failed
	// steps[2].catch[0].do[0] value ok
	// steps[2] try caught
}
