// Command gatewaybench measures what `toolwire gateway` costs: the echo tool
// called directly on `toolwire serve`, through a gateway whose upstream is
// that same server over Streamable HTTP, and through a gateway whose
// upstream is `toolwire serve --stdio`, in one interleaved run (each
// repetition alternates the three targets so drift hits all equally).
//
//	cd bench && go run ./cmd/gatewaybench
//
// It prints a markdown table of p50, p99 latency and calls/s at 1, 8 and 64
// concurrent callers (median and min–max over the repetitions) and the
// derived figures against the gateway targets. With -profile it takes a
// CPU profile of the gateway (perf record) during one extra, unrecorded
// 64-caller via-HTTP run. Every process it starts is killed on exit, also
// on error or interrupt.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/tools"
)

var (
	warmup   = flag.Duration("warmup", time.Second, "warm-up before each measured window")
	dur      = flag.Duration("dur", 3*time.Second, "measured window per target, era and caller count")
	reps     = flag.Int("reps", 3, "repetitions")
	erasFlag = flag.String("eras", "2026-07-28,2025-11-25", "protocol eras, comma-separated")
	callersF = flag.String("callers", "1,8,64", "concurrent callers, comma-separated")
	profile  = flag.String("profile", "auto", `CPU-profile the gateway during an extra 64-caller via-HTTP run with perf: "auto" (if perf is found), "off"`)
	profDur  = flag.Duration("profile-dur", 5*time.Second, "length of the profiled run")
	verbose  = flag.Bool("v", false, "log progress to stderr")
)

// Targets.
const (
	direct       = "direct"
	gatewayHTTP  = "gateway-http"
	gatewayStdio = "gateway-stdio"
	upstream     = "ref" // the upstream's name in both gateway configs
)

var targets = []string{direct, gatewayHTTP, gatewayStdio}

// procs are the processes started, killed by PID at exit.
var (
	procsMu sync.Mutex
	procs   []*proc
	tmpDir  string
)

type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
	log  *logBuf
	done chan struct{}
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.WriteString(s + "\n")
	}
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs bin with args in its own process group and waits for a line
// of its log (stderr) matching ready, whose first group is the URL served.
func start(name, bin string, ready *regexp.Regexp, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+tmpDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, log: &logBuf{}, done: make(chan struct{})}
	procsMu.Lock()
	if err := cmd.Start(); err != nil {
		procsMu.Unlock()
		return nil, err
	}
	procs = append(procs, p)
	procsMu.Unlock()
	urls := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.log.add(line)
			if *verbose {
				fmt.Fprintf(os.Stderr, "[%s] %s\n", name, line)
			}
			if m := ready.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case p.url = <-urls:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before serving:\n%s", name, p.log)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s not serving after 30s:\n%s", name, p.log)
	}
}

// cleanup stops every process started: SIGTERM to its PID (the gateway then
// closes its stdio child), then SIGKILL to its process group (the PID
// itself and any child it left) after a grace period. It removes tmpDir.
var cleanupOnce sync.Once

func cleanup() {
	cleanupOnce.Do(func() {
		procsMu.Lock()
		ps := slices.Clone(procs)
		procsMu.Unlock()
		slices.Reverse(ps) // gateways before the server they call
		for _, p := range ps {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
			}
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		if tmpDir != "" {
			_ = os.RemoveAll(tmpDir)
		}
	})
}

func fatalf(f string, a ...any) {
	cleanup()
	fmt.Fprintf(os.Stderr, "gatewaybench: "+f+"\n", a...)
	os.Exit(1)
}

func logf(f string, a ...any) {
	if *verbose {
		fmt.Fprintf(os.Stderr, f+"\n", a...)
	}
}

// build compiles toolwire from the root module into tmpDir.
func build() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/toolwire/toolwire").Output()
	if err != nil {
		return "", fmt.Errorf("locating the root module: %v", err)
	}
	root := strings.TrimSpace(string(out))
	bin := filepath.Join(tmpDir, "toolwire")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/toolwire")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/toolwire: %v\n%s", err, out)
	}
	return bin, nil
}

