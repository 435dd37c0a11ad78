package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/internal/suggest"
	"github.com/toolwire/toolwire/oauth"
)

// MaxHeaderFile is the largest file a header_files entry may name.
const MaxHeaderFile = 64 << 10

// upstreamOAuth is an upstream's oauth settings: the gateway obtains its
// own token with the client credentials grant (clientID set), and, with
// token_exchange, one for each caller (exchange).
type upstreamOAuth struct {
	clientID, clientSecret string
	scopes                 []string
	method                 string
	allowPrivate           bool
	exchange               *gateway.TokenExchange
}

var upstreamOAuthKeys = []string{"client_id", "client_secret", "scopes", "token_endpoint_auth_method", "allow_private_networks", "token_exchange"}

// oauthMethods are the client authentication methods the client
// credentials grant can use with a secret ("" lets the gateway pick one
// the authorization server supports).
var oauthMethods = []string{"client_secret_basic", "client_secret_post"}

func (d *decoder) upstreamOAuth(entry *ast.MappingValueNode, p string) *upstreamOAuth {
	what := p + ": oauth"
	m, ok := d.Mapping(entry.Value, what)
	if !ok {
		return nil
	}
	o := &upstreamOAuth{}
	before := d.Count()
	d.fields(m, what, upstreamOAuthKeys, func(key string, mv *ast.MappingValueNode) {
		w := what + ": " + key
		v := mv.Value
		switch key {
		case "client_id":
			d.checked(v, w, checkHeaderValue, &o.clientID)
		case "client_secret":
			// Never echo the value.
			d.checked(v, w, checkHeaderValue, &o.clientSecret)
		case "scopes":
			o.scopes = d.scopes(v, w)
		case "token_endpoint_auth_method":
			d.checked(v, w, oneOf(oauthMethods), &o.method)
		case "allow_private_networks":
			o.allowPrivate, _ = d.boolean(v, w)
		case "token_exchange":
			o.exchange = d.tokenExchange(mv, what)
		}
	})
	// With token_exchange alone, the gateway has no token of its own.
	static := !d.has(m, "token_exchange") || d.has(m, "client_id") || d.has(m, "client_secret")
	for _, k := range []string{"client_id", "client_secret"} {
		if static && !d.has(m, k) {
			d.Errorf(entry.Key, "%s: no %s (the client credentials grant needs client_id and client_secret)", what, k)
		}
	}
	if d.Count() > before {
		return nil
	}
	return o
}

// oneOf is the check of a value that must be one of allowed: "%q is not
// one of a, b", with the one a typo away.
func oneOf(allowed []string) func(string) error {
	return func(s string) error {
		return checkOneOf(s, allowed, "is not one of "+strings.Join(allowed, ", "), "")
	}
}

// checkOneOf refuses s unless it is one of allowed: "%q " and is (how the
// allowed values are named: "is neither http nor sse"), the allowed value
// a typo away when there is one, then after.
func checkOneOf(s string, allowed []string, is, after string) error {
	if slices.Contains(allowed, s) {
		return nil
	}
	msg := fmt.Sprintf("%q %s", truncate(s), is)
	if best, ok := suggest.Nearest(s, allowed); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return errors.New(msg + after)
}

// authorizers keeps the Authorizer made for an upstream's url and oauth
// settings, so that loading an unchanged file again (a reload) gives the
// same one: the gateway then keeps the upstream running, and its token.
var authorizers = struct {
	sync.Mutex
	byKey map[[sha256.Size]byte]*oauth.Authorizer
	order [][sha256.Size]byte // oldest first
}{byKey: map[[sha256.Size]byte]*oauth.Authorizer{}}

// maxAuthorizers bounds the cache: a few reloads' worth of upstreams.
const maxAuthorizers = 4 * MaxUpstreams

