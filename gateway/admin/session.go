package admin

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// session is one login. The map holding it is keyed by the SHA-256 of the
// cookie's value, so a lookup's timing says nothing about stored ids and a
// memory dump holds no usable cookie.
type session struct {
	created, expires time.Time
	csrf             string // the token the session's forms carry
}

// sessions is the bounded set of live logins.
type sessions struct {
	mu     sync.Mutex
	m      map[[sha256.Size]byte]*session
	max    int
	life   time.Duration
	secret []byte // keys the CSRF tokens; random per handler
}

func newSessions(max int, life time.Duration) *sessions {
	return &sessions{m: map[[sha256.Size]byte]*session{}, max: max, life: life, secret: randomBytes(32)}
}

// randomBytes returns n bytes from crypto/rand (which never fails on the
// platforms Go supports).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// randomID returns 256 random bits in unpadded base64url.
func randomID() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) }

// create starts a session at now and returns its id (256 random bits,
// base64url) and the session. When the set is full it first drops expired
// sessions, then the oldest one.
func (s *sessions) create(now time.Time) (string, *session) {
	id := randomID()
	sess := &session{created: now, expires: now.Add(s.life), csrf: s.token("session", id)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		var oldestKey [sha256.Size]byte
		var oldest *session
		for k, v := range s.m {
			if !now.Before(v.expires) {
				delete(s.m, k)
				continue
			}
			if oldest == nil || v.created.Before(oldest.created) {
				oldestKey, oldest = k, v
			}
		}
		if len(s.m) >= s.max && oldest != nil {
			delete(s.m, oldestKey)
		}
	}
	s.m[sha256.Sum256([]byte(id))] = sess
	return id, sess
}

// get returns the live session with id, or nil (dropping it if expired).
func (s *sessions) get(id string, now time.Time) *session {
	if id == "" {
		return nil
	}
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[k]
	if sess != nil && !now.Before(sess.expires) {
		delete(s.m, k)
		return nil
	}
	return sess
}

// remove ends the session with id, if any.
func (s *sessions) remove(id string) {
	s.mu.Lock()
	delete(s.m, sha256.Sum256([]byte(id)))
	s.mu.Unlock()
}

// len is the number of sessions held, live or not yet dropped.
func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// token derives a CSRF token for a purpose from a value the browser holds in
// a cookie: a cross-site page can neither read the cookie nor compute the
// token without the handler's secret.
func (s *sessions) token(purpose, value string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// tokenOK compares a presented token with the expected one in constant time.
func tokenOK(presented, want string) bool {
	return presented != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(want)) == 1
}

// maxLimited bounds the clients whose failed logins are tracked; past it,
// clients not yet tracked share one limiter, so a flood of addresses cannot
// grow memory or reset anyone's limit.
const maxLimited = 10000

// loginLimits limits failed logins per client.
type loginLimits struct {
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	every rate.Limit
	burst int
}

func newLoginLimits(burst int, every time.Duration) *loginLimits {
	return &loginLimits{m: map[string]*rate.Limiter{}, every: rate.Every(every), burst: burst}
}

// limiterLocked returns the client's limiter, making it if needed; l.mu
// is held.
func (l *loginLimits) limiterLocked(client string, now time.Time) *rate.Limiter {
	if lim, ok := l.m[client]; ok {
		return lim
	}
	if len(l.m) >= maxLimited {
		// Forget the clients back at a full bucket: they are as good as new.
		for k, lim := range l.m {
			if lim.TokensAt(now) >= float64(l.burst) {
				delete(l.m, k)
			}
		}
		if len(l.m) >= maxLimited {
			client = "overflow"
			if lim, ok := l.m[client]; ok {
				return lim
			}
		}
	}
	lim := rate.NewLimiter(l.every, l.burst)
	l.m[client] = lim
	return lim
}

// take spends one of client's failed logins at now, before its key is
// checked, so that parallel attempts cannot all be checked before any is
// counted; false when none is left. refund gives the login back when the
// attempt turns out not to be a failed one (the right key, a form that
// could not be read).
func (l *loginLimits) take(client string, now time.Time) (refund func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.limiterLocked(client, now)
	if lim.TokensAt(now) < 1 {
		return nil, false
	}
	r := lim.ReserveN(now, 1) // a token is there: it acts at now
	return func() { r.CancelAt(now) }, true
}