func headShort() string {
	out, err := exec.Command("git", "-C", "..", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	h := strings.TrimSpace(string(out))
	// The binary is built from the work tree: say so when it differs.
	if d, err := exec.Command("git", "-C", "..", "diff", "--name-only", "HEAD").Output(); err == nil && len(strings.TrimSpace(string(d))) > 0 {
		h += " plus uncommitted changes to " + strings.Join(strings.Fields(string(d)), ", ")
	}
	return h
}

var (
	serveReady   = regexp.MustCompile(`msg="serving reference tools over Streamable HTTP" url=(\S+)`)
	gatewayReady = regexp.MustCompile(`msg="gateway serving" url=(\S+)`)
)

func startAll(bin string) (map[string]*proc, error) {
	srv, err := start(direct, bin, serveReady, "serve", "--addr", "127.0.0.1:0", "--data-dir", "")
	if err != nil {
		return nil, err
	}
	cfgHTTP := filepath.Join(tmpDir, "gateway-http.yaml")
	cfgStdio := filepath.Join(tmpDir, "gateway-stdio.yaml")
	if err := os.WriteFile(cfgHTTP, []byte("upstreams:\n  "+upstream+":\n    url: "+srv.url+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgStdio, []byte("upstreams:\n  "+upstream+":\n    command: ["+strconv.Quote(bin)+", serve, --stdio, --data-dir, '']\n"), 0o600); err != nil {
		return nil, err
	}
	gwArgs := []string{"--listen", "127.0.0.1:0", "--admin-listen", "off"}
	gh, err := start(gatewayHTTP, bin, gatewayReady, append([]string{"gateway", "--config", cfgHTTP}, gwArgs...)...)
	if err != nil {
		return nil, err
	}
	gs, err := start(gatewayStdio, bin, gatewayReady, append([]string{"gateway", "--config", cfgStdio}, gwArgs...)...)
	if err != nil {
		return nil, err
	}
	for _, g := range []*proc{gh, gs} {
		if !strings.Contains(g.log.String(), upstream+"=ready") {
			return nil, fmt.Errorf("%s: upstream %s not ready:\n%s", g.name, upstream, g.log)
		}
	}
	return map[string]*proc{direct: srv, gatewayHTTP: gh, gatewayStdio: gs}, nil
}

func toolName(target string) string {
	if target == direct {
		return tools.Echo
	}
	return upstream + "__" + tools.Echo
}

// measurement is one target's figures at one era and caller count.
type measurement struct{ p50, p99, cps float64 }

// run drives target's echo with callers concurrent callers for
// warmup+dur, timing every call; p50 and p99 are over the calls that
// ended in the measured window.
func run(ctx context.Context, p *proc, target string, modern bool, callers int, warm, d time.Duration) (measurement, error) {
	hc := load.NewHTTPClient(callers)
	defer hc.CloseIdleConnections()
	ss := make([]*load.Session, callers)
	for i := range ss {
		if modern {
			ss[i] = load.NewStateless(hc, p.url)
			continue
		}
		s, err := load.Open(ctx, hc, p.url)
		if err != nil {
			return measurement{}, fmt.Errorf("open session: %w", err)
		}
		ss[i] = s
	}
	type rec struct {
		end time.Time
		d   time.Duration
	}
	recs := make([][]rec, callers)
	for k := range recs {
		recs[k] = make([]rec, 0, 1<<14)
	}
	tool := toolName(target)
	msg := "hello, gateway " // the reference echo answers "Echo: " + message
	t0 := time.Now()
	cps, _, _, err := load.Rate(callers, warm, d, time.Minute, func(k, i int) (int64, error) {
		m := msg + strconv.Itoa(i)
		t := time.Now()
		err := ss[k].Call(ctx, tool, load.EchoArgs(m), load.CheckEcho("Echo: "+m))
		end := time.Now()
		recs[k] = append(recs[k], rec{end, end.Sub(t)})
		return 0, err
	})
	if err != nil {
		return measurement{}, err
	}
	from, to := t0.Add(warm), t0.Add(warm+d)
	var lat []time.Duration
	for _, rs := range recs {
		for _, r := range rs {
			if !r.end.Before(from) && !r.end.After(to) {
				lat = append(lat, r.d)
			}
		}
	}
	if len(lat) == 0 {
		return measurement{}, fmt.Errorf("no call ended in the measured window")
	}
	slices.Sort(lat)
	us := func(q int) float64 {
		return float64(lat[min(len(lat)-1, len(lat)*q/100)].Nanoseconds()) / 1e3
	}
	return measurement{p50: us(50), p99: us(99), cps: cps}, nil
}

type key struct {
	era     string
	callers int
	target  string
}

func main() {
	flag.Parse()
	eras := strings.Split(*erasFlag, ",")
	var callerCounts []int
	for _, s := range strings.Split(*callersF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatalf("bad -callers %q", *callersF)
		}
		callerCounts = append(callerCounts, n)
	}
	for _, e := range eras {
		if e != load.ModernVersion && e != load.ProtocolVersion {
			fatalf("bad era %q: want %s or %s", e, load.ModernVersion, load.ProtocolVersion)
		}
	}
	var err error
	if tmpDir, err = os.MkdirTemp("", "gatewaybench-"); err != nil {
		fatalf("%v", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		cleanup()
		fmt.Fprintf(os.Stderr, "gatewaybench: %v: stopped every process started\n", s)
		os.Exit(130)
	}()
	defer cleanup()

	began := time.Now()
	bin, err := build()
	if err != nil {
		fatalf("%v", err)
	}
	ps, err := startAll(bin)
	if err != nil {
		fatalf("%v", err)
	}
	ctx := context.Background()

	// A probe of every target in every era, so a misconfiguration fails
	// before the run.
	for _, era := range eras {
		for _, t := range targets {
			if _, err := run(ctx, ps[t], t, era == load.ModernVersion, 1, 0, 200*time.Millisecond); err != nil {
				fatalf("probe %s %s: %v\n%s", t, era, err, ps[t].log)
			}
		}
	}

	res := map[key][]measurement{}
	for rep := range *reps {
		order := rotate(targets, rep)
		for _, era := range eras {
			for _, n := range callerCounts {
				for _, t := range order {
					m, err := run(ctx, ps[t], t, era == load.ModernVersion, n, *warmup, *dur)
					if err != nil {
						fatalf("rep %d, %s, %s, %d callers: %v\n%s", rep+1, t, era, n, err, ps[t].log)
					}
					logf("rep %d %s %d %s: p50 %.0f µs p99 %.0f µs %.0f calls/s", rep+1, era, n, t, m.p50, m.p99, m.cps)
					k := key{era, n, t}
					res[k] = append(res[k], m)
				}
			}
		}
	}
	elapsed := time.Since(began)

	prof := ""
	if *profile != "off" {
		prof = profileGateway(ctx, ps[gatewayHTTP], eras[0])
	}

	report(os.Stdout, eras, callerCounts, res, elapsed)
	if prof != "" {
		fmt.Printf("\n### CPU profile of the gateway (%s, 64 callers, via HTTP upstream, %s, perf record -g)\n\n```\n%s```\n", eras[0], *profDur, prof)
	}
}

// rotate starts the order at a different target each repetition.
func rotate(names []string, rep int) []string {
	i := rep % len(names)
	return append(slices.Clone(names[i:]), names[:i]...)
}

// profileGateway runs perf record on the gateway during an extra,
// unrecorded 64-caller run and returns the top of its report.
func profileGateway(ctx context.Context, g *proc, era string) string {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return fmt.Sprintf("not profiled: %v\n", err)
	}
	data := filepath.Join(tmpDir, "perf.data")
	secs := *profDur + *warmup
	rec := exec.Command(perf, "record", "-F", "999", "-g", "-o", data, "-p", strconv.Itoa(g.cmd.Process.Pid), "--", "sleep", strconv.FormatFloat(profDur.Seconds(), 'f', 1, 64))
	rec.Stdout, rec.Stderr = io.Discard, io.Discard
	errc := make(chan error, 1)
	go func() {
		time.Sleep(*warmup)
		errc <- rec.Run()
	}()
	if _, err := run(ctx, g, gatewayHTTP, era == load.ModernVersion, 64, secs, 500*time.Millisecond); err != nil {
		return fmt.Sprintf("not profiled: the run failed: %v\n", err)
	}
	if err := <-errc; err != nil {
		return fmt.Sprintf("not profiled: perf record: %v\n", err)
	}
	var b strings.Builder
	for _, mode := range []string{"--no-children", "--children"} {
		out, err := exec.Command(perf, "report", "-i", data, "--stdio", mode, "-g", "none", "--percent-limit", "1.5", "--sort", "symbol").Output()
		if err != nil {
			return fmt.Sprintf("not profiled: perf report: %v\n", err)
		}
		fmt.Fprintf(&b, "# perf report %s\n", mode)
		for _, l := range strings.Split(string(out), "\n") {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
