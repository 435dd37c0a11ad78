package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// ResearchInput is the input of simulate-research-query.
type ResearchInput struct {
	Topic     string `json:"topic" jsonschema:"The research topic to investigate"`
	Ambiguous bool   `json:"ambiguous,omitempty" jsonschema:"Simulate an ambiguous query that needs the user's clarification (elicitation)"`
}

var researchStages = []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"}

// defaultStage is how long each research stage takes.
const defaultStage = 200 * time.Millisecond

// interpretations offers readings of an ambiguous topic, as titled enum
// values (SEP-1330).
func interpretations(topic string) json.RawMessage {
	type opt struct {
		Const string `json:"const"`
		Title string `json:"title"`
	}
	opts := []opt{
		{"technical", "Technical: how " + topic + " works"},
		{"historical", "Historical: how " + topic + " came about"},
		{"practical", "Practical: how to use " + topic},
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"interpretation"},
		"properties": map[string]any{"interpretation": map[string]any{"type": "string", "title": "Clarification",
			"description": "Which interpretation of the topic do you mean?", "oneOf": opts}}})
	return b
}

// addResearch adds simulate-research-query: a multi-stage job that reports
// progress and, for an ambiguous topic, first asks the user which reading
// they mean (elicitation: a server-to-client request in a 2025-era session,
// an input_required round in 2026-07-28). A client without elicitation gets
// the default reading. It may run as a task (execution.taskSupport
// optional): each stage's progress is then the task's status message, and
// the elicitation round goes through the task (in 2026-07-28 tasks/get
// lists it as an input request, answered with tasks/update; in a 2025-era
// session it is an elicitation/create request tied to the task).
func (c *config) addResearch(s *server.Server) error {
	stage := time.Duration(c.stage)
	if stage <= 0 {
		stage = defaultStage
	}
	return server.AddTool(s, &mcp.Tool{
		Name: "simulate-research-query", Title: "Simulate Research Query",
		Description: "Simulates a research job in four stages with progress; an ambiguous topic first asks the user to clarify it",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
	}, func(ctx context.Context, req *server.CallRequest, in ResearchInput) (string, error) {
		topic := strings.TrimSpace(in.Topic)
		if topic == "" {
			return "", errors.New("topic must not be empty")
		}
		clarification := ""
		if in.Ambiguous {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{
				Message:         fmt.Sprintf("The research query %q could have several interpretations. Which do you mean?", topic),
				RequestedSchema: interpretations(topic),
			}, server.InputKey("clarification"))
			var missing *server.MissingCapabilityError
			switch {
			case errors.As(err, &missing):
				clarification = "technical (default: the client cannot be asked)"
			case err != nil:
				return "", err
			case res.Action == mcp.ActionAccept:
				clarification, _ = res.Content["interpretation"].(string)
			case res.Action == mcp.ActionDecline:
				clarification = "technical (default: the user declined)"
			default:
				clarification = "technical (default: the user cancelled)"
			}
		}
		t := time.NewTimer(stage)
		defer t.Stop()
		for i, name := range researchStages {
			if err := req.Progress(ctx, float64(i), float64(len(researchStages)), name+"..."); err != nil {
				return "", err
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-t.C:
				t.Reset(stage)
			}
		}
		// A task's last status message says it is done (a plain call sends
		// no further progress, as before).
		req.SetTaskStatus("Research complete")
		var b strings.Builder
		fmt.Fprintf(&b, "# Research report: %s\n\n", topic)
		if clarification != "" {
			fmt.Fprintf(&b, "Interpretation: %s\n\n", clarification)
		}
		for i, name := range researchStages {
			fmt.Fprintf(&b, "- Stage %d: %s: done\n", i+1, name)
		}
		return b.String(), nil
	}, server.WithTaskSupport(mcp.TaskOptional))
}
