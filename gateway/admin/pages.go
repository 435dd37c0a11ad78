package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/policy"
)

type overviewData struct {
	base
	Now       time.Time
	Upstreams []gateway.UpstreamStatus
	// Personas are the policy's, in config order; none when no policy.
	Personas []string
	Policy   bool
	Tools    []routeRow
	Prompts  []routeRow
	Audit    bool
}

// routeRow is a served name and, per persona in order, its decision.
type routeRow struct {
	gateway.Route
	Decisions []policy.Decision
}

func (h *handler) policy() *policy.Policy {
	if h.cfg.Policy == nil {
		return nil
	}
	return h.cfg.Policy()
}

// overview shows the upstreams and the merged tools and prompts, decided per
// persona.
func (h *handler) overview(w http.ResponseWriter, _ *http.Request, s *session) {
	p := h.policy()
	d := overviewData{base: base{Title: "Gateway", CSRF: s.csrf}, Now: h.opts.now(),
		Upstreams: h.cfg.Gateway.Upstreams(), Personas: p.Personas(), Policy: p != nil, Audit: h.cfg.Audit != nil}
	rows := func(routes []gateway.Route, f policy.Feature) []routeRow {
		out := make([]routeRow, len(routes))
		for i, rt := range routes {
			out[i].Route = rt
			for _, per := range d.Personas {
				out[i].Decisions = append(out[i].Decisions, p.DecideAs(per, f, rt.Name))
			}
		}
		return out
	}
	d.Tools = rows(h.cfg.Gateway.Tools(), policy.Tools)
	d.Prompts = rows(h.cfg.Gateway.Prompts(), policy.Prompts)
	h.render(w, http.StatusOK, "overview", d)
}

// auditQuery is the audit page's filter form, as typed (to fill the form
// again) and as parsed.
type auditQuery struct {
	Identity, Tool, Outcome, Since, Until string
	filter                                audit.Filter
}

// badParam is a query parameter that could not be used.
type badParam struct{ name, why string }

func (e *badParam) Error() string { return fmt.Sprintf("query parameter %q: %s", e.name, e.why) }

// maxParam bounds a text filter's length.
const maxParam = 1024

// parseAuditQuery reads the filters and the page position from q.
func parseAuditQuery(q url.Values) (auditQuery, *badParam) {
	a := auditQuery{
		Identity: strings.TrimSpace(q.Get("identity")),
		Tool:     strings.TrimSpace(q.Get("tool")),
		Outcome:  strings.TrimSpace(q.Get("outcome")),
		Since:    strings.TrimSpace(q.Get("since")),
		Until:    strings.TrimSpace(q.Get("until")),
	}
	for _, p := range []struct{ name, v string }{{"identity", a.Identity}, {"tool", a.Tool}} {
		if len(p.v) > maxParam {
			return a, &badParam{p.name, fmt.Sprintf("longer than %d bytes", maxParam)}
		}
	}
	a.filter.Identity, a.filter.Tool = a.Identity, a.Tool
	if a.Outcome != "" {
		if !audit.Outcome(a.Outcome).Valid() {
			return a, &badParam{"outcome", fmt.Sprintf("%q is not an outcome (one of %v)", a.Outcome, audit.Outcomes())}
		}
		a.filter.Outcome = audit.Outcome(a.Outcome)
	}
	var err error
	if a.filter.Since, err = parseWhen(a.Since, false); err != nil {
		return a, &badParam{"since", err.Error()}
	}
	if a.filter.Until, err = parseWhen(a.Until, true); err != nil {
		return a, &badParam{"until", err.Error()}
	}
	if !a.filter.Since.IsZero() && !a.filter.Until.IsZero() && !a.filter.Since.Before(a.filter.Until) {
		return a, &badParam{"until", "is not after since"}
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return a, &badParam{"after", fmt.Sprintf("%q is not a record number (a Seq, 0 or more)", v)}
		}
		a.filter.AfterSeq = n
	}
	return a, nil
}

// parseWhen reads an RFC 3339 time or a date (YYYY-MM-DD, UTC). A date as
// the end of a range (Until, exclusive) means the end of that day, so that
// since=D&until=D is day D.
func parseWhen(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a date (2026-01-02)", s)
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// values is the query's filters as URL parameters, for paging links.
func (a auditQuery) values() url.Values {
	v := url.Values{}
	for _, p := range []struct{ k, v string }{{"identity", a.Identity}, {"tool", a.Tool},
		{"outcome", a.Outcome}, {"since", a.Since}, {"until", a.Until}} {
		if p.v != "" {
			v.Set(p.k, p.v)
		}
	}
	return v
}

type auditData struct {
	base
	Off      bool
	Q        auditQuery
	Outcomes []audit.Outcome
	Records  []*audit.Record
	PageSize int
	// After is the page's AfterSeq; FirstURL and NextURL link to the first
	// and the next page ("" when there is none).
	After             int64
	FirstURL, NextURL string
}

// auditPage shows one page of the audit records that match the filters.
func (h *handler) auditPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := auditData{base: base{Title: "Audit", CSRF: s.csrf}, Off: h.cfg.Audit == nil,
		Outcomes: audit.Outcomes(), PageSize: h.opts.limits.PageSize}
	if d.Off {
		h.render(w, http.StatusOK, "audit", d)
		return
	}
	q, bad := parseAuditQuery(r.URL.Query())
	if bad != nil {
		h.fail(w, r, s, http.StatusBadRequest, "Bad "+bad.Error()+".")
		return
	}
	d.Q, d.After = q, q.filter.AfterSeq
	f := q.filter
	f.Limit = h.opts.limits.PageSize + 1 // one more says whether a next page exists
	for rec, err := range h.cfg.Audit.Query(r.Context(), f) {
		if err != nil {
			h.log.Error("admin: querying the audit store", "error", err)
			h.fail(w, r, s, http.StatusInternalServerError, "Reading the audit store failed: "+err.Error())
			return
		}
		d.Records = append(d.Records, rec)
	}
	if len(d.Records) > h.opts.limits.PageSize {
		d.Records = d.Records[:h.opts.limits.PageSize]
		v := q.values()
		v.Set("after", strconv.FormatInt(d.Records[len(d.Records)-1].Seq, 10))
		d.NextURL = "/admin/audit?" + v.Encode()
	}
	if d.After > 0 {
		d.FirstURL = "/admin/audit?" + q.values().Encode()
	}
	h.render(w, http.StatusOK, "audit", d)
}

type verifyData struct {
	base
	Off    bool
	Report *audit.VerifyReport
	Took   time.Duration
}

// verifyPage walks the audit chain and shows the report.
func (h *handler) verifyPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := verifyData{base: base{Title: "Audit chain", CSRF: s.csrf}, Off: h.cfg.Audit == nil}
	if !d.Off {
		start := time.Now()
		rep, err := h.cfg.Audit.Verify(r.Context())
		if err != nil {
			h.log.Error("admin: verifying the audit chain", "error", err)
			h.fail(w, r, s, http.StatusInternalServerError, "Verifying the audit chain failed: "+err.Error())
			return
		}
		d.Report, d.Took = rep, time.Since(start)
	}
	h.render(w, http.StatusOK, "verify", d)
}
