package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
)

// opTimeout bounds one operation of the load.
const opTimeout = 30 * time.Second

// load is the mixed load on the gateway: callers workers, each with a
// session of its own (replaced now and then, in the other era), paced
// together to -rate operations a second.
type load struct {
	url    string
	hc     *http.Client
	tools  int           // tools the gateway listed at the start
	tokens chan struct{} // one per operation allowed (nil: no pacing)
	st     stats
}

// eras alternate between the workers and their sessions.
var eras = []mcp.Era{mcp.EraLegacy, mcp.EraModern}

func eraName(e mcp.Era) string {
	if e == mcp.EraModern {
		return "2026-07-28"
	}
	return "2025-11-25"
}

func newLoad(ctx context.Context, url string) (*load, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 4**callers, 4**callers
	l := &load{url: url, hc: &http.Client{Transport: t}}
	c, err := l.connect(ctx, mcp.EraLegacy)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	l.tools = len(tools)
	for _, up := range []string{upstreamHTTP, upstreamStdio} {
		if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == up+"__echo" }) {
			return nil, fmt.Errorf("the gateway lists no %s__echo", up)
		}
	}
	return l, nil
}

func (l *load) connect(ctx context.Context, era mcp.Era) (*client.Client, error) {
	cctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return client.Connect(cctx, &client.HTTP{URL: l.url, Client: l.hc}, client.WithEra(era))
}

// run starts the pacer and the workers; wg is done when they all stopped
// (ctx ended).
func (l *load) run(ctx context.Context, wg *sync.WaitGroup) {
	if *rate > 0 {
		l.tokens = make(chan struct{}, *callers)
		wg.Go(func() {
			every := time.Second / time.Duration(*rate)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					select {
					case l.tokens <- struct{}{}:
					default: // the workers are behind: no burst to catch up
					}
				}
			}
		})
	}
	for n := range *callers {
		wg.Go(func() { l.worker(ctx, n) })
	}
}

func (l *load) close() { l.hc.CloseIdleConnections() }

// wait takes a pacing token; false when ctx ended.
func (l *load) wait(ctx context.Context) bool {
	if l.tokens == nil {
		return ctx.Err() == nil
	}
	select {
	case <-l.tokens:
		return true
	case <-ctx.Done():
		return false
	}
}

// worker runs operations until ctx ends.
func (l *load) worker(ctx context.Context, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	era := eras[n%2]
	var c *client.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for i := 0; l.wait(ctx); i++ {
		if c == nil || i%200 == 199 {
			// A session of the worker's own, replaced every 200
			// operations by one in the other era.
			if c != nil {
				_ = c.Close()
				era = eras[(slices.Index(eras, era)+1)%2]
			}
			var err error
			c, err = l.connect(ctx, era)
			if ctx.Err() != nil {
				return
			}
			l.st.record("session open ("+eraName(era)+")", err)
			if err != nil {
				c = nil
				continue
			}
		}
		up := []string{upstreamHTTP, upstreamStdio}[rng.IntN(2)]
		op, err := l.one(ctx, c, era, up, rng)
		if ctx.Err() != nil {
			return // the run ended mid-operation: not a failure
		}
		if errors.Is(err, errCancelled) {
			l.st.cancelled.Add(1)
			err = nil
		}
		l.st.record(op, err)
	}
}

// errCancelled: a call the load cancelled ended as it should.
var errCancelled = errors.New("cancelled as intended")

// one runs a randomly chosen operation on c (a session in era), against
// upstream up; it returns the operation's name for the summary.
func (l *load) one(ctx context.Context, c *client.Client, era mcp.Era, up string, rng *rand.Rand) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var op string
	var err error
	switch k := rng.IntN(100); {
	case k < 25:
		op, err = "tools/call echo", echo(ctx, c, up, rng)
	case k < 35:
		op, err = "tools/call get-structured-content", structured(ctx, c, up)
	case k < 45:
		op, err = "tools/call get-tiny-image", tinyImage(ctx, c, up)
	case k < 53:
		op, err = "tools/call long-running, progress", longRunning(ctx, c, up)
	case k < 58:
		op, err = "tools/call long-running, cancelled", cancelledCall(ctx, c, up)
	case k < 68:
		op, err = "prompts/get", prompt(ctx, c, up, rng)
	case k < 78:
		op, err = "resources/read", resource(ctx, c, rng)
	case k < 88:
		op, err = "tools/list", l.list(ctx, c)
	default:
		era = eras[rng.IntN(2)]
		op, err = "session opened, echo, closed", l.shortSession(ctx, era, up, rng)
	}
	return op + " (" + eraName(era) + ")", err
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func echo(ctx context.Context, c *client.Client, up string, rng *rand.Rand) error {
	msg := fmt.Sprintf("soak %d", rng.Int())
	res, err := c.CallTool(ctx, up+"__echo", map[string]any{"message": msg})
	if err != nil {
		return err
	}
	if res.IsError || text(res) != "Echo: "+msg {
		return fmt.Errorf("echo: %.200q, want %q", text(res), "Echo: "+msg)
	}
	return nil
}

func structured(ctx context.Context, c *client.Client, up string) error {
	res, err := c.CallTool(ctx, up+"__get-structured-content", map[string]any{"location": "Chicago"})
	if err != nil {
		return err
	}
	var w struct {
		Temperature float64 `json:"temperature"`
		Conditions  string  `json:"conditions"`
	}
	if res.IsError || json.Unmarshal(res.StructuredContent, &w) != nil || w.Temperature != 36 || w.Conditions == "" {
		return fmt.Errorf("get-structured-content: %.200s", res.StructuredContent)
	}
	return nil
}

