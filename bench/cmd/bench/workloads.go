package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/bench/impls"
	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/tools"
)

// config holds the sizes and durations of one run.
type config struct {
	reps         int
	dur          time.Duration // measured time per throughput figure
	warmup       time.Duration
	latencyCalls int
	allocCalls   int // C1 sequential calls whose cost is counted
	sessions     int
	benchtime    string
	profileDir   string
	bins         map[string]string // binary name (srv-floor, cli-bare, ...) -> path
	testBin      string            // the compiled inproc test binary
}

// sample is the figures one workload produced for one server in one rep.
type sample map[string]float64

// counter tallies checked calls across a run, for the quick mode's verdict.
var checked atomic.Int64

// profileArgs adds profiling flags for toolwire's server or client, and
// for the floor server (what toolwire's profile is read against), when
// asked.
func (c *config) profileArgs(subject, w string, rep int) []string {
	if c.profileDir == "" || subject != impls.Toolwire && subject != impls.Floor {
		return nil
	}
	pre := filepath.Join(c.profileDir, fmt.Sprintf("%s-%s-rep%d", w, subject, rep))
	return []string{"-cpuprofile", pre + "-cpu.pprof", "-memprofile", pre + "-allocs.pprof"}
}

// serverArgs are a server's flags for a workload: the 2026-07-28 workloads
// need go-sdk's stateless handler (see gosdk.StatelessHandler).
func (c *config) serverArgs(impl, w string, rep int) []string {
	args := c.profileArgs(impl, w, rep)
	if impl == impls.GoSDK && modernWorkload(w) {
		args = append(args, "-stateless")
	}
	return args
}

// modernWorkload tells the workloads of stateless 2026-07-28 calls.
func modernWorkload(w string) bool { return w == "W7" || w == "W8" }

// withServer starts a fresh HTTP server, runs f, and stops the server.
func (c *config) withServer(ctx context.Context, impl, w string, rep int, f func(p *proc) (sample, error)) (sample, error) {
	p, err := startHTTP(impl, c.bins["srv-"+impl], c.serverArgs(impl, w, rep)...)
	if err != nil {
		return nil, err
	}
	s, err := f(p)
	p.closeClients() // so the server's shutdown finds no connection open
	if serr := p.stop(); err == nil {
		err = serr
	}
	return s, err
}

// openSessions opens n sessions on one shared keep-alive client; modern
// ones are stateless 2026-07-28 callers, which open nothing on the server.
func openSessions(ctx context.Context, p *proc, n int, modern bool) ([]*load.Session, error) {
	hc := p.client(n)
	ss := make([]*load.Session, n)
	for i := range ss {
		if modern {
			ss[i] = load.NewStateless(hc, p.url)
			continue
		}
		s, err := load.Open(ctx, hc, p.url)
		if err != nil {
			return nil, err
		}
		ss[i] = s
	}
	return ss, nil
}

// callFunc makes the i-th call of one caller, checking its reply.
type callFunc func(ctx context.Context, s *load.Session, i int) error

func echoCall(tag string) callFunc {
	return func(ctx context.Context, s *load.Session, i int) error {
		msg := tag + strconv.Itoa(i)
		return s.Call(ctx, tools.Echo, load.EchoArgs(msg), load.CheckEcho(msg))
	}
}

func addCall(ctx context.Context, s *load.Session, i int) error {
	a, b := float64(i), 0.25
	return s.Call(ctx, tools.Add, load.AddArgs(a, b), load.CheckAdd(a, b))
}

func bigCall(ctx context.Context, s *load.Session, i int) error {
	return s.Call(ctx, tools.Big, []byte(`{}`), load.CheckBig)
}

// throughput runs callers concurrent sessions for warmup+dur and returns the
// calls per second and response bytes per second over dur.
func (c *config) throughput(ctx context.Context, p *proc, callers int, modern bool, call callFunc) (calls, bytesPerSec float64, err error) {
	ss, err := openSessions(ctx, p, callers, modern)
	if err != nil {
		return 0, 0, err
	}
	cps, bps, total, err := load.Rate(callers, c.warmup, c.dur, callTimeout, func(k, i int) (int64, error) {
		s := ss[k]
		before := s.Bytes
		err := call(ctx, s, k*1_000_000+i)
		return s.Bytes - before, err
	})
	checked.Add(total)
	return cps, bps, err
}

