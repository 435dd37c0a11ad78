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
// via-HTTP run (64 callers, -profile-callers). -base runs a second
// toolwire binary's gateway as one more target, for an A/B comparison
// under the same drift. Every process it starts is killed on exit, also
// on error or interrupt.
//
// More targets put the gateway's figures in perspective, all run by
// default. Three floors stand in for the gateway in front of the same
// server, each this program re-run in a process of its own (package
// floorproxy), with no MCP logic at all: "proxy-tcp", a TCP relay (each
// client connection paired with one to the server, bytes copied both
// ways, no HTTP parsed: the least any proxy in its own process can add);
// "proxy-h1", a bare HTTP reverse proxy that calls the server the way the
// gateway does (gateway/h1.go: the exchange on the handler's goroutine,
// no net/http.Transport): the floor of an HTTP gateway built like
// toolwire's; and "proxy-floor", the same proxy over a kept-alive
// net/http client. With -trust, "gateway-trust" is the HTTP-upstream
// gateway with an API key, a persona and a synchronous, fsynced SQLite
// audit, "gateway-trust-nofsync" the same without fsync and
// "gateway-trust-noaudit" the key and persona without audit; their
// callers send the key on every request. The gateways without trust
// settings run with the audit off (see -audit-default). -targets picks
// the targets of a shorter run.
//
// It also reports each target process's resident memory (VmRSS, split
// into its own anonymous memory and the pages of its binary it maps, and
// VmHWM): idle, after start-up and one client's initialize, tools/list and
// call, and after each 64-caller run. -base is the way to set a gateway
// built from another commit against this one in the same run (its RSS
// too); -gateway-env runs this binary's gateways with environment
// settings such as GOGC or GOMEMLIMIT. Each gateway binary runs from a
// fresh copy of its own (see startAll).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/internal/floorproxy"
	"github.com/toolwire/toolwire/bench/internal/load"
	"github.com/toolwire/toolwire/bench/internal/procs"
	"github.com/toolwire/toolwire/bench/tools"
	"github.com/toolwire/toolwire/gateway/policy"
)

var (
	warmup   = flag.Duration("warmup", time.Second, "warm-up before each measured window")
	dur      = flag.Duration("dur", 3*time.Second, "measured window per target, era and caller count")
	reps     = flag.Int("reps", 3, "repetitions")
	erasFlag = flag.String("eras", "2026-07-28,2025-11-25", "protocol eras, comma-separated")
	callersF = flag.String("callers", "1,8,64", "concurrent callers, comma-separated")
	profile  = flag.String("profile", "auto", `CPU-profile the gateway during an extra via-HTTP run (-profile-callers) with perf: "auto" (if perf is found), "off"`)
	profDur  = flag.Duration("profile-dur", 5*time.Second, "length of the profiled run")
	profN    = flag.Int("profile-callers", 64, "concurrent callers of the profiled run")
	profOut  = flag.String("profile-out", "", "directory to keep the profile's perf.data in (default: deleted with the temp dir)")
	profOf   = flag.String("profile-target", gatewayHTTP, "the gateway target to profile")
	binFlag  = flag.String("bin", "", "toolwire binary to run (default: built from the root module's work tree)")
	baseBin  = flag.String("base", "", `another toolwire binary: adds the target "gateway-http-base", its gateway with the same HTTP upstream, interleaved with the others (an A/B comparison)`)
	noStdio  = flag.Bool("no-stdio", false, "leave out the gateway-stdio target")
	baseData = flag.Bool("base-data", false, `give "gateway-http-base" a data directory of its own, so that it keeps its tasks and 2025-era sessions there as gateway-http does (by default it finds gateway-http's held and keeps them in memory)`)
	trust    = flag.Bool("trust", false, `adds the targets "gateway-trust" (the HTTP-upstream gateway with an API key, a persona and a synchronous SQLite audit with fsync), "gateway-trust-nofsync" (the same, audit without fsync) and "gateway-trust-noaudit" (the key and persona alone)`)
	trustDir = flag.String("trust-dir", "", "directory for the trust gateways' data_dir (their audit database; default: in the temp dir)")
	targetsF = flag.String("targets", "", "targets to run, comma-separated, of "+strings.Join(allTargets, ", ")+
		" (default: all but gateway-stdio with -no-stdio, gateway-http-base without -base and the trust ones without -trust); direct is always run, as the reference, and -trust adds the trust ones")
	auditDefault = flag.Bool("audit-default", false, `run the gateways without trust settings (gateway-http, gateway-stdio, gateway-http-base) with the binary's default audit; by default their configs say audit: {store: "off"} (left out for a binary that has no audit key), so that they stay what they were before the audit`)
	verbose      = flag.Bool("v", false, "log progress to stderr")
	gwEnv        = flag.String("gateway-env", "", `environment for the gateways of the binary under test (not -base's), NAME=VALUE pairs, comma-separated: e.g. "GOMEMLIMIT=16MiB" or "GOGC=50"`)
)

