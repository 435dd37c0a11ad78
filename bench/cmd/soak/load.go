package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/toolwire/toolwire/bench/internal/load"
)

// worker runs the mixed load until ctx ends. Each worker has its own
// keep-alive client, as a separate MCP client would.
func worker(ctx context.Context, n int, url string, st *stats) {
	hc := load.NewHTTPClient(2)
	defer hc.CloseIdleConnections()
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	big := strings.Repeat("x", 64<<10)
	modern := load.NewStateless(hc, url)
	for ctx.Err() == nil {
		var op string
		var err error
		switch k := rng.IntN(100); {
		case k < 30:
			op, err = "legacy session", legacySession(ctx, hc, url, rng.IntN(20)+1)
		case k < 60:
			msg := fmt.Sprintf("modern %d", rng.Int())
			op, err = "modern echo", modern.Call(ctx, "echo", load.EchoArgs(msg), checkEcho(msg))
		case k < 70:
			op, err = "large echo", modern.Call(ctx, "echo", load.EchoArgs(big), checkEcho(big))
		case k < 80:
			op, err = "invalid arguments", modern.CallRejected(ctx, "get-sum", []byte(`{"a":"one","b":2}`))
		case k < 90:
			op, err = "malformed body", malformed(ctx, hc, url)
		default:
			op, err = "dropped call", droppedCall(ctx, hc, url)
		}
		if ctx.Err() != nil {
			return // the run ended mid-operation; not a failure
		}
		st.record(op, err)
	}
}

// legacySession opens a 2025-era session, makes calls on it and ends it.
func legacySession(ctx context.Context, hc *http.Client, url string, calls int) error {
	s, err := load.Open(ctx, hc, url)
	if err != nil {
		return err
	}
	for i := range calls {
		if i%4 == 3 {
			err = s.Call(ctx, "get-sum", load.AddArgs(float64(i), 2), checkText(fmt.Sprintf("The sum of %d and 2 is %d.", i, i+2)))
		} else {
			msg := fmt.Sprintf("call %d", i)
			err = s.Call(ctx, "echo", load.EchoArgs(msg), checkEcho(msg))
		}
		if err != nil {
			return err
		}
	}
	return endSession(ctx, hc, url, s.ID)
}

// droppedCall starts a long call on a new session and drops its connection
// after 50 ms, then ends the session: the server must free what the call held.
func droppedCall(ctx context.Context, hc *http.Client, url string) error {
	s, err := load.Open(ctx, hc, url)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = s.Call(cctx, "trigger-long-running-operation", []byte(`{"duration":5,"steps":5}`), func(*load.CallResult) error { return nil })
	cancel()
	if err == nil {
		return errors.New("a 5-second call finished within 50 ms")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return endSession(ctx, hc, url, s.ID)
}

func endSession(ctx context.Context, hc *http.Client, url, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", load.ProtocolVersion)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("DELETE: status %d", resp.StatusCode)
	}
	return nil
}

// malformed posts a body that is not JSON: 400 with a -32700 error.
func malformed(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(`-32700`)) {
		return fmt.Errorf("status %d, body %.200q; want 400 with -32700", resp.StatusCode, body)
	}
	return nil
}

// checkEcho expects the reference server's echo: "Echo: " and the message.
func checkEcho(msg string) load.Check { return checkText("Echo: " + msg) }

// checkText expects a result of one text block reading want.
func checkText(want string) load.Check {
	return func(res *load.CallResult) error {
		if res.IsError || len(res.Content) != 1 || res.Content[0].Text != want {
			return fmt.Errorf("result %+.200v, want one text %.100q", res, want)
		}
		return nil
	}
}
