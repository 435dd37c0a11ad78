package daemon

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
		streamable.WithLimits(streamable.Limits{
			MaxBodyBytes:            int64(l.MaxBody),
			MaxInFlight:             l.MaxInFlight,
			MaxAnonymousBytes:       int64(l.AnonymousMemory),
			MaxAddressBytes:         int64(l.AddressMemory),
			MinBodyRate:             int64(l.MinBodyRate),
			BodyGrace:               l.BodyGrace,
			MaxSessions:             l.Sessions.Max,
			MaxSessionsPerPrincipal: l.Sessions.PerCaller,
			MaxAnonymousSessions:    l.Sessions.Anonymous,
			SessionIdleTimeout:      l.Sessions.IdleTimeout,
			UnusedSessionTimeout:    l.Sessions.UnusedTimeout,
		}),
	}
	if l.Memory > 0 {
		h = append(h, streamable.WithMemoryBudget(transport.NewMemoryBudget(int64(l.Memory))))
	}
	s := []streamable.ServerOption{streamable.WithLimits(streamable.Limits{MaxConns: l.MaxConns})}
	g := []gateway.Option{gateway.WithLimits(gateway.Limits{Inputs: l.Inputs, Lists: l.UpstreamLists, MaxExchangedTokens: l.MaxExchangedTokens})}
	return h, s, g
}
