package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
)

// printUpstreamOverrides says, for --check, which upstreams are called as
// each caller (token exchange: where, for which audience, and what a
// caller without an OAuth token gets) and which tools the config
// overrides (title, description, pinned arguments with their values).
// Secrets are never printed.
func printUpstreamOverrides(w io.Writer, file *config.File) {
	if file == nil {
		return
	}
	for _, u := range file.Gateway.Upstreams {
		if x := u.TokenExchange; x != nil {
			where := x.TokenEndpoint
			if where == "" {
				where = "the token endpoint of " + x.Issuer
			}
			target := "resource " + u.URL
			switch {
			case x.Audience != "" && x.Resource != "":
				target = "audience " + x.Audience + ", resource " + x.Resource
			case x.Audience != "":
				target = "audience " + x.Audience
			case x.Resource != "":
				target = "resource " + x.Resource
			}
			if len(x.Scopes) > 0 {
				target += ", scopes " + strings.Join(x.Scopes, " ")
			}
			others := "refused"
			if x.OnAPIKey == gateway.APIKeyStatic {
				others = "served with the upstream's own credentials"
			}
			fmt.Fprintf(w, "upstream %s: calls as each caller, its token exchanged at %s as client %s (%s); callers without an OAuth token %s\n",
				u.Name, where, x.ClientID, target, others)
		}
		for _, name := range slices.Sorted(maps.Keys(u.Tools)) {
			o := u.Tools[name]
			var what []string
			if o.Title != "" {
				what = append(what, "title replaced")
			}
			if o.Description != "" {
				what = append(what, "description replaced")
			}
			if len(o.Pin) > 0 {
				var pins []string
				for _, arg := range slices.Sorted(maps.Keys(o.Pin)) {
					pins = append(pins, arg+"="+string(o.Pin[arg]))
				}
				what = append(what, "pinned "+strings.Join(pins, " "))
			}
			fmt.Fprintf(w, "upstream %s: tool %s: %s\n", u.Name, name, strings.Join(what, ", "))
		}
	}
}