// callTimeout is how long a throughput figure waits for a call that
// should have completed: past it the server is taken to hang.
const callTimeout = time.Minute

// w1 is echo over Streamable HTTP in 2025-11-25 sessions.
func (c *config) w1(ctx context.Context, impl string, rep int) (sample, error) {
	return c.echoHTTP(ctx, impl, "W1", rep, false)
}

// w7 is W1 in the stateless 2026-07-28 revision: every call a
// self-contained POST with _meta and the Mcp-* headers, no session, each
// result checked for resultType "complete" and the server's identity.
func (c *config) w7(ctx context.Context, impl string, rep int) (sample, error) {
	return c.echoHTTP(ctx, impl, "W7", rep, true)
}

// echoHTTP is W1 and W7: a validation probe, sequential latency, then
// calls/s at 1, 8 and 64 callers.
func (c *config) echoHTTP(ctx context.Context, impl, w string, rep int, modern bool) (sample, error) {
	return c.withServer(ctx, impl, w, rep, func(p *proc) (sample, error) {
		ss, err := openSessions(ctx, p, 1, modern)
		if err != nil {
			return nil, err
		}
		s := ss[0]
		if impl != impls.Floor {
			if err := s.CallRejected(ctx, tools.Echo, []byte(`{"message":5}`)); err != nil {
				return nil, fmt.Errorf("input validation probe: %w", err)
			}
		}
		call := echoCall("seq-")
		for i := range max(c.latencyCalls/10, 10) {
			if err := call(ctx, s, i); err != nil {
				return nil, err
			}
		}
		p50, p99, err := load.Latencies(c.latencyCalls, func(i int) error { return call(ctx, s, i) })
		if err != nil {
			return nil, err
		}
		checked.Add(int64(c.latencyCalls))
		out := sample{"p50": p50, "p99": p99}
		for _, callers := range []int{1, 8, 64} {
			cps, _, err := c.throughput(ctx, p, callers, modern, echoCall("c-"))
			if err != nil {
				return nil, fmt.Errorf("%d callers: %w", callers, err)
			}
			out["cps"+strconv.Itoa(callers)] = cps
		}
		return out, nil
	})
}

// w2 is add at 8 callers.
func (c *config) w2(ctx context.Context, impl string, rep int) (sample, error) {
	return c.withServer(ctx, impl, "W2", rep, func(p *proc) (sample, error) {
		cps, _, err := c.throughput(ctx, p, 8, false, addCall)
		return sample{"cps": cps}, err
	})
}

// w3 is big (1 MiB results) at 4 callers.
func (c *config) w3(ctx context.Context, impl string, rep int) (sample, error) {
	return c.withServer(ctx, impl, "W3", rep, func(p *proc) (sample, error) {
		cps, bps, err := c.throughput(ctx, p, 4, false, bigCall)
		return sample{"cps": cps, "mbps": bps / 1e6}, err
	})
}

// w4 is sequential echo over stdio.
func (c *config) w4(ctx context.Context, impl string, rep int) (sample, error) {
	s, err := load.StartStdio(ctx, stdioCmd(c.bins["srv-"+impl], c.serverArgs(impl, "W4", rep)...))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	i := 0
	call := func() error {
		i++
		msg := "stdio-" + strconv.Itoa(i)
		return s.Call(ctx, tools.Echo, load.EchoArgs(msg), load.CheckEcho(msg))
	}
	for end := time.Now().Add(c.warmup); time.Now().Before(end); {
		if err := call(); err != nil {
			return nil, err
		}
	}
	n, t0 := 0, time.Now()
	for time.Since(t0) < c.dur {
		if err := call(); err != nil {
			return nil, err
		}
		n++
	}
	el := time.Since(t0)
	checked.Add(int64(i))
	return sample{"cps": float64(n) / el.Seconds()}, nil
}

