package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/climain"
	"github.com/toolwire/toolwire/bench/internal/procs"
)

// c1 is the client workload: the caller varies, the server is fixed (a
// fresh floor process, the fastest server, in a 2025-11-25 session). The
// client runs in its own process (cmd/cli-*, internal/climain), one
// connected client shared by its callers, and reports sequential p50/p99,
// allocations, bytes and CPU time per call measured in its own process, and
// calls/s at 1, 8 and 64 callers. It checks every reply's echoed text.
func (c *config) c1(ctx context.Context, client string, rep int) (sample, error) {
	return c.withServer(ctx, impls.Floor, "C1", rep, func(p *proc) (sample, error) {
		args := append([]string{
			"-url", p.url,
			"-callers", "1,8,64",
			"-latency-calls", strconv.Itoa(c.latencyCalls),
			"-alloc-calls", strconv.Itoa(c.allocCalls),
			"-dur", c.dur.String(),
			"-warmup", c.warmup.String(),
		}, c.profileArgs(client, "C1", rep)...)
		// the client's own limits are far shorter; this only ends a hang
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, c.bins["cli-"+client], args...)
		stderr := &procs.LogBuffer{}
		cmd.Stderr = stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("client %s: %v; stderr: %s", client, err, stderr)
		}
		var figs climain.Figures
		if err := json.Unmarshal(out, &figs); err != nil {
			return nil, fmt.Errorf("client %s printed %.200q: %v", client, out, err)
		}
		checked.Add(int64(figs["checked"]))
		delete(figs, "checked")
		return sample(figs), nil
	})
}
