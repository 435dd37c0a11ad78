package main

import (
	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/transport"
	"github.com/toolwire/toolwire/transport/streamable"
)

// limitOptions turns the config's limits section into the options that
// enforce it: the MCP endpoint's (handler and server) and the gateway's.
// Zero fields pass zero, which each option reads as its default.
func limitOptions(l config.Limits) ([]streamable.HandlerOption, []streamable.ServerOption, []gateway.Option) {
	h := []streamable.HandlerOption{
		streamable.WithMaxBodyBytes(int64(l.MaxBody)),
		streamable.WithMaxInFlight(l.MaxInFlight),
		streamable.WithAnonymousShare(int64(l.AnonymousMemory)),
		streamable.WithAddressShare(int64(l.AddressMemory)),
		streamable.WithMinBodyRate(int64(l.MinBodyRate), l.BodyGrace),
		streamable.WithMaxSessions(l.Sessions.Max),
		streamable.WithMaxSessionsPerPrincipal(l.Sessions.PerCaller),
		streamable.WithMaxAnonymousSessions(l.Sessions.Anonymous),
		streamable.WithSessionIdleTimeout(l.Sessions.IdleTimeout),
		streamable.WithUnusedSessionTimeout(l.Sessions.UnusedTimeout),
	}
	if l.Memory > 0 {
		h = append(h, streamable.WithMemoryBudget(transport.NewMemoryBudget(int64(l.Memory))))
	}
	s := []streamable.ServerOption{streamable.WithMaxConns(l.MaxConns)}
	g := []gateway.Option{gateway.WithInputLimits(l.Inputs), gateway.WithListLimits(l.UpstreamLists)}
	return h, s, g
}
