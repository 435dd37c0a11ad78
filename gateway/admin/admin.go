// Package admin serves the gateway's admin web page under /admin/: the
// upstreams and their state, the merged tools and prompts with what each
// persona may use and the rule that decides it, and the audit trail with
// filters, paging and an on-demand chain verification. It is server-rendered
// HTML (html/template, embedded templates and CSS, no JavaScript) behind an
// admin API key: a login form trades the key for a session cookie.
package admin

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/httpguard"
)

// Source is what the page shows of the gateway; *gateway.Gateway
// satisfies it.
type Source interface {
	Upstreams() []gateway.UpstreamStatus
	Tools() []gateway.Route
	Prompts() []gateway.Route
}

// Config is what NewHandler serves.
type Config struct {
	// KeyHash is the admin key's hash as policy.HashKey gives it
	// ("sha256:<hex>"); required. The key itself is never stored.
	KeyHash string
	// Gateway is the gateway shown; required.
	Gateway Source
	// Policy returns the current policy, nil when no personas are
	// configured; a func because the gateway reloads it. May be nil.
	Policy func() *policy.Policy
	// Audit is the audit store; nil turns the audit pages off.
	Audit audit.Store
	// Logger gets logins, logouts and failures (never the key); default
	// discard.
	Logger *slog.Logger
}

// The cookies: the session, and the one that binds a login form to the
// browser that loaded it (a CSRF token for the login itself).
const (
	SessionCookie = "toolwire_admin"
	loginCookie   = "toolwire_admin_login"
)

// maxForm bounds a POSTed form body.
const maxForm = 64 << 10

// securityHeaders go on every response: no scripts at all (the CSP has no
// script-src, so default-src 'none' forbids them), no framing, no referrer,
// nothing cached.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-store",
	"X-Content-Type-Options": "nosniff",
}

//go:embed templates/*.html static/admin.css
var files embed.FS

type handler struct {
	cfg    Config
	opts   options
	keys   *policy.KeySet
	sess   *sessions
	limits *loginLimits
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]*template.Template
	css    []byte
}

// NewHandler returns the admin page's handler; it serves everything under
// /admin/ (mount it at "/admin/" on the admin listener). It fails on a
// missing Gateway or a KeyHash that is not a well-formed hash.
func NewHandler(cfg Config, opts ...Option) (http.Handler, error) {
	if cfg.Gateway == nil {
		return nil, errors.New("admin: Config.Gateway is required")
	}
	if cfg.KeyHash == "" {
		return nil, errors.New("admin: Config.KeyHash is required")
	}
	keys, err := policy.NewKeySet(map[string]string{"admin": cfg.KeyHash})
	if err != nil {
		return nil, fmt.Errorf("admin: Config.KeyHash: %w", err)
	}
	o := newOptions(opts)
	h := &handler{cfg: cfg, opts: o, keys: keys, sess: newSessions(o.limits.MaxSessions, o.limits.SessionTTL),
		limits: newLoginLimits(o.limits.MaxFailedLogins, o.limits.FailedLoginInterval), log: cfg.Logger, mux: http.NewServeMux()}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	if h.css, err = fs.ReadFile(files, "static/admin.css"); err != nil {
		return nil, err
	}
	h.mux.HandleFunc("GET /admin/login", h.loginForm)
	h.mux.HandleFunc("POST /admin/login", h.login)
	h.mux.HandleFunc("POST /admin/logout", h.authed(h.logout))
	h.mux.HandleFunc("/admin/logout", func(w http.ResponseWriter, r *http.Request) {
		// Only POST changes state; without this the catch-all would take it.
		w.Header().Set("Allow", "POST")
		h.fail(w, r, nil, http.StatusMethodNotAllowed, "Log out with the button (a POST).")
	})
	h.mux.HandleFunc("GET /admin/static/admin.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Write(h.css)
	})
	h.mux.HandleFunc("GET /admin/{$}", h.authed(h.overview))
	h.mux.HandleFunc("GET /admin/audit", h.authed(h.auditPage))
	h.mux.HandleFunc("GET /admin/audit/verify", h.authed(h.verifyPage))
	h.mux.HandleFunc("/admin/", h.authed(func(w http.ResponseWriter, r *http.Request, s *session) {
		h.fail(w, r, s, http.StatusNotFound, "There is no page "+r.URL.Path+".")
	}))
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	h.mux.ServeHTTP(w, r)
}

// parsePages parses each page's template with the shared layout.
func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"login", "overview", "audit", "verify", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("admin: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// funcs format values for the templates.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"dur": func(d time.Duration) string {
		if d < time.Millisecond {
			return d.String()
		}
		return d.Round(time.Millisecond).String()
	},
	"routes": func(rows []routeRow, personas []string, id string) routeTable {
		return routeTable{ID: id, Rows: rows, Personas: personas, Cols: 3 + len(personas)}
	},
}

// routeTable is one table of the overview: tools or prompts.
type routeTable struct {
	ID       string
	Rows     []routeRow
	Personas []string
	Cols     int
}

