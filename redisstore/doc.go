// Package redisstore keeps toolwire's shared state in Redis, so that several
// replicas of a server or gateway behind one load balancer share their
// sessions' state: any replica can serve any request of a session.
//
// This first part holds the connection (Open, Client: per-operation
// timeouts and a health view, so that a replica refuses new sessions while
// Redis is down) and an SSE event store (Client.EventStore, an
// implementation of streamable.EventStore) so that a client can resume a
// dropped stream on any replica.
//
// Every key the package writes starts with the client's prefix (WithPrefix)
// and expires (WithEventTTL): abandoned sessions vanish on their own. The
// whole store is bounded by Redis's own maxmemory; with a maxmemory-policy
// other than noeviction, Redis may evict a session's keys early, which its
// clients see as a stream they cannot resume.
package redisstore
