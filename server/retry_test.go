package server_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

type ringIn struct {
	DoorbellID string `json:"doorbell_id"`
}

// addDoorbell registers a tool that fails with retry guidance for unknown ids.
func addDoorbell(t *testing.T, s *server.Server) {
	t.Helper()
	err := server.AddTool(s, &mcp.Tool{Name: "ring", Description: "rings a doorbell"},
		func(ctx context.Context, req *server.CallRequest, in ringIn) (*mcp.CallToolResult, error) {
			if in.DoorbellID != "doorbell42" {
				return nil, &server.RetryableError{
					Message: "Doorbell ID not found",
					RetryGuidance: mcp.RetryGuidance{
						DeveloperMessage:        fmt.Sprintf("The doorbell with ID '%s' does not exist.", in.DoorbellID),
						CanRetry:                true,
						RetryAfterMs:            500,
						AdditionalPromptContent: "ids: doorbell42",
					},
					Err: fs.ErrNotExist,
				}
			}
			return &mcp.CallToolResult{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRetryableErrorReachesMCPClientInMeta(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "t", Version: "1"})
	addDoorbell(t, s)
	want := mcp.RetryGuidance{DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
		CanRetry: true, RetryAfterMs: 500, AdditionalPromptContent: "ids: doorbell42"}
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		p := connect(t, s)
		p.initialize(version)
		res := callResult(t, p.call("tools/call", map[string]any{"name": "ring", "arguments": map[string]any{"doorbell_id": "doorbell1"}}))
		if !res.IsError || text(t, res) != "Doorbell ID not found" {
			t.Errorf("%s: result %+v", version, res)
		}
		g, err := res.RetryGuidance()
		if err != nil || g == nil || *g != want {
			t.Errorf("%s: guidance %+v, %v; want %+v", version, g, err, want)
		}
		ok := callResult(t, p.call("tools/call", map[string]any{"name": "ring", "arguments": map[string]any{"doorbell_id": "doorbell42"}}))
		if ok.IsError || ok.Meta[mcp.MetaRetryGuidance] != nil {
			t.Errorf("%s: success result %+v", version, ok)
		}
	}
}

func TestRetryableErrorInProcess(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "t", Version: "1"})
	addDoorbell(t, s)
	res, err := s.CallTool(context.Background(), "ring", []byte(`{"doorbell_id":"x"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, gerr := res.RetryGuidance()
	if !res.IsError || gerr != nil || g == nil || !g.CanRetry || g.RetryAfterMs != 500 {
		t.Errorf("result %+v guidance %+v %v", res, g, gerr)
	}
}

func TestRetryableErrorBasics(t *testing.T) {
	e := &server.RetryableError{Message: "m", Err: fs.ErrNotExist}
	if !errors.Is(e, fs.ErrNotExist) || e.Error() != "m" {
		t.Errorf("wrapping: %v", e)
	}
	if (&server.RetryableError{Err: fs.ErrNotExist}).Error() != fs.ErrNotExist.Error() {
		t.Error("empty message does not fall back to the cause")
	}
	res := (&server.RetryableError{Message: "m", RetryGuidance: mcp.RetryGuidance{RetryAfterMs: -1}}).ToolResult()
	if g, err := res.RetryGuidance(); err != nil || g == nil || g.RetryAfterMs != 0 {
		t.Errorf("negative delay sent: %+v %v", g, err)
	}
	var tr server.ToolResulter = e
	_ = tr
}