// base is what every page's layout needs.
type base struct {
	Title string
	// CSRF is the logged-in session's token for the logout form; "" on
	// pages seen without a session (the layout then shows no logout).
	CSRF string
}

// render writes page with data and status.
func (h *handler) render(w http.ResponseWriter, status int, page string, data any) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		// Rendered whole before sending, so a failure sends no half page.
		h.log.Error("admin: rendering a page", "page", page, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

type errorData struct {
	base
	Status  int
	Message string
}

// fail renders the error page with status and message (plain text, escaped).
func (h *handler) fail(w http.ResponseWriter, _ *http.Request, s *session, status int, message string) {
	d := errorData{base: base{Title: http.StatusText(status)}, Status: status, Message: message}
	if s != nil {
		d.CSRF = s.csrf
	}
	h.render(w, status, "error", d)
}

// authed wraps a page that needs a session: without a live one the request
// is redirected to the login page.
func (h *handler) authed(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := h.session(r)
		if s == nil {
			http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
			return
		}
		next(w, r, s)
	}
}

// session returns the request's live session, or nil.
func (h *handler) session(r *http.Request) *session {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	return h.sess.get(c.Value, h.opts.now())
}

// crossOrigin says why a state-changing request does not come from a page
// of this host, or "" when nothing says it does not. Browsers send
// Sec-Fetch-Site (to HTTPS and localhost), else Origin; a page with
// Referrer-Policy no-referrer makes Origin "null" and sends no Referer, so
// a request may carry no evidence either way: the form's CSRF token then
// decides alone (every POST needs one).
func crossOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		if site != "same-origin" {
			return "the browser says the request comes from another site (Sec-Fetch-Site: " + site + ")"
		}
		return ""
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			return "the request comes from another origin (Origin: " + o + ")"
		}
		return ""
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		if u, err := url.Parse(ref); err != nil || u.Host != r.Host {
			return "the request comes from a page of another host (Referer)"
		}
	}
	return ""
}

type loginData struct {
	base
	Token string
	Error string
}

// loginForm serves the login form, binding it to this browser with a fresh
// login cookie and the token derived from it.
func (h *handler) loginForm(w http.ResponseWriter, r *http.Request) {
	if h.session(r) != nil {
		http.Redirect(w, r, "/admin/", http.StatusSeeOther)
		return
	}
	h.renderLogin(w, r, http.StatusOK, "")
}

func (h *handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	v := h.setLoginCookie(w, r)
	h.render(w, status, "login", loginData{base: base{Title: "Log in"}, Token: h.sess.token("login", v), Error: msg})
}

func (h *handler) setLoginCookie(w http.ResponseWriter, r *http.Request) string {
	v := randomID()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: v, Path: "/admin/login", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return v
}

// login checks the admin key (in constant time, through its hash) and
// starts a session. Failed logins are limited per client: an attempt takes
// one before its key is checked and gives it back unless the key was wrong.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	client := httpguard.ClientAddress(r.RemoteAddr)
	if why := crossOrigin(r); why != "" {
		h.log.Warn("admin: cross-origin login refused", "client", client, "reason", why)
		h.fail(w, r, nil, http.StatusForbidden, "Login refused: "+why+".")
		return
	}
	now := h.opts.now()
	refund, ok := h.limits.take(client, now)
	if !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(h.opts.limits.FailedLoginInterval.Seconds()+0.5)))
		h.fail(w, r, nil, http.StatusTooManyRequests, "Too many failed logins from your address; try again later.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		refund()
		h.fail(w, r, nil, http.StatusBadRequest, "The login form could not be read.")
		return
	}
	c, err := r.Cookie(loginCookie)
	if err != nil || !tokenOK(r.PostFormValue("csrf"), h.sess.token("login", c.Value)) {
		refund()
		h.renderLogin(w, r, http.StatusForbidden, "The login form expired or came from elsewhere; please try again.")
		return
	}
	if _, ok := h.keys.Lookup(r.PostFormValue("key")); !ok {
		h.log.Warn("admin: failed login", "client", client)
		h.renderLogin(w, r, http.StatusUnauthorized, "Wrong admin key.")
		return
	}
	refund()
	id, s := h.sess.create(now)
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: id, Path: "/admin", Expires: s.expires,
		MaxAge: int(h.opts.limits.SessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/admin/login", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	h.log.Info("admin: login", "client", client)
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// logout ends the session.
func (h *handler) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if why := crossOrigin(r); why != "" {
		h.fail(w, r, s, http.StatusForbidden, "Logout refused: "+why+".")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil || !tokenOK(r.PostFormValue("csrf"), s.csrf) {
		h.fail(w, r, s, http.StatusForbidden, "Logout refused: the form's token is missing or wrong.")
		return
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		h.sess.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Path: "/admin", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	h.log.Info("admin: logout", "client", httpguard.ClientAddress(r.RemoteAddr))
	http.Redirect(w, r, "/admin/login", http.StatusSeeOther)
}