func tinyImage(ctx context.Context, c *client.Client, up string) error {
	res, err := c.CallTool(ctx, up+"__get-tiny-image", nil)
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 3 {
		return fmt.Errorf("get-tiny-image: %d blocks", len(res.Content))
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || len(img.Data) == 0 {
		return fmt.Errorf("get-tiny-image: the second block is not a PNG: %T", res.Content[1])
	}
	return nil
}

// longRunning runs a 0.2-second, 4-step operation: its progress must come
// in increasing order, and its result after.
func longRunning(ctx context.Context, c *client.Client, up string) error {
	var mu sync.Mutex
	var got []float64
	res, err := c.CallTool(ctx, up+"__trigger-long-running-operation", map[string]any{"duration": 0.2, "steps": 4},
		client.WithProgress(func(p client.Progress) {
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		}))
	if err != nil {
		return err
	}
	if res.IsError || !strings.Contains(text(res), "completed") {
		return fmt.Errorf("trigger-long-running-operation: %.200q", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range got {
		if i > 0 && got[i] <= got[i-1] {
			return fmt.Errorf("trigger-long-running-operation: progress %v, want increasing reports", got)
		}
	}
	if len(got) == 0 {
		return errors.New("trigger-long-running-operation: no progress")
	}
	return nil
}

// cancelledCall starts a 10-second operation and cancels it at its first
// progress report: the call must end with the cancellation, not a result.
func cancelledCall(ctx context.Context, c *client.Client, up string) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err := c.CallTool(cctx, up+"__trigger-long-running-operation", map[string]any{"duration": 10, "steps": 40},
		client.WithProgress(func(client.Progress) { cancel() }))
	switch {
	case err == nil:
		return errors.New("a cancelled 10-second operation returned a result")
	case ctx.Err() != nil:
		return err // the operation's own timeout, or the run's end
	case errors.Is(err, context.Canceled):
		return errCancelled
	}
	return err
}

func prompt(ctx context.Context, c *client.Client, up string, rng *rand.Rand) error {
	if rng.IntN(2) == 0 {
		p, err := c.GetPrompt(ctx, up+"__simple-prompt", nil)
		if err != nil {
			return err
		}
		if len(p.Messages) == 0 {
			return errors.New("simple-prompt: no messages")
		}
		return nil
	}
	p, err := c.GetPrompt(ctx, up+"__args-prompt", map[string]string{"city": "Lisbon"})
	if err != nil {
		return err
	}
	for _, m := range p.Messages {
		if t, ok := m.Content.(*mcp.TextContent); ok && strings.Contains(t.Text, "Lisbon") {
			return nil
		}
	}
	return fmt.Errorf("args-prompt: no message names the city: %+v", p.Messages)
}

// resource reads the static README (both upstreams serve it: the first in
// the config answers) or a templated text resource.
func resource(ctx context.Context, c *client.Client, rng *rand.Rand) error {
	uri := "demo://readme"
	if rng.IntN(2) == 0 {
		uri = fmt.Sprintf("demo://text/%d", 1+rng.IntN(100))
	}
	r, err := c.ReadResource(ctx, uri)
	if err != nil {
		return err
	}
	if len(r.Contents) != 1 {
		return fmt.Errorf("%s: %d contents", uri, len(r.Contents))
	}
	t, ok := r.Contents[0].(*mcp.TextResourceContents)
	if !ok || t.URI != uri || t.Text == "" {
		return fmt.Errorf("%s: %T %+v", uri, r.Contents[0], r.Contents[0])
	}
	return nil
}

func (l *load) list(ctx context.Context, c *client.Client) error {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	if len(tools) != l.tools {
		return fmt.Errorf("tools/list: %d tools, %d at the start", len(tools), l.tools)
	}
	return nil
}

// shortSession opens a session, makes one call and closes it.
func (l *load) shortSession(ctx context.Context, era mcp.Era, up string, rng *rand.Rand) error {
	c, err := l.connect(ctx, era)
	if err != nil {
		return err
	}
	err = echo(ctx, c, up, rng)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// stats counts the operations, by kind, and keeps the first failures.
type stats struct {
	ops, errors, cancelled atomic.Int64
	mu                     sync.Mutex
	byOp                   map[string]*[2]int64 // operations, failures
	firstErrors            []string
}

func (st *stats) record(op string, err error) {
	st.ops.Add(1)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byOp == nil {
		st.byOp = map[string]*[2]int64{}
	}
	n := st.byOp[op]
	if n == nil {
		n = new([2]int64)
		st.byOp[op] = n
	}
	n[0]++
	if err == nil {
		return
	}
	n[1]++
	st.errors.Add(1)
	if len(st.firstErrors) < 10 {
		st.firstErrors = append(st.firstErrors, op+": "+err.Error())
	}
}

func (st *stats) first() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.firstErrors)
}

// summary is one line of operations by kind.
func (st *stats) summary() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	keys := make([]string, 0, len(st.byOp))
	for k := range st.byOp {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations (%d calls cancelled as intended), %d failed:", st.ops.Load(), st.cancelled.Load(), st.errors.Load())
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-50s %8d", k, st.byOp[k][0])
		if f := st.byOp[k][1]; f > 0 {
			fmt.Fprintf(&b, " (%d failed)", f)
		}
	}
	return b.String()
}
