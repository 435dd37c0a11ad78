package testtools_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/internal/testtools"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The task tools are registered under their names, and "slow" answers once
// released.
func TestAddTaskTools(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "t", Version: "1"})
	release := make(chan struct{})
	close(release)
	testtools.AddTaskTools(t, s, release)
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"ask", "must", "slow"}) {
		t.Fatalf("tools %v, want ask, must and slow", names)
	}
	res, err := s.CallTool(context.Background(), "slow", []byte(`{}`), nil)
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("slow: %+v, %v", res, err)
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "slept" {
		t.Fatalf("slow answered %+v, want the text slept", res.Content[0])
	}
}
