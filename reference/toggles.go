package reference

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// toggles are the simulations the toggle tools started: simulated logging
// per 2025-era session, resource updates server-wide.
type toggles struct {
	mu      sync.Mutex
	logging map[*server.Session]chan struct{} // closed to stop that session's logging
	updates chan struct{}                     // closed to stop updates; nil when off
	wg      sync.WaitGroup                    // every running simulation goroutine
}

// running reports how many simulations run (for tests).
func (t *toggles) running() (logging int, updates bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.logging), t.updates != nil
}

var simulatedLevels = []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning,
	mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency}

// sendTimeout bounds one simulated notification to a slow client.
const sendTimeout = 5 * time.Second

func (c *config) addToggles(s *server.Server) error {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(false), IdempotentHint: mcp.Bool(false), OpenWorldHint: mcp.Bool(false)}
	err := server.AddTool(s, &mcp.Tool{
		Name: "toggle-simulated-logging", Title: "Toggle Simulated Logging",
		Description: fmt.Sprintf("Toggles simulated, random-leveled logging to this session on or off (one message every %s, "+
			"filtered by the session's logging level); needs a 2025-era session", c.tick),
		Annotations: ann,
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (*mcp.CallToolResult, error) {
		ss := req.Session()
		if ss == nil {
			return mcp.ErrorResult("toggle-simulated-logging needs a 2025-era session (initialize, then logging/setLevel): " +
				"in 2026-07-28 there is no session to send server-initiated log messages to"), nil
		}
		if c.toggleLogging(ss) {
			return mcp.TextResult("Started simulated, random-leveled logging for this session at a %s pace. "+
				"The session's logging level is respected: a message below it is not sent.", c.tick), nil
		}
		return mcp.TextResult("Stopped simulated logging for this session."), nil
	})
	if err != nil {
		return err
	}
	return server.AddTool(s, &mcp.Tool{
		Name: "toggle-subscriber-updates", Title: "Toggle Subscriber Updates",
		Description: fmt.Sprintf("Toggles simulated resource updates on or off, server-wide: every %s each subscribed demo:// resource "+
			"gets notifications/resources/updated", c.tick),
		Annotations: ann,
	}, func(ctx context.Context, req *server.CallRequest, _ noInput) (*mcp.CallToolResult, error) {
		if c.toggleUpdates(s) {
			return mcp.TextResult("Started simulated resource updates every %s for subscribed demo:// resources.", c.tick), nil
		}
		return mcp.TextResult("Stopped simulated resource updates."), nil
	})
}

// toggleLogging starts or stops simulated logging to ss; true when started.
func (c *config) toggleLogging(ss *server.Session) bool {
	t := c.toggles
	t.mu.Lock()
	defer t.mu.Unlock()
	if stop, ok := t.logging[ss]; ok {
		close(stop)
		delete(t.logging, ss)
		return false
	}
	stop := make(chan struct{})
	t.logging[ss] = stop
	t.wg.Add(1)
	go c.simulateLogging(ss, stop)
	return true
}

// simulateLogging sends a message at a random level now and every tick,
// until stopped, the session closes or the server's lifetime ends.
func (c *config) simulateLogging(ss *server.Session, stop chan struct{}) {
	t := c.toggles
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		if t.logging[ss] == stop {
			delete(t.logging, ss)
		}
		t.mu.Unlock()
	}()
	tick := time.NewTicker(c.tick)
	defer tick.Stop()
	done := ss.Done()
	for {
		level := simulatedLevels[rand.IntN(len(simulatedLevels))]
		ctx, cancel := context.WithTimeout(c.life, sendTimeout)
		err := ss.Log(ctx, level, "simulated", fmt.Sprintf("%s-level message", level))
		cancel()
		if errors.Is(err, server.ErrSessionClosed) {
			return
		}
		select {
		case <-stop:
			return
		case <-done:
			return
		case <-c.life.Done():
			return
		case <-tick.C:
		}
	}
}

// updateURIs are the URIs toggle-subscriber-updates announces: the demo
// templates' and every static resource (gzipped files included).
func updateURIs(s *server.Server) []string {
	uris := make([]string, 0, 3*MaxResourceID+8)
	for _, kind := range []string{"resource", "text", "blob"} {
		for id := 1; id <= MaxResourceID; id++ {
			uris = append(uris, fmt.Sprintf("demo://%s/%d", kind, id))
		}
	}
	for _, r := range s.Resources() {
		uris = append(uris, r.URI)
	}
	return uris
}

// toggleUpdates starts or stops the simulated updates; true when started.
func (c *config) toggleUpdates(s *server.Server) bool {
	t := c.toggles
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.updates != nil {
		close(t.updates)
		t.updates = nil
		return false
	}
	stop := make(chan struct{})
	t.updates = stop
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			if t.updates == stop {
				t.updates = nil
			}
			t.mu.Unlock()
		}()
		tick := time.NewTicker(c.tick)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-c.life.Done():
				return
			case <-tick.C:
			}
			// Only sessions subscribed to a URI (resources/subscribe, or a
			// 2026-07-28 subscriptions/listen stream) hear of it.
			for _, uri := range updateURIs(s) {
				s.NotifyResourceUpdated(uri)
			}
		}
	}()
	return true
}
