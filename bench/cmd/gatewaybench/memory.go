package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/bench/internal/stat"
)

// memory is what the kernel says a process holds: VmRSS, its resident
// set now, of which RssAnon its own memory (heap, stacks, the runtime's)
// and RssFile the pages of its binary and libraries it has mapped, and
// VmHWM, the most it ever held (from /proc/PID/status, in bytes).
type memory struct{ rss, anon, file, hwm int64 }

// memoryOf reads process pid's resident set; zero where /proc has none.
func memoryOf(pid int) memory {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memory{}
	}
	var m memory
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, f := range []struct {
			name string
			to   *int64
		}{{"VmRSS:", &m.rss}, {"RssAnon:", &m.anon}, {"RssFile:", &m.file}, {"VmHWM:", &m.hwm}} {
			if v, ok := strings.CutPrefix(line, f.name); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				*f.to = kb << 10
			}
		}
	}
	return m
}

// memRecord is the resident memory of each target's process: idle
// after start-up and one handshake, tools/list and call, and after each
// run at memCallers callers (one per era and repetition).
type memRecord struct {
	idle  map[string]memory
	after map[string][]memory
	end   map[string]memory // at the end of the run, before the profile
}

// memCallers is the caller count after whose runs the resident memory is
// read.
const memCallers = 64

var mem = memRecord{idle: map[string]memory{}, after: map[string][]memory{}, end: map[string]memory{}}

// touch is what a target sees before its idle memory is read: a
// 2025-11-25 session's initialize, tools/list and one echo call, as a
// client that connects once and looks around would send.
func touch(ctx context.Context, url, target string) error {
	hc := load.NewHTTPClient(1)
	defer hc.CloseIdleConnections()
	s, err := load.OpenWithHeader(ctx, hc, url, header(target))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", load.ProtocolVersion)
	if s.ID != "" {
		req.Header.Set("Mcp-Session-Id", s.ID)
	}
	for k, v := range header(target) {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), tools0(target)) {
		return fmt.Errorf("tools/list: HTTP %d, %v: %.200q", resp.StatusCode, err, b)
	}
	m := "hello, idle"
	return s.Call(ctx, toolName(target), load.EchoArgs(m), load.CheckEcho("Echo: "+m))
}

// tools0 is the name tools/list must show on target.
func tools0(target string) string { return strconv.Quote(toolName(target)) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// memoryTable writes the resident memory of each target's process.
func memoryTable(w io.Writer) {
	if len(mem.idle) == 0 {
		return
	}
	fmt.Fprintf(w, "\nResident memory of each target's own process (VmRSS and VmHWM from /proc/PID/status, MiB): idle is after start-up and one session's initialize, tools/list and echo call, before any load; after %d callers is read right after each %d-caller run (one per era and repetition), median (min–max); the peak (VmHWM) is at the end of the run.%s%s\n\n", memCallers, memCallers, envNote(), stateNote())
	fmt.Fprintf(w, "| target | idle RSS MiB | idle anon / file MiB | RSS after %d callers MiB | after: anon / file MiB | peak at the end MiB |\n|---|---:|---:|---:|---:|---:|\n", memCallers)
	for _, t := range targets {
		id, ok := mem.idle[t]
		if !ok {
			continue
		}
		var after, anon, file []float64
		for _, m := range mem.after[t] {
			after = append(after, mib(m.rss))
			anon = append(anon, mib(m.anon))
			file = append(file, mib(m.file))
		}
		a, af := "–", "–"
		if len(after) > 0 {
			a, af = stat.Cell(after), stat.Num(stat.Median(anon))+" / "+stat.Num(stat.Median(file))
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f / %.1f | %s | %s | %.1f |\n", t, mib(id.rss), mib(id.anon), mib(id.file), a, af, mib(mem.end[t].hwm))
	}
}

// stateNotes says, for the report, where each gateway keeps its tasks and
// 2025-era sessions: the gateways without a data_dir of their own start in
// this program's directory with the default one, which one process at a
// time holds; the others keep them in memory. The two cost
// different memory, so the memory table says which is which.
var stateNotes = map[string]string{}

// heldDataDir is what a gateway logs when another process holds its data
// directory (internal/datadir).
const heldDataDir = "the data directory is in use by another toolwire process"

// noteState fills stateNotes from each gateway's start-up log.
func noteState(ps map[string]*procs.Proc) {
	for _, t := range targets {
		if !strings.HasPrefix(t, "gateway-") || ps[t] == nil {
			continue
		}
		if strings.Contains(ps[t].Log(), heldDataDir) {
			stateNotes[t] = "in memory (its data directory was held by another gateway)"
		} else {
			stateNotes[t] = "in its data directory"
		}
	}
}

// stateNote is the memory table's sentence on stateNotes.
func stateNote() string {
	var ns []string
	for _, t := range targets {
		if n, ok := stateNotes[t]; ok {
			ns = append(ns, t+" "+n)
		}
	}
	if len(ns) == 0 {
		return ""
	}
	return " Tasks and 2025-era sessions: " + strings.Join(ns, "; ") + "."
}

// envNote says which environment the gateways ran with (-gateway-env).
func envNote() string {
	if len(gatewayEnv) == 0 {
		return ""
	}
	var ts []string
	for _, t := range targets {
		if usesGatewayEnv(t) {
			ts = append(ts, t)
		}
	}
	return fmt.Sprintf(" %s ran with %s in the environment.", strings.Join(ts, ", "), strings.Join(gatewayEnv, " "))
}

// gatewayEnv is -gateway-env split into its variables.
var gatewayEnv []string

// usesGatewayEnv says whether -gateway-env applies to target: every
// gateway of the binary under test, not -base's (which runs as it is)
// nor the floors.
func usesGatewayEnv(target string) bool {
	return strings.HasPrefix(target, "gateway-") && target != gatewayBase
}

// parseEnv checks -gateway-env: NAME=VALUE pairs, comma-separated.
func parseEnv(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" || slices.Contains([]byte(name), ' ') {
			procs.Fatalf("bad -gateway-env %q: want NAME=VALUE pairs, comma-separated", s)
		}
		out = append(out, kv)
	}
	return out
}

// copyBinary copies the executable from to to, out of the page cache
// (see evict): every gateway starts the same way, as from a binary not
// run before, whichever of the files other processes ran or the cache
// kept.
func copyBinary(from, to string) (string, error) {
	b, err := os.ReadFile(from)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return "", err
	}
	return to, evict(f)
}