// Targets.
const (
	direct       = "direct"
	gatewayHTTP  = "gateway-http"
	gatewayStdio = "gateway-stdio"
	gatewayBase  = "gateway-http-base" // -base
	proxyFloor   = "proxy-floor"       // a bare reverse proxy to direct's server
	proxyTCP     = "proxy-tcp"         // a TCP relay to direct's server
	proxyH1      = "proxy-h1"          // proxy-floor with the gateway's way of calling upstream
	gatewayTrust = "gateway-trust"     // -trust
	trustNoFsync = "gateway-trust-nofsync"
	trustNoAudit = "gateway-trust-noaudit" // the API key and persona alone
	upstream     = "ref"                   // the upstream's name in the gateway configs
)

// allTargets are the targets in the order they are measured (rotated each
// repetition) and reported.
var allTargets = []string{direct, proxyTCP, proxyH1, proxyFloor, gatewayHTTP, gatewayStdio, gatewayBase, trustNoAudit, trustNoFsync, gatewayTrust}

// targets are those measured, direct first (see -targets).
var targets []string

// chooseTargets sets targets from the flags.
func chooseTargets() {
	want := map[string]bool{direct: true, proxyTCP: true, proxyH1: true, proxyFloor: true, gatewayHTTP: true, gatewayStdio: !*noStdio,
		gatewayBase: *baseBin != ""}
	if *targetsF != "" {
		want = map[string]bool{direct: true}
		for _, t := range strings.Split(*targetsF, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(allTargets, t) {
				procs.Fatalf("bad -targets: unknown target %q (want some of %s)", t, strings.Join(allTargets, ", "))
			}
			want[t] = true
		}
	}
	if *trust {
		want[gatewayTrust], want[trustNoFsync], want[trustNoAudit] = true, true, true
	}
	if want[gatewayBase] && *baseBin == "" {
		procs.Fatalf("target %s needs -base", gatewayBase)
	}
	for _, t := range allTargets {
		if want[t] {
			targets = append(targets, t)
		}
	}
}

// plainAudit turns the audit off in the configs of the gateways without
// trust settings (see -audit-default).
const plainAudit = "audit:\n  store: \"off\"\n"

// auditNotes says, for the report, how each gateway without trust
// settings ran.
var auditNotes = map[string]string{}

// benchKey is the API key the trust gateways accept, authHeader the
// header their callers send.
var (
	benchKey   string
	authHeader http.Header
)

// header is what target's callers add to every request.
func header(target string) http.Header {
	if isTrust(target) {
		return authHeader
	}
	return nil
}

func isTrust(target string) bool {
	return target == gatewayTrust || target == trustNoFsync || target == trustNoAudit
}

// trustConfig is target's gateway config with the HTTP upstream url and
// the trust settings: one API key, a persona for it allowed every tool,
// and a synchronous SQLite audit in dataDir (with fsync for gateway-trust,
// without for gateway-trust-nofsync, none for gateway-trust-noaudit).
func trustConfig(target, url, dataDir string) string {
	audit := "audit:\n  store: sqlite\n  delivery: sync\n  fsync: " + strconv.FormatBool(target == gatewayTrust) + "\n"
	if target == trustNoAudit {
		audit = plainAudit
	}
	return "data_dir: " + strconv.Quote(dataDir) + "\n" +
		"upstreams:\n  " + upstream + ":\n    url: " + url + "\n" +
		"auth:\n  api_keys:\n    bench: " + strconv.Quote(policy.HashKey(benchKey)) + "\n" +
		"personas:\n  bench:\n    identities: [bench]\n    tools: {allow: [\"*\"]}\n" +
		audit
}

func logf(f string, a ...any) {
	if *verbose {
		fmt.Fprintf(os.Stderr, f+"\n", a...)
	}
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
	floorReady   = regexp.MustCompile(`floorproxy serving url=(\S+)`)
	relayReady   = regexp.MustCompile(`tcprelay serving url=(\S+)`)
)

