package auth

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"
)

// tokenCache remembers what a verifier decided about a token, keyed by the
// token's SHA-256 (never the token itself), each answer until its own
// expiry, at most size answers (least recently used dropped first).
type tokenCache struct {
	size int

	mu  sync.Mutex
	m   map[[32]byte]*list.Element
	lru *list.List // of *cacheEntry, most recent first
}

type cacheEntry struct {
	key     [32]byte
	p       *Principal // nil: inactive or refused
	err     error
	expires time.Time
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{size: size, m: map[[32]byte]*list.Element{}, lru: list.New()}
}

func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// get returns a copy of the answer cached for key, if it has not expired.
func (c *tokenCache) get(key [32]byte, now time.Time) (*Principal, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil, nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.lru.Remove(el)
		delete(c.m, key)
		return nil, nil, false
	}
	c.lru.MoveToFront(el)
	return clonePrincipal(e.p), e.err, true
}

// put keeps a copy of p (or err) for key until expires.
func (c *tokenCache) put(key [32]byte, p *Principal, err error, expires time.Time) {
	if c.size <= 0 {
		return
	}
	e := &cacheEntry{key: key, p: clonePrincipal(p), err: err, expires: expires}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.m[key] = c.lru.PushFront(e)
	for c.lru.Len() > c.size {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*cacheEntry).key)
	}
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
