// Package bare is the client workload's bare caller: net/http and
// encoding/json doing the least a correct 2025-11-25 client must. It
// initializes once (checking the version the server chose), sends
// notifications/initialized, then POSTs each tools/call with the protocol
// version header and the session id (when the server assigned one), and
// decodes the reply, a JSON body or an SSE stream, finding the response by
// its id. No library, no schema, no cache: the floor the clients are held
// to, as the floor server is for servers.
package bare

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/toolwire/toolwire/bench/clients"
	"github.com/toolwire/toolwire/bench/tools"
)

// Caller is a connected bare client, safe for concurrent use.
type Caller struct {
	url     string
	hc      *http.Client
	session string // Mcp-Session-Id, "" when the server assigns none
	version string // the negotiated version, sent on every request after initialize
	nextID  atomic.Int64
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
}

type callParams struct {
	Name      string           `json:"name"`
	Arguments clients.EchoArgs `json:"arguments"`
}

type initParams struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    struct{} `json:"capabilities"`
	ClientInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

// response is a JSON-RPC response; Result is decoded into what the caller
// asked for.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int64          `json:"id"`
	Method  string          `json:"method"` // set on a server request or notification
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// contentBlock is the part of a content block the echo check reads.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content []contentBlock `json:"content"`
	IsError bool           `json:"isError"`
}

// Connect initializes a 2025-11-25 session on url; nil hc means
// http.DefaultClient.
func Connect(ctx context.Context, url string, hc *http.Client) (clients.Caller, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Caller{url: url, hc: hc}
	var p initParams
	p.ProtocolVersion = clients.LegacyVersion
	p.ClientInfo.Name, p.ClientInfo.Version = "bench-bare-client", "1.0.0"
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	hdr, err := c.roundTrip(ctx, "initialize", p, &res)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if res.ProtocolVersion != clients.LegacyVersion {
		return nil, fmt.Errorf("initialize: the server chose %q, this client speaks %s", res.ProtocolVersion, clients.LegacyVersion)
	}
	c.session, c.version = hdr.Get("Mcp-Session-Id"), res.ProtocolVersion
	body, _ := json.Marshal(notification{JSONRPC: "2.0", Method: "notifications/initialized"})
	resp, err := c.post(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: HTTP %d, want 202", resp.StatusCode)
	}
	return c, nil
}

// Echo calls the echo tool and checks the reply.
func (c *Caller) Echo(ctx context.Context, msg string) error {
	var res callResult
	if _, err := c.roundTrip(ctx, "tools/call", callParams{Name: tools.Echo, Arguments: clients.EchoArgs{Message: msg}}, &res); err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	return clients.CheckEchoBlocks(msg, res.IsError, res.Content, func(b contentBlock) (string, bool) {
		return b.Text, b.Type == "text"
	})
}

// Close ends the session with DELETE when the server assigned one.
func (c *Caller) Close() error {
	if c.session == "" {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", clients.LegacyVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func (c *Caller) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	return c.hc.Do(req)
}

// roundTrip sends one request and decodes its result into out.
func (c *Caller) roundTrip(ctx context.Context, method string, params, out any) (http.Header, error) {
	id := c.nextID.Add(1)
	body, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	resp, err := c.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %d: %.200q", resp.StatusCode, b)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var r *response
	switch mt {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		r = new(response)
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("bad JSON reply: %w", err)
		}
	case "text/event-stream":
		if r, err = readSSE(resp.Body, id); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("reply Content-Type %q", resp.Header.Get("Content-Type"))
	}
	if r.JSONRPC != "2.0" || r.ID == nil || *r.ID != id {
		return nil, fmt.Errorf("the reply does not answer request %d", id)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return nil, fmt.Errorf("bad result: %w", err)
	}
	return resp.Header, nil
}

// readSSE reads events until the response to id; other messages (server
// notifications and requests, which this caller declares no capability to
// answer) are skipped.
func readSSE(body io.Reader, id int64) (*response, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			continue
		}
		if len(line) != 0 || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var r response
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("bad SSE event: %w", err)
		}
		data = data[:0]
		if r.Method == "" && r.ID != nil && *r.ID == id {
			return &r, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the SSE stream ended before the response")
}
