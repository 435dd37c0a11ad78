package oauth

import "strings"

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): its scheme and parameters, both names in lower case, or a
// token68 in place of the parameters.
type Challenge struct {
	Scheme  string
	Params  map[string]string
	Token68 string
}

// Param returns the parameter name (case-insensitive), "" when absent.
func (c Challenge) Param(name string) string { return c.Params[strings.ToLower(name)] }

// Limits on what ParseWWWAuthenticate reads from a server.
const (
	maxChallengeInput  = 16 << 10 // bytes of header value read
	maxChallenges      = 16
	maxChallengeParams = 32
)

// ParseWWWAuthenticate reads the challenges of the WWW-Authenticate header
// lines values. It is lenient: a malformed part is skipped up to the next
// comma, and what follows is still read. Scheme and parameter names are
// lower-cased; a parameter given twice keeps its first value; quoted
// strings are unescaped. Input beyond 16 KiB, challenges beyond 16 and
// parameters beyond 32 per challenge are ignored.
func ParseWWWAuthenticate(values []string) []Challenge {
	var out []Challenge
	budget := maxChallengeInput
	for _, v := range values {
		if budget <= 0 {
			break
		}
		if len(v) > budget {
			v = v[:budget]
		}
		budget -= len(v)
		out = parseChallenges(v, out)
	}
	return out
}

type hparser struct {
	s string
	i int
}

func (p *hparser) eof() bool { return p.i >= len(p.s) }

func (p *hparser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *hparser) skipSeps() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

func (p *hparser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string at p.i (which is '"'); an unterminated one
// runs to the end.
func (p *hparser) quoted() string {
	p.i++ // the opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String()
		case '\\':
			if p.i < len(p.s) {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// token68 reads a token68 standing alone (followed by the end or a
// comma); false, with p unchanged, when there is none.
func (p *hparser) token68() (string, bool) {
	start := p.i
	for p.i < len(p.s) && isToken68(p.s[p.i]) {
		p.i++
	}
	if p.i == start {
		return "", false
	}
	for p.i < len(p.s) && p.s[p.i] == '=' {
		p.i++
	}
	end := p.i
	p.skipSpace()
	if p.eof() || p.s[p.i] == ',' {
		return p.s[start:end], true
	}
	p.i = start
	return "", false
}

// skipToComma skips a malformed part, quoted strings included.
func (p *hparser) skipToComma() {
	for p.i < len(p.s) && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
}

// param reads name=value at p.i; false, with p unchanged, when what is
// there is not a parameter (the next challenge's scheme, say).
func (p *hparser) param() (name, value string, ok bool) {
	start := p.i
	name = p.token()
	if name == "" {
		p.i = start
		return "", "", false
	}
	p.skipSpace()
	if p.eof() || p.s[p.i] != '=' {
		p.i = start
		return "", "", false
	}
	p.i++
	p.skipSpace()
	if !p.eof() && p.s[p.i] == '"' {
		value = p.quoted()
	} else {
		value = p.token()
	}
	return strings.ToLower(name), value, true
}

func parseChallenges(s string, out []Challenge) []Challenge {
	p := &hparser{s: s}
	for len(out) < maxChallenges {
		p.skipSeps()
		if p.eof() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++
			p.skipToComma()
			continue
		}
		ch := Challenge{Scheme: strings.ToLower(scheme), Params: map[string]string{}}
		if !p.eof() && p.s[p.i] != ' ' && p.s[p.i] != '\t' && p.s[p.i] != ',' {
			// The scheme runs into something else: malformed.
			p.skipToComma()
			continue
		}
		p.skipSpace()
		if t, ok := p.token68(); ok {
			ch.Token68 = t
			out = append(out, ch)
			continue
		}
		for {
			name, value, ok := p.param()
			if !ok {
				break
			}
			if _, dup := ch.Params[name]; !dup && len(ch.Params) < maxChallengeParams {
				ch.Params[name] = value
			}
			p.skipSpace()
			if !p.eof() && p.s[p.i] != ',' {
				p.skipToComma() // junk after the value
			}
			if p.eof() {
				break
			}
			// A comma: the next parameter, or the next challenge.
			p.skipSeps()
		}
		out = append(out, ch)
	}
	return out
}

// authParams are the parameters of the 401 or 403 this client acts on,
// from the Bearer or DPoP challenge (the first one naming a
// resource_metadata, else the first of either scheme).
type authParams struct {
	resourceMetadata string
	scope            string
	err              string
	scheme           string
}

func challengeParams(chs []Challenge) authParams {
	var pick *Challenge
	for i := range chs {
		c := &chs[i]
		if c.Scheme != "bearer" && c.Scheme != "dpop" {
			continue
		}
		if pick == nil || (pick.Param("resource_metadata") == "" && c.Param("resource_metadata") != "") {
			pick = c
		}
	}
	if pick == nil {
		return authParams{}
	}
	ap := authParams{
		resourceMetadata: pick.Param("resource_metadata"),
		scope:            pick.Param("scope"),
		err:              pick.Param("error"),
		scheme:           pick.Scheme,
	}
	// The error may be on another challenge (a DPoP nonce beside a Bearer
	// one, say).
	if ap.err == "" {
		for _, c := range chs {
			if e := c.Param("error"); e != "" && (c.Scheme == "bearer" || c.Scheme == "dpop") {
				ap.err, ap.scheme = e, c.Scheme
				break
			}
		}
	}
	return ap
}
