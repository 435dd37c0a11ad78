package client

import (
	"context"
	"encoding/json"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/schema"
)

// toolEntry is what the client remembers of a listed tool.
type toolEntry struct {
	tool    *mcp.Tool
	headers []mcp.ParamHeader // x-mcp-header annotations

	once   sync.Once
	output *schema.Schema // compiled outputSchema, nil when none
	badOut error          // why the outputSchema does not compile
}

func (t *toolEntry) outputSchema() (*schema.Schema, error) {
	t.once.Do(func() {
		if len(t.tool.OutputSchema) > 0 {
			t.output, t.badOut = schema.Compile(t.tool.OutputSchema)
		}
	})
	return t.output, t.badOut
}

// toolCache holds the last complete tools/list, which gives the
// outputSchemas calls are checked against and the 2026-07-28 Mcp-Param
// headers. A list_changed notification or a lost session drops it; a
// modern ttlMs ages it, but never below Limits.MinToolsTTL, so that a server's
// ttlMs of 0 does not mean listing every page before every call; a tool it
// lacks makes the next lookup of that name stale, once per listing, so that
// a tool added since is found.
type toolCache struct {
	mu      sync.Mutex
	loaded  bool
	expires time.Time // zero: no expiry known
	byName  map[string]*toolEntry
	missed  map[string]bool // names looked for and not in this listing
}

func (tc *toolCache) drop() {
	tc.mu.Lock()
	tc.loaded, tc.byName, tc.missed = false, nil, nil
	tc.mu.Unlock()
}

func (tc *toolCache) get(name string) *toolEntry {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.byName[name]
}

// lookup returns the cached entry and whether the cache can answer for
// name: it is loaded and unexpired, and has the tool or has already been
// refreshed once for not having it.
func (tc *toolCache) lookup(name string) (*toolEntry, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e := tc.byName[name]
	fresh := tc.loaded && (tc.expires.IsZero() || time.Now().Before(tc.expires)) && (e != nil || tc.missed[name])
	return e, fresh
}

// miss records that a listing made to find name did not have it, so that
// lookups of name are answered (nil) until the next listing.
func (tc *toolCache) miss(name string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if !tc.loaded || tc.byName[name] != nil {
		return
	}
	if tc.missed == nil {
		tc.missed = map[string]bool{}
	}
	tc.missed[name] = true
}

// store replaces the cache with a complete listing. ttl is the listing's
// ttlMs (nil: none, the listing does not expire); it counts as at least
// minTTL.
func (tc *toolCache) store(entries map[string]*toolEntry, ttl *int64, minTTL time.Duration) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.loaded, tc.byName, tc.missed, tc.expires = true, entries, nil, time.Time{}
	if ttl != nil {
		d := time.Duration(max(min(*ttl, math.MaxInt64/int64(time.Millisecond)), 0)) * time.Millisecond
		tc.expires = time.Now().Add(max(d, minTTL))
	}
}

// ToolPages lists tools page by page (tools/list with nextCursor). Each
// step yields one page or an error, after which iteration stops. Over
// modern HTTP, tools whose x-mcp-header annotations break the rules are
// dropped from the page (and logged), as 2026-07-28 requires.
func (c *Client) ToolPages(ctx context.Context) iter.Seq2[*mcp.ListToolsResult, error] {
	return func(yield func(*mcp.ListToolsResult, error) bool) {
		c.pages(ctx, func(p *listPage, err error) bool {
			if err != nil {
				return yield(nil, err)
			}
			return yield(&p.ListToolsResult, nil)
		})
	}
}

// pages lists tools page by page (see listPages).
func (c *Client) pages(ctx context.Context, yield func(*listPage, error) bool) {
	listPages(c, ctx, mcp.MethodListTools, func(raw json.RawMessage) (*listPage, *string, error) {
		p, err := c.decodeToolsPage(raw)
		if err != nil {
			return nil, nil, err
		}
		return p, p.NextCursor, nil
	}, yield)
}

func (c *Client) decodeToolsPage(raw json.RawMessage) (*listPage, error) {
	const op, member = mcp.MethodListTools, "tools"
	var p struct {
		pageHead
		Tools []json.RawMessage `json:"tools"`
	}
	if err := decodePage(op, "tool list", member, raw, &p, &p.Tools); err != nil {
		return nil, err
	}
	out := &listPage{ListToolsResult: mcp.ListToolsResult{NextCursor: p.nextCursor(), TTLMs: p.TTLMs, CacheScope: p.CacheScope, ResultType: p.ResultType, Meta: p.Meta}, NextCursor: p.NextCursor}
	_, isHTTP := c.conn.(*httpConn)
	modern := c.state().era == mcp.EraModern
	for i, traw := range p.Tools {
		var t mcp.Tool
		if err := wirejson.Unmarshal(traw, &t); err != nil {
			return nil, itemError(op, member, i, "is not a tool", err)
		}
		if t.Name == "" {
			e := itemError(op, member, i, "has no name", nil)
			e.Path += "/name"
			return nil, e
		}
		if isHTTP && modern {
			if _, err := mcp.ParamHeaders(t.InputSchema); err != nil {
				c.cfg.logger.Warn("dropping a tool with invalid x-mcp-header annotations", "tool", t.Name, "error", err)
				continue
			}
		}
		out.Tools = append(out.Tools, &t)
	}
	return out, nil
}

// listPage is one decoded page; NextCursor is nil at the end (an empty
// string is a cursor).
type listPage struct {
	mcp.ListToolsResult
	NextCursor *string
}

// ListTools returns every tool, following all pages, and refreshes the
// cache the outputSchema check and the HTTP headers use.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var all []*mcp.Tool
	var ttl *int64
	first := true
	var ferr error
	c.pages(ctx, func(p *listPage, err error) bool {
		if err != nil {
			ferr = err
			return false
		}
		if first || (p.TTLMs != nil && (ttl == nil || *p.TTLMs < *ttl)) {
			ttl = p.TTLMs
		}
		first = false
		all = append(all, p.Tools...)
		return true
	})
	if ferr != nil {
		return nil, ferr
	}
	entries := make(map[string]*toolEntry, len(all))
	for _, t := range all {
		hs, _ := mcp.ParamHeaders(t.InputSchema)
		entries[t.Name] = &toolEntry{tool: t, headers: hs}
	}
	if c.state().era != mcp.EraModern {
		ttl = nil // legacy lists change only with list_changed
	}
	c.tools.store(entries, ttl, c.cfg.limits.MinToolsTTL)
	return all, nil
}

// Tool returns a tool from the cache, listing tools first when the cache is
// empty or stale; nil when the server has no such tool.
func (c *Client) Tool(ctx context.Context, name string) (*mcp.Tool, error) {
	e, err := c.toolEntry(ctx, name, false)
	if err != nil || e == nil {
		return nil, err
	}
	return e.tool, nil
}

func (c *Client) toolEntry(ctx context.Context, name string, refresh bool) (*toolEntry, error) {
	e, fresh := c.tools.lookup(name)
	if fresh && !refresh {
		return e, nil
	}
	if _, err := c.ListTools(ctx); err != nil {
		return nil, err
	}
	e = c.tools.get(name)
	if e == nil {
		c.tools.miss(name)
	}
	return e, nil
}
