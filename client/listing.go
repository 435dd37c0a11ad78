package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/mcp"
)

// What every paginated listing (tools, prompts, resources, resource
// templates, tasks) shares: following nextCursor, reading a page exactly,
// naming a bad item, and gathering all pages.

// listPages follows a listing's nextCursor, at most Limits.MaxPages pages,
// yielding each page decode makes of a result (next is nil at the end). A
// cursor that comes again ends the listing with a *ProtocolError, as it
// would never end.
func listPages[P any](c *Client, ctx context.Context, method string, decode func(json.RawMessage) (P, *string, error), yield func(P, error) bool) {
	var zero P
	cursor, hasCursor := "", false
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page >= c.cfg.limits.MaxPages {
			yield(zero, &ProtocolError{Op: method, Reason: fmt.Sprintf("more than %d pages, the client's limit", c.cfg.limits.MaxPages)})
			return
		}
		var params any
		if hasCursor {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.Call(ctx, method, params)
		if err != nil {
			yield(zero, err)
			return
		}
		res, next, err := decode(raw)
		if err != nil {
			yield(zero, err)
			return
		}
		if !yield(res, nil) || next == nil {
			return
		}
		if seen[*next] {
			yield(zero, &ProtocolError{Op: method, Reason: fmt.Sprintf("nextCursor %q repeats; the listing would never end", *next)})
			return
		}
		seen[*next] = true
		cursor, hasCursor = *next, true
	}
}

// pageHead is what every list result has besides its items; the cursor is
// a pointer, since an empty-string cursor is a valid cursor and not the end.
type pageHead struct {
	NextCursor *string        `json:"nextCursor"`
	TTLMs      *int64         `json:"ttlMs"`
	CacheScope mcp.CacheScope `json:"cacheScope"`
	ResultType mcp.ResultType `json:"resultType"`
	Meta       mcp.Meta       `json:"_meta"`
}

// nextCursor is the page's cursor as the mcp result types carry it: ""
// at the end.
func (h *pageHead) nextCursor() string {
	if h.NextCursor == nil {
		return ""
	}
	return *h.NextCursor
}

// decodePage reads one page of the listing op exactly into page, a struct
// that embeds pageHead and holds the raw items of the array member in the
// field items points at. A result that does not decode is "not a <what>",
// and one without the array a *ProtocolError too: a listing always has it.
func decodePage(op, what, member string, raw json.RawMessage, page any, items *[]json.RawMessage) error {
	if err := wirejson.Unmarshal(raw, page); err != nil {
		return &ProtocolError{Op: op, Reason: "result is not a " + what, Err: err}
	}
	if *items == nil {
		return &ProtocolError{Op: op, Reason: fmt.Sprintf("result has no %q array", member)}
	}
	return nil
}

// itemError is the *ProtocolError for item i of the array member of the
// listing op: its reason is "<member>[i] <reason>", its path the item's.
func itemError(op, member string, i int, reason string, err error) *ProtocolError {
	return &ProtocolError{Op: op, Reason: fmt.Sprintf("%s[%d] %s", member, i, reason), Path: fmt.Sprintf("/%s/%d", member, i), Err: err}
}

// decodeItems decodes each item of the array member of the listing op
// exactly into a new T: one that does not decode is "<member>[i] is not a
// <what>", and one that complete finds without its required members is
// "<member>[i] <missing>".
func decodeItems[T any](op, member, what string, raws []json.RawMessage, complete func(*T) bool, missing string) ([]*T, error) {
	items := make([]*T, 0, len(raws))
	for i, raw := range raws {
		v := new(T)
		if err := wirejson.Unmarshal(raw, v); err != nil {
			return nil, itemError(op, member, i, "is not a "+what, err)
		}
		if !complete(v) {
			return nil, itemError(op, member, i, missing, nil)
		}
		items = append(items, v)
	}
	return items, nil
}

// allPages gathers the items of every page of a listing, or returns the
// first error, which ends it.
func allPages[P, T any](pages iter.Seq2[P, error], items func(P) []T) ([]T, error) {
	var all []T
	for page, err := range pages {
		if err != nil {
			return nil, err
		}
		all = append(all, items(page)...)
	}
	return all, nil
}
