// Package redisstore keeps toolwire's shared state in Redis, so that several
// replicas of a server or gateway behind one load balancer share their
// sessions' state: any replica can serve any request of a session.
//
// Open connects (Client: per-operation timeouts and a health view, so that
// a replica refuses new sessions while Redis is down and knows when it is
// back). On a Client:
//
//   - SessionStore: streamable.SessionStore, the 2025-era sessions' records
//     (owner, revision, negotiated state), one round trip per request;
//   - EventStore: streamable.EventStore, so that a client can resume a
//     dropped SSE stream on any replica;
//   - Limiter: the gateway's rate limits as token buckets every replica
//     shares, one round trip per call, falling back to per-replica buckets
//     while Redis is unavailable.
//
// Every key the package writes starts with the client's prefix (WithPrefix)
// and expires: abandoned sessions and idle buckets vanish on their own. The
// whole store is bounded by Redis's own maxmemory; with a maxmemory-policy
// other than noeviction, Redis may evict a session's keys early, which its
// clients see as a session or stream that is gone.
package redisstore