func authorizerKey(endpoint string, o *upstreamOAuth) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range append([]string{endpoint, o.clientID, o.clientSecret, o.method, fmt.Sprint(o.allowPrivate)}, o.scopes...) {
		fmt.Fprintf(h, "%d:%s,", len(s), s)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// authorizer returns the cached Authorizer for endpoint and o, or makes
// one.
func authorizer(endpoint string, o *upstreamOAuth) (*oauth.Authorizer, error) {
	key := authorizerKey(endpoint, o)
	authorizers.Lock()
	defer authorizers.Unlock()
	if a := authorizers.byKey[key]; a != nil {
		return a, nil
	}
	a, err := oauth.NewAuthorizer(oauth.Config{
		Endpoint:                endpoint,
		ClientID:                o.clientID,
		ClientSecret:            o.clientSecret,
		TokenEndpointAuthMethod: o.method,
		Grant:                   oauth.ClientCredentials{},
		NoInteractive:           true,
		Scopes:                  o.scopes,
		AllowPrivateNetworks:    o.allowPrivate,
		ClientName:              "toolwire-gateway",
	})
	if err != nil {
		return nil, err
	}
	if len(authorizers.order) >= maxAuthorizers {
		delete(authorizers.byKey, authorizers.order[0])
		authorizers.order = authorizers.order[1:]
	}
	authorizers.byKey[key] = a
	authorizers.order = append(authorizers.order, key)
	return a, nil
}

// setAuth builds u.Auth from the upstream's oauth settings.
func (d *decoder) setAuth(u *gateway.Upstream, o *upstreamOAuth, oauthKey ast.Node, p string) {
	if o == nil || u.URL == "" || checkURL(u.URL) != nil {
		return
	}
	if err := checkSecureURL(u.URL); err != nil {
		d.Errorf(oauthKey, "%s: oauth needs an https url (http only on a loopback host): no token is sent over plain http", p)
		return
	}
	if _, dup := u.Header["Authorization"]; dup && o.clientID != "" {
		d.Errorf(oauthKey, "%s: oauth sets the Authorization header, which headers or header_files set too", p)
		return
	}
	u.TokenExchange = o.exchange
	if o.clientID == "" {
		d.checkStaticFallback(u, oauthKey, p)
		return
	}
	a, err := authorizer(u.URL, o)
	if err != nil {
		d.Errorf(oauthKey, "%s: oauth: %v", p, err)
		return
	}
	u.Auth = a
	d.checkStaticFallback(u, oauthKey, p)
}

// headerFiles reads header values from files. The files' contents never
// appear in an error: they are credentials.
func (d *decoder) headerFiles(n ast.Node, what string, u *gateway.Upstream, first map[string]ast.Node) {
	d.headerEntries(n, what, u, first, true, func(hv *ast.MappingValueNode, k, ck string) {
		path, ok := d.str(hv.Value, what+": "+k)
		if !ok {
			return
		}
		if path == "" || strings.IndexByte(path, 0) >= 0 {
			d.Errorf(hv.Value, "%s: %s: want the path of a file", what, k)
			return
		}
		if d.opts.baseSet && !filepath.IsAbs(path) {
			path = filepath.Join(d.opts.baseDir, path)
		}
		v, err := readHeaderFile(path)
		if err == nil {
			err = checkHeaderValue(v)
		}
		if err != nil {
			d.Errorf(hv.Value, "%s: %s: %s: %v", what, k, path, err)
			return
		}
		u.Header[ck] = []string{v}
	})
}

// headerEntries walks the header mapping n of upstream u (what names it in
// errors): each name is checked, and one already in first (the upstream's
// headers and header_files so far) is an error, left out when skipRepeats;
// add gets the entry with its name as written and canonical.
func (d *decoder) headerEntries(n ast.Node, what string, u *gateway.Upstream, first map[string]ast.Node, skipRepeats bool,
	add func(hv *ast.MappingValueNode, k, ck string)) {
	hm, ok := d.Mapping(n, what)
	if !ok || hm == nil {
		return
	}
	if u.Header == nil {
		u.Header = http.Header{}
	}
	for _, hv := range hm.Values {
		k, ok := d.Key(hv.Key)
		if !ok {
			continue
		}
		if err := checkHeaderName(k); err != nil {
			d.Errorf(hv.Key, "%s: %v", what, err)
		}
		ck := http.CanonicalHeaderKey(k)
		if l, c, dup := repeated(first, ck, hv.Key); dup {
			d.Errorf(hv.Key, "%s: %q repeats a header name (first at %d:%d)", what, k, l, c)
			if skipRepeats {
				continue
			}
		}
		add(hv, k, ck)
	}
}

// readHeaderFile reads a regular file of at most MaxHeaderFile bytes,
// without its trailing newlines. It never blocks on a FIFO or a device.
func readHeaderFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", pathErr(err)
	}
	if !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", pathErr(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxHeaderFile+1))
	if err != nil {
		return "", pathErr(err)
	}
	if len(data) > MaxHeaderFile {
		return "", fmt.Errorf("larger than %d bytes", MaxHeaderFile)
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// pathErr is err without the path, which the caller names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