// w5 opens c.sessions idle legacy sessions and measures what each costs.
// One session is opened first so one-time setup is not charged to them.
func (c *config) w5(ctx context.Context, impl string, rep int) (sample, error) {
	return c.withServer(ctx, impl, "W5", rep, func(p *proc) (sample, error) {
		hc := p.client(1)
		first, err := load.Open(ctx, hc, p.url)
		if err != nil {
			return nil, err
		}
		if err := first.Call(ctx, tools.Echo, load.EchoArgs("x"), load.CheckEcho("x")); err != nil {
			return nil, err
		}
		before, err := p.stats(ctx, hc)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		for range c.sessions {
			if _, err := load.Open(ctx, hc, p.url); err != nil {
				return nil, err
			}
		}
		el := time.Since(t0)
		time.Sleep(100 * time.Millisecond) // let goroutines of finished requests exit
		after, err := p.stats(ctx, hc)
		if err != nil {
			return nil, err
		}
		// the sessions stay usable: the first still answers
		if err := first.Call(ctx, tools.Echo, load.EchoArgs("y"), load.CheckEcho("y")); err != nil {
			return nil, fmt.Errorf("after opening sessions: %w", err)
		}
		checked.Add(int64(c.sessions) + 2)
		n := float64(c.sessions)
		return sample{
			"rss":   (float64(after.RSS) - float64(before.RSS)) / n / 1024,
			"heap":  (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n / 1024,
			"gor":   float64(after.Goroutines-before.Goroutines) / n,
			"secs":  el.Seconds(),
			"total": float64(after.HeapAlloc) / (1 << 20),
		}, nil
	})
}

var benchLine = regexp.MustCompile(`^(BenchmarkToolsCall\w*)/(\S+?)(?:-\d+)?\s+(\d+)\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op`)

// w6 runs the in-process benchmark of one server (a 2025-11-25 session) in
// its own process.
func (c *config) w6(ctx context.Context, impl string, rep int) (sample, error) {
	return c.inproc(ctx, impl, "W6", "BenchmarkToolsCall", rep)
}

// w8 is W6 as a stateless 2026-07-28 call, measured the same way.
func (c *config) w8(ctx context.Context, impl string, rep int) (sample, error) {
	return c.inproc(ctx, impl, "W8", "BenchmarkToolsCall2026", rep)
}

// inproc runs the in-process benchmark bench of one server in its own
// process and reads its ns/op, B/op and allocs/op.
func (c *config) inproc(ctx context.Context, impl, w, bench string, rep int) (sample, error) {
	args := []string{"-test.run", "^$", "-test.bench", "^" + bench + "$/^" + regexp.QuoteMeta(impl) + "$",
		"-test.benchmem", "-test.benchtime", c.benchtime}
	if c.profileDir != "" && impl == impls.Toolwire {
		// Exact alloc counts need MemProfileRate 1, which would distort a CPU
		// profile: the alloc profile gets a run of its own.
		pre := filepath.Join(c.profileDir, fmt.Sprintf("%s-%s-rep%d", w, impl, rep))
		mem := append(slices.Clone(args), "-test.memprofile", pre+"-allocs.pprof", "-test.memprofilerate", "1")
		if out, err := exec.CommandContext(ctx, c.testBin, mem...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("in-process benchmark (alloc profile): %v\n%s", err, out)
		}
		args = append(args, "-test.cpuprofile", pre+"-cpu.pprof")
	}
	cmd := exec.CommandContext(ctx, c.testBin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("in-process benchmark: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil || m[1] != bench || m[2] != impl {
			continue
		}
		iters, _ := strconv.ParseFloat(m[3], 64)
		checked.Add(int64(iters))
		ns, _ := strconv.ParseFloat(m[4], 64)
		bop, _ := strconv.ParseFloat(m[5], 64)
		allocs, _ := strconv.ParseFloat(m[6], 64)
		return sample{"ns": ns, "bytes": bop, "allocs": allocs}, nil
	}
	return nil, fmt.Errorf("in-process benchmark printed no result for %s:\n%s", impl, out)
}
