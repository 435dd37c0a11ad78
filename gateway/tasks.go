package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// Tasks through the gateway: a tool whose upstream declares
// execution.taskSupport keeps it downstream, and a call that asks for a
// task (params.task in a 2025-era session, the tasks extension in
// 2026-07-28) becomes a task of the gateway's own server: stored, polled
// and cancelled there with tasks/get, tasks/result, tasks/list and
// tasks/cancel, in the caller's era. The task's work is an upstream task
// in turn (so the upstream's per-request timeout does not bound it), awaited
// by the gateway; cancelling the gateway's task cancels the upstream's.

// mayBeTask says whether a tools/call of def may run as a task, which the
// gateway's server then decides (and refuses as the protocol says).
func mayBeTask(def *mcp.Tool, req *server.Request, task json.RawMessage) bool {
	if def == nil || def.Execution == nil || req == nil {
		return false
	}
	switch def.Execution.TaskSupport {
	case mcp.TaskRequired:
		return true
	case mcp.TaskOptional:
		if req.Peer.Era == mcp.EraModern {
			return req.Peer.ClientCapabilities.HasExtension(mcp.ExtensionTasks)
		}
		return len(task) > 0 && string(task) != "null"
	}
	return false
}

// callTask does the work of one of the gateway's tasks: the upstream tool
// called as a task and awaited. What the upstream asks meanwhile goes to
// the task's caller through the task (input_required status).
func (g *Gateway) callTask(ctx context.Context, req *server.CallRequest, r route) *mcp.CallToolResult {
	start := time.Now()
	f := &forwarded{g: g, up: r.up, name: req.Name, tool: r.name}
	rl := f.startRound(ctx, req.Request, nil)
	defer f.endRound(rl)
	defer r.up.track(f)()
	ctx = context.WithValue(ctx, forwardedKey{}, f)
	args, refused := g.pin(ctx, r, req.Arguments)
	if refused != nil {
		return refused
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	var res *mcp.CallToolResult
	err := g.forward(ctx, r.up, func(ctx context.Context, c *client.Client) error {
		st, err := c.CallToolTask(ctx, r.name, args, client.WithOutputValidation(false), client.WithTimeout(r.up.timeout()),
			client.WithTaskStatus(func(t mcp.Task) {
				if t.StatusMessage != "" {
					req.SetTaskStatus(t.StatusMessage)
				}
			}))
		if errors.Is(err, client.ErrTasksUnsupported) {
			// The upstream lists the tool as task-capable but its session
			// does not take tasks: a plain call does the work.
			raw, err := c.CallToolRaw(ctx, r.name, args, client.WithTimeout(r.up.timeout()))
			if err != nil {
				return err
			}
			res = new(mcp.CallToolResult)
			return res.UnmarshalJSON(raw)
		}
		if err != nil {
			return err
		}
		res, err = st.Wait(ctx, client.WithOutputValidation(false))
		if err != nil && st.Task != nil && ctx.Err() != nil {
			// The gateway's task was cancelled or expired: so is the upstream's.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.up.timeout())
			if cerr := c.CancelTask(cctx, st.Task.TaskID); cerr != nil {
				r.up.log.Debug("cannot cancel the upstream task", "task", st.Task.TaskID, "error", cerr)
			}
			cancel()
		}
		return err
	})
	var te *client.ToolError
	if errors.As(err, &te) && res != nil {
		err = nil // an isError result is the tool's answer
	}
	outcome := outcomeOK
	switch {
	case err != nil:
		outcome = outcomeOf(ctx, err)
	case res.IsError:
		outcome = outcomeToolError
	}
	g.observe(ctx, r.up, mcp.MethodCallTool, req.Name, outcome, start)
	if err != nil {
		return toolFailure(r.up, r.name, err)
	}
	return res
}
