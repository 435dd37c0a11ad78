package gateway

import (
	"slices"
	"strings"
)

// Route says where a name the gateway serves comes from.
type Route struct {
	Name     string // as served downstream
	Upstream string // the upstream's name
	Original string // as the upstream names it
}

// Tools lists the tools served now, sorted by downstream name, each with
// the upstream and the name it comes from.
func (g *Gateway) Tools() []Route { return routesOf(g.cat.Load().tools) }

// Prompts lists the prompts served now, like Tools.
func (g *Gateway) Prompts() []Route { return routesOf(g.cat.Load().prompts) }

func routesOf(m map[string]route) []Route {
	out := make([]Route, 0, len(m))
	for name, r := range m {
		out = append(out, Route{Name: name, Upstream: r.up.spec.Name, Original: r.name})
	}
	slices.SortFunc(out, func(a, b Route) int { return strings.Compare(a.Name, b.Name) })
	return out
}
