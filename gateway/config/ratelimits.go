package config

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/gateway/ratelimit"
)

var rateLimitKeys = []string{"identity", "persona", "tool", "identities", "personas", "tools", "max_buckets", "idle_ttl"}

// rateLimits decodes rate_limits into a limiter; f.Gateway.Limits stays
// a nil interface when nothing is limited.
func (d *decoder) rateLimits(n ast.Node, f *File) {
	m, ok := d.Mapping(n, "rate_limits")
	if !ok || m == nil {
		return
	}
	before := d.Count()
	var cfg ratelimit.Config
	limited := false
	set := func(l ratelimit.Limit) ratelimit.Limit {
		limited = limited || !l.Unlimited()
		return l
	}
	d.fields(m, "rate_limits", rateLimitKeys, func(key string, mv *ast.MappingValueNode) {
		w := "rate_limits: " + key
		v := mv.Value
		switch key {
		case "identity":
			cfg.Identity = set(d.limit(v, w))
		case "persona":
			cfg.Persona = set(d.limit(v, w))
		case "tool":
			cfg.Tool = set(d.limit(v, w))
		case "identities", "personas", "tools":
			lm, ok := d.Mapping(v, w)
			if !ok || lm == nil {
				return
			}
			out := map[string]ratelimit.Limit{}
			// A bare identity name limits both kinds of caller of that
			// name; a qualified one (api_key:NAME, oauth:NAME) wins over
			// it, whatever the order.
			var qualified [][2]any
			for _, ev := range lm.Values {
				k, ok := d.Key(ev.Key)
				if !ok {
					continue
				}
				if err := d.limitTarget(key, k, f); err != nil {
					d.Errorf(ev.Key, "%s: %v", w, err)
				}
				l := set(d.limit(ev.Value, w+": "+k))
				switch {
				case key != "identities" || k == string(policy.KindAnonymous):
					out[k] = l
				case strings.Contains(k, ":"):
					qualified = append(qualified, [2]any{k, l})
				default:
					out[string(policy.KindAPIKey)+":"+k] = l
					out[string(policy.KindOAuth)+":"+k] = l
				}
			}
			for _, q := range qualified {
				out[q[0].(string)] = q[1].(ratelimit.Limit)
			}
			switch key {
			case "identities":
				cfg.Identities = out
			case "personas":
				cfg.Personas = out
			default:
				cfg.Tools = out
			}
		case "max_buckets":
			if v, ok := d.integer(v, w, 1, MaxBuckets); ok {
				cfg.MaxBuckets = int(v)
			}
		case "idle_ttl":
			if t, _, ok := d.duration(v, w, false, func(t time.Duration) error {
				if t <= 0 || t > 7*24*time.Hour {
					return fmt.Errorf("%v is not more than zero and at most 7d", t)
				}
				return nil
			}); ok {
				cfg.IdleTTL = t
			}
		}
	})
	d.limits = &cfg
	if !limited {
		return
	}
	// limit checks what ratelimit.New does.
	if l, ok := built(d, before, n, "rate_limits", func() (*ratelimit.Limiter, error) { return ratelimit.New(cfg) }); ok {
		f.Gateway.Limits = l
		f.RateLimits = &cfg
	}
}

// limitTarget checks a key of rate_limits' identities, personas or
// tools.
func (d *decoder) limitTarget(section, k string, f *File) error {
	switch section {
	case "identities":
		if k == string(policy.KindAnonymous) {
			return nil
		}
		return checkIdentity(k, f.Auth.APIKeys)
	case "personas":
		if !d.personaNames[k] {
			names := make([]string, 0, len(d.personaNames))
			for n := range d.personaNames {
				names = append(names, n)
			}
			sort.Strings(names)
			have := "no persona is configured"
			if len(names) > 0 {
				have = "personas are " + strings.Join(names, ", ")
			}
			return fmt.Errorf("no persona %q; %s", truncate(k), have)
		}
	default:
		return checkToolName(k)
	}
	return nil
}

// limit decodes a rate limit: "off", a rate ("60/m", burst the rate per
// second rounded up, at least 1), or {rate: 60/m, burst: 10}.
func (d *decoder) limit(n ast.Node, what string) ratelimit.Limit {
	if m, ok := n.(*ast.MappingNode); ok {
		var l ratelimit.Limit
		var rateNode ast.Node
		burst := int64(0)
		d.fields(m, what, []string{"rate", "burst"}, func(key string, mv *ast.MappingValueNode) {
			if key == "rate" {
				rateNode = mv.Value
				if s, ok := d.str(mv.Value, what+": rate"); ok {
					if s == "off" {
						d.Errorf(mv.Value, "%s: rate: off takes no burst (write %s: off)", what, what)
						return
					}
					l.Rate, _ = d.rate(mv.Value, what+": rate", s)
				}
				return
			}
			burst, _ = d.integer(mv.Value, what+": burst", 1, MaxBurst)
		})
		if rateNode == nil {
			d.Errorf(n, "%s: no rate (like 60/m)", what)
			return ratelimit.Limit{}
		}
		if l.Rate == 0 {
			return ratelimit.Limit{}
		}
		l.Burst = int(burst)
		if burst == 0 {
			l.Burst = defaultBurst(l.Rate)
		}
		return l
	}
	s, ok := d.str(n, what)
	if !ok || s == "off" {
		return ratelimit.Limit{}
	}
	r, ok := d.rate(n, what, s)
	if !ok {
		return ratelimit.Limit{}
	}
	return ratelimit.Limit{Rate: r, Burst: defaultBurst(r)}
}

func (d *decoder) rate(n ast.Node, what, s string) (float64, bool) {
	r, err := ratelimit.ParseRate(s)
	if err == nil && (r > MaxRate || r < MinRate) {
		err = fmt.Errorf("rate %q is not from one call a day to %g a second", truncate(s), float64(MaxRate))
	}
	if err != nil {
		d.Errorf(n, "%s: %v", what, err)
		return 0, false
	}
	return r, true
}

// defaultBurst is the rate per second rounded up, at least 1.
func defaultBurst(perSecond float64) int {
	return int(min(max(1, math.Ceil(perSecond)), MaxBurst))
}