// relayMain is the proxy-tcp process: this program re-run as
// "gatewaybench tcprelay -upstream URL"; its URL is upstream's with the
// relay's address.
func relayMain(args []string) {
	fs := flag.NewFlagSet("tcprelay", flag.ExitOnError)
	up := fs.String("upstream", "", "URL of the server to relay to")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	_ = fs.Parse(args)
	u, err := url.Parse(*up)
	if err != nil || u.Host == "" {
		fmt.Fprintf(os.Stderr, "tcprelay: bad -upstream %q\n", *up)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tcprelay: %v\n", err)
		os.Exit(1)
	}
	mine := *u
	mine.Host = ln.Addr().String()
	fmt.Fprintf(os.Stderr, "tcprelay serving url=%s upstream=%s\n", mine.String(), u.Host)
	// Relay returns only once accepting fails, with that error.
	fmt.Fprintf(os.Stderr, "tcprelay: %v\n", floorproxy.Relay(ln, u.Host))
	os.Exit(1)
}

// floorMain is the proxy-floor process: this program re-run as
// "gatewaybench floorproxy -upstream URL".
func floorMain(args []string) {
	fs := flag.NewFlagSet("floorproxy", flag.ExitOnError)
	up := fs.String("upstream", "", "URL to forward every request to")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	conns := fs.Int("conns", 512, "idle connections kept to the upstream")
	client := fs.String("client", "net/http", `how to call the upstream: "net/http" (an http.Client) or "h1" (on the handler's goroutine, as the gateway does)`)
	_ = fs.Parse(args)
	if *up == "" {
		fmt.Fprintln(os.Stderr, "floorproxy: -upstream is required")
		os.Exit(2)
	}
	var h http.Handler = floorproxy.New(*up, *conns)
	if *client == "h1" {
		h1, err := floorproxy.NewH1(*up, *conns)
		if err != nil {
			fmt.Fprintf(os.Stderr, "floorproxy: %v\n", err)
			os.Exit(2)
		}
		h = h1
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "floorproxy: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "floorproxy serving url=http://%s/mcp upstream=%s\n", ln.Addr(), *up)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintf(os.Stderr, "floorproxy: %v\n", err)
		os.Exit(1)
	}
}

func startAll(bin, dir string) (map[string]*procs.Proc, error) {
	srv, err := procs.Start(procs.Cmd{
		Name:  direct,
		Bin:   bin,
		Args:  []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", ""},
		Ready: map[string]*regexp.Regexp{"url": serveReady},
	})
	if err != nil {
		return nil, err
	}
	cfgHTTP := "upstreams:\n  " + upstream + ":\n    url: " + srv.Found["url"] + "\n"
	cfgStdio := "upstreams:\n  " + upstream + ":\n    command: [" + strconv.Quote(bin) + ", serve, --stdio, --data-dir, '']\n"
	gwArgs := []string{"--listen", "127.0.0.1:0", "--admin-listen", "off"}
	// Each gateway binary runs from a fresh copy of its own, so that the
	// pages of it the process maps (its file-backed resident memory) do
	// not depend on what other processes of the same file touched or on
	// how much of an older file the page cache still holds.
	gwBin, err := copyBinary(bin, filepath.Join(dir, "toolwire-gateway"))
	if err != nil {
		return nil, err
	}
	var baseCopy string
	if *baseBin != "" {
		if baseCopy, err = copyBinary(*baseBin, filepath.Join(dir, "toolwire-base")); err != nil {
			return nil, err
		}
	}
	ps := map[string]*procs.Proc{direct: srv}
	for _, t := range targets[1:] {
		b, cfg, plain := gwBin, cfgHTTP, true
		switch t {
		case proxyFloor, proxyTCP, proxyH1:
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			args, ready := []string{"floorproxy", "-upstream", srv.Found["url"]}, floorReady
			switch t {
			case proxyTCP:
				args, ready = []string{"tcprelay", "-upstream", srv.Found["url"]}, relayReady
			case proxyH1:
				args = append(args, "-client", "h1")
			}
			p, err := procs.Start(procs.Cmd{
				Name:  t,
				Bin:   self,
				Args:  args,
				Ready: map[string]*regexp.Regexp{"url": ready},
			})
			if err != nil {
				return nil, err
			}
			ps[t] = p
			continue
		case gatewayStdio:
			cfg = cfgStdio
		case gatewayBase:
			b = baseCopy
			if *baseData {
				cfg = "data_dir: " + strconv.Quote(filepath.Join(dir, "base-data")) + "\n" + cfgHTTP
			}
		case gatewayTrust, trustNoFsync, trustNoAudit:
			base := *trustDir
			if base == "" {
				base = dir
			}
			data := filepath.Join(base, t)
			if err := os.MkdirAll(data, 0o700); err != nil {
				return nil, err
			}
			cfg, plain = trustConfig(t, srv.Found["url"], data), false
		}
		file := filepath.Join(dir, t+".yaml")
		start := func(cfg string) (*procs.Proc, error) {
			if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
				return nil, err
			}
			var env []string
			if usesGatewayEnv(t) {
				env = gatewayEnv
			}
			return procs.Start(procs.Cmd{
				Name:  t,
				Bin:   b,
				Args:  append([]string{"gateway", "--config", file}, gwArgs...),
				Env:   env,
				Ready: map[string]*regexp.Regexp{"url": gatewayReady},
			})
		}
		var g *procs.Proc
		var err error
		switch {
		case plain && !*auditDefault:
			// The gateway without trust settings audits nothing, as before
			// there was an audit; a binary that predates the audit key
			// refuses it, and then runs without.
			g, err = start(cfg + plainAudit)
			if err != nil && strings.Contains(err.Error(), `unknown key "audit"`) {
				g, err = start(cfg)
				auditNotes[t] = "no audit (the binary has none)"
			} else {
				auditNotes[t] = "audit off (store: off)"
			}
		case plain:
			g, err = start(cfg)
			auditNotes[t] = "the binary's default audit"
		default:
			g, err = start(cfg)
		}
		if err != nil {
			return nil, err
		}
		if !strings.Contains(g.Log(), upstream+"=ready") {
			return nil, fmt.Errorf("%s: upstream %s not ready:\n%s", g.Name, upstream, g.Log())
		}
		ps[t] = g
	}
	return ps, nil
}

