package server

import (
	"bytes"
	"container/list"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
	"github.com/toolwire/toolwire/internal/wirejson"
	"github.com/toolwire/toolwire/jsonrpc"
	"github.com/toolwire/toolwire/mcp"
)

// Limits of 2026-07-28 multi round-trip requests; each has an option.
const (
	// DefaultInputStateTTL is how long a requestState stays valid.
	DefaultInputStateTTL = 10 * time.Minute
	// DefaultMaxInputRounds bounds the input_required rounds of one request.
	DefaultMaxInputRounds = 16
	// DefaultMaxInputStateBytes bounds a sealed requestState; the answers
	// of earlier rounds travel in it.
	DefaultMaxInputStateBytes = 256 << 10
	// DefaultInputReplayMemory is how many used requestStates the server
	// remembers to refuse their replay.
	DefaultInputReplayMemory = 100_000
)

// inputConfig is the server's multi round-trip configuration.
type inputConfig struct {
	key       []byte
	ttl       time.Duration
	maxRounds int
	maxBytes  int
	memory    int
	once      sync.Once
	aead      cipher.AEAD
	aeadErr   error
	replay    *replayGuard
}

func (c *inputConfig) defaults() {
	limits.Default(&c.ttl, DefaultInputStateTTL)
	limits.Default(&c.maxRounds, DefaultMaxInputRounds)
	limits.Default(&c.maxBytes, DefaultMaxInputStateBytes)
	limits.Default(&c.memory, DefaultInputReplayMemory)
}

// cipher returns the AEAD sealing request states, made on first use from
// the configured key or a random one.
func (c *inputConfig) cipher() (cipher.AEAD, error) {
	c.once.Do(func() {
		c.defaults()
		key := c.key
		if key == nil {
			key = make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				c.aeadErr = err
				return
			}
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			c.aeadErr = err
			return
		}
		c.aead, c.aeadErr = cipher.NewGCM(block)
		c.replay = newReplayGuard(c.memory)
	})
	return c.aead, c.aeadErr
}

// WithInputStateKey sets the 32-byte key that seals requestState (AES-256-GCM:
// the client can neither read nor alter it). Servers behind one endpoint
// that may each receive a retry must share it; by default each server
// makes a random key, so a state is good only where it was made. A key of
// another length is ignored (the random default stays).
func WithInputStateKey(key []byte) Option {
	return serverOption(func(c *config) {
		if len(key) == 32 {
			c.input.key = bytes.Clone(key)
		}
	})
}

// inputState is what a requestState carries, sealed.
type inputState struct {
	ID      string                     `json:"id"` // single use
	Binding string                     `json:"b"`  // the request it belongs to
	Expires int64                      `json:"x"`  // unix milliseconds
	Round   int                        `json:"r"`
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	Pending []string                   `json:"p"`
}

const stateVersion = 1

var stateAAD = []byte("toolwire requestState v1")

// sealState makes the requestState of an input_required result.
func (s *Server) sealState(c *call, answers map[string]json.RawMessage, pending map[string]mcp.InputRequest, round int) (string, error) {
	aead, err := s.cfg.input.cipher()
	if err != nil {
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot seal requestState: %v", err)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot seal requestState: %v", err)
	}
	keys := make([]string, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	st := inputState{ID: base64.RawURLEncoding.EncodeToString(id), Binding: bindingOf(c),
		Expires: time.Now().Add(s.cfg.input.ttl).UnixMilli(), Round: round, Answers: answers, Pending: keys}
	plain, err := json.Marshal(st)
	if err != nil {
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot seal requestState: %v", err)
	}
	nonce := make([]byte, aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "cannot seal requestState: %v", err)
	}
	out := append([]byte{stateVersion}, nonce...)
	out = aead.Seal(out, nonce, plain, stateAAD)
	enc := base64.RawURLEncoding.EncodeToString(out)
	if len(enc) > s.cfg.input.maxBytes {
		return "", jsonrpc.NewError(jsonrpc.CodeInternalError, "the answers gathered by %s need a requestState of %d bytes, over the limit of %d", c.Method, len(enc), s.cfg.input.maxBytes)
	}
	return enc, nil
}

// Errors a requestState is refused with.
var (
	errStateMalformed = errors.New("is not a state this server issued (malformed or altered)")
	errStateExpired   = errors.New("has expired: start the request again without it")
	errStateOther     = errors.New("belongs to another request (method, name, arguments or caller differ)")
	errStateReplayed  = errors.New("was already used: each requestState is accepted once")
)

// openState checks and opens a requestState: sealed by this server's key,
// for this request, unexpired, and never used before.
func (s *Server) openState(c *call, enc string) (*inputState, error) {
	aead, err := s.cfg.input.cipher()
	if err != nil {
		return nil, err
	}
	if len(enc) > s.cfg.input.maxBytes {
		return nil, errStateMalformed
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) < 1+aead.NonceSize()+aead.Overhead() || raw[0] != stateVersion {
		return nil, errStateMalformed
	}
	nonce, sealed := raw[1:1+aead.NonceSize()], raw[1+aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, stateAAD)
	if err != nil {
		return nil, errStateMalformed
	}
	var st inputState
	if err := wirejson.Unmarshal(plain, &st); err != nil {
		return nil, errStateMalformed
	}
	if st.Binding != bindingOf(c) {
		return nil, errStateOther
	}
	now := time.Now()
	if now.UnixMilli() > st.Expires {
		return nil, errStateExpired
	}
	if !s.cfg.input.replay.use(st.ID, time.UnixMilli(st.Expires), now) {
		return nil, errStateReplayed
	}
	return &st, nil
}

// bindingOf is a digest of what identifies a request across its rounds:
// the method, every params member but the input ones and _meta (the tool
// or prompt name and arguments, the resource URI), compacted, and the
// authenticated caller.
func bindingOf(c *call) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", c.Method, c.principal.Key())
	var members map[string]json.RawMessage
	if len(c.Params) > 0 && wirejson.Unmarshal(c.Params, &members) == nil {
		names := make([]string, 0, len(members))
		for n := range members {
			switch n {
			case "inputResponses", "requestState", "_meta":
				continue
			}
			names = append(names, n)
		}
		sort.Strings(names)
		var buf bytes.Buffer
		for _, n := range names {
			buf.Reset()
			if json.Compact(&buf, members[n]) != nil {
				buf.Write(members[n])
			}
			fmt.Fprintf(h, "%q:%d:", n, buf.Len())
			h.Write(buf.Bytes())
		}
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// replayGuard remembers used state ids until they expire, at most max of
// them (the oldest forgotten first).
type replayGuard struct {
	mu    sync.Mutex
	max   int
	seen  map[string]*list.Element
	order *list.List // of replayEntry, oldest first
}

type replayEntry struct {
	id      string
	expires time.Time
}

func newReplayGuard(max int) *replayGuard {
	return &replayGuard{max: max, seen: map[string]*list.Element{}, order: list.New()}
}

// use records id as used and reports whether it was unused.
func (g *replayGuard) use(id string, expires, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for e := g.order.Front(); e != nil; e = g.order.Front() {
		re := e.Value.(replayEntry)
		if re.expires.After(now) && g.order.Len() < g.max {
			break
		}
		g.order.Remove(e)
		delete(g.seen, re.id)
	}
	if _, dup := g.seen[id]; dup {
		return false
	}
	g.seen[id] = g.order.PushBack(replayEntry{id, expires})
	return true
}