func toolName(target string) string {
	if target == direct || strings.HasPrefix(target, "proxy-") {
		return tools.Echo
	}
	return upstream + "__" + tools.Echo
}

// measurement is one target's figures at one era and caller count; cpu
// is the CPU time (user and system) the target's process used per call in
// the measured window, in µs: unlike calls/s it hardly depends on what
// else runs on the machine.
type measurement struct{ p50, p99, cps, cpu float64 }

// cpuTime is the CPU time process pid has used, user and system, all its
// threads (from /proc; 0 where there is none).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces): state is
	// the 3rd field of the line, utime and stime the 14th and 15th.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// run drives target's echo with callers concurrent callers for
// warmup+dur, timing every call; p50 and p99 are over the calls that
// ended in the measured window.
func run(ctx context.Context, p *procs.Proc, target string, modern bool, callers int, warm, d time.Duration) (measurement, error) {
	hc := load.NewHTTPClient(callers)
	defer hc.CloseIdleConnections()
	ss := make([]*load.Session, callers)
	hdr := header(target)
	for i := range ss {
		if modern {
			ss[i] = load.NewStateless(hc, p.Found["url"])
			ss[i].Header = hdr
			continue
		}
		s, err := load.OpenWithHeader(ctx, hc, p.Found["url"], hdr)
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
	cpuc := make(chan time.Duration, 1)
	go func() {
		pid := p.PID()
		time.Sleep(warm)
		c0 := cpuTime(pid)
		time.Sleep(d)
		cpuc <- cpuTime(pid) - c0
	}()
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
	cpu := float64((<-cpuc).Microseconds()) / float64(len(lat))
	slices.Sort(lat)
	us := func(q int) float64 {
		return float64(lat[min(len(lat)-1, len(lat)*q/100)].Nanoseconds()) / 1e3
	}
	return measurement{p50: us(50), p99: us(99), cps: cps, cpu: cpu}, nil
}

type key struct {
	era     string
	callers int
	target  string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floorproxy" {
		floorMain(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "tcprelay" {
		relayMain(os.Args[2:])
		return
	}
	flag.Parse()
	procs.Verbose = *verbose
	eras := strings.Split(*erasFlag, ",")
	var callerCounts []int
	for _, s := range strings.Split(*callersF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			procs.Fatalf("bad -callers %q", *callersF)
		}
		callerCounts = append(callerCounts, n)
	}
	for _, e := range eras {
		if e != load.ModernVersion && e != load.ProtocolVersion {
			procs.Fatalf("bad era %q: want %s or %s", e, load.ModernVersion, load.ProtocolVersion)
		}
	}
	dir, err := procs.Init("gatewaybench")
	if err != nil {
		procs.Fatalf("%v", err)
	}
	procs.ExitOnSignal()
	defer procs.Cleanup()

	chooseTargets()
	gatewayEnv = parseEnv(*gwEnv)
	if slices.ContainsFunc(targets, isTrust) {
		if benchKey, err = policy.NewKey(); err != nil {
			procs.Fatalf("%v", err)
		}
		authHeader = http.Header{"Authorization": {"Bearer " + benchKey}}
	}
	began := time.Now()
	bin, err := procs.Binary(*binFlag, dir)
	if err != nil {
		procs.Fatalf("%v", err)
	}
	ps, err := startAll(bin, dir)
	if err != nil {
		procs.Fatalf("%v", err)
	}
	noteState(ps)
	ctx := context.Background()

	// Each target's idle memory, after one client looked around.
	for _, t := range targets {
		if err := touch(ctx, ps[t].Found["url"], t); err != nil {
			procs.Fatalf("touch %s: %v\n%s", t, err, ps[t].Log())
		}
		mem.idle[t] = memoryOf(ps[t].PID())
	}

	// A probe of every target in every era, so a misconfiguration fails
	// before the run.
	for _, era := range eras {
		for _, t := range targets {
			if _, err := run(ctx, ps[t], t, era == load.ModernVersion, 1, 0, 200*time.Millisecond); err != nil {
				procs.Fatalf("probe %s %s: %v\n%s", t, era, err, ps[t].Log())
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
						procs.Fatalf("rep %d, %s, %s, %d callers: %v\n%s", rep+1, t, era, n, err, ps[t].Log())
					}
					logf("rep %d %s %d %s: p50 %.0f µs p99 %.0f µs %.0f calls/s %.0f CPU µs/call", rep+1, era, n, t, m.p50, m.p99, m.cps, m.cpu)
					k := key{era, n, t}
					res[k] = append(res[k], m)
					if n == memCallers {
						mm := memoryOf(ps[t].PID())
						mem.after[t] = append(mem.after[t], mm)
						logf("rep %d %s %d %s: RSS %.1f MiB (anon %.1f, file %.1f)", rep+1, era, n, t, mib(mm.rss), mib(mm.anon), mib(mm.file))
					}
				}
			}
		}
	}
	elapsed := time.Since(began)
	for _, t := range targets {
		mem.end[t] = memoryOf(ps[t].PID())
	}

	prof := ""
	if *profile != "off" && ps[*profOf] != nil {
		prof = profileGateway(ctx, ps[*profOf], *profOf, eras[0], dir)
	}

	report(os.Stdout, eras, callerCounts, res, elapsed)
	memoryTable(os.Stdout)
	if prof != "" {
		fmt.Printf("\n### CPU profile of %s (%s, %d callers, %s, perf record -g)\n\n```\n%s```\n", *profOf, eras[0], *profN, *profDur, prof)
	}
}

// rotate starts the order at a different target each repetition.
func rotate(names []string, rep int) []string {
	i := rep % len(names)
	return append(slices.Clone(names[i:]), names[:i]...)
}

// profileGateway runs perf record on the gateway during an extra,
// unrecorded run of -profile-callers callers and returns the top of its
// report.
func profileGateway(ctx context.Context, g *procs.Proc, target, era, dir string) string {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return fmt.Sprintf("not profiled: %v\n", err)
	}
	if *profOut != "" {
		dir = *profOut
	}
	data := filepath.Join(dir, fmt.Sprintf("perf-gateway-%d.data", *profN))
	secs := *profDur + *warmup
	rec := exec.Command(perf, "record", "-F", "999", "-g", "-o", data, "-p", strconv.Itoa(g.PID()), "--", "sleep", strconv.FormatFloat(profDur.Seconds(), 'f', 1, 64))
	rec.Stdout, rec.Stderr = io.Discard, io.Discard
	errc := make(chan error, 1)
	go func() {
		time.Sleep(*warmup)
		errc <- rec.Run()
	}()
	if _, err := run(ctx, g, target, era == load.ModernVersion, *profN, secs, 500*time.Millisecond); err != nil {
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
