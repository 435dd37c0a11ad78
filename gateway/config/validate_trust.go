package config

import (
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/units"
)

// validateTrust checks the trust settings of a File as Validate does the
// rest: without positions. Zero values are the defaults (see Audit).
// Policy, Limits and Enrich were checked when they were built.
func validateTrust(f *File, add func(format string, args ...any)) {
	if f.PublicURL != "" {
		if err := checkPublicURL(f.PublicURL); err != nil {
			add("public_url: %v", err)
		}
	}
	hashes := map[string]string{}
	for _, name := range sortedKeys(f.Auth.APIKeys) {
		h := f.Auth.APIKeys[name]
		if err := checkKeyName(name); err != nil {
			add("auth: api_keys: %v", err)
		}
		if err := checkKeyHash(h); err != nil {
			add("auth: api_keys: %s: %v", name, err)
		} else if other, dup := hashes[h]; dup {
			add("auth: api_keys: %s: the same hash as %s", name, other)
		} else {
			hashes[h] = name
		}
	}
	if len(f.Auth.APIKeys) > MaxAPIKeys {
		add("auth: api_keys: more than %d keys", MaxAPIKeys)
	}
	if o := f.Auth.OAuth; o != nil {
		if err := checkSecureURL(o.Issuer); err != nil {
			add("auth: oauth: issuer: %v", err)
		}
		if o.JWKSURL != "" {
			if err := checkSecureURL(o.JWKSURL); err != nil {
				add("auth: oauth: jwks_url: %v", err)
			}
		}
		if o.Audience != "" {
			if err := checkPublicURL(o.Audience); err != nil {
				add("auth: oauth: audience: %v", err)
			}
		} else if f.PublicURL == "" {
			add("auth: oauth: no audience and no public_url")
		}
		for _, s := range o.Scopes {
			if err := checkScope(s); err != nil {
				add("auth: oauth: scopes: %v", err)
			}
		}
	}
	a := &f.Audit
	if a.Store != "" {
		if err := checkAuditStore(a.Store); err != nil {
			add("audit: store: %v", err)
		}
	}
	switch {
	case a.Store == "postgres":
		if err := checkDSN(a.Postgres); err != nil {
			add("audit: postgres: %v", err)
		}
	case a.Postgres != "":
		add("audit: postgres applies to store: postgres only")
	}
	if a.QueueSize < 0 || a.QueueSize > MaxAuditQueue {
		add("audit: queue_size: %d is not from 1 to %d", a.QueueSize, MaxAuditQueue)
	} else if a.QueueSize != 0 && !a.Async {
		add("audit: queue_size applies to delivery: async only")
	}
	if a.Retention < 0 || a.Retention > units.MaxDays*24*time.Hour {
		add("audit: retention: %v is not from 0 (forever) to %dd", a.Retention, units.MaxDays)
	}
	if len(a.Redact) > MaxRedactKeys {
		add("audit: redact: more than %d names", MaxRedactKeys)
	}
	seen := map[string]bool{}
	for _, k := range a.Redact {
		if err := checkRedactKey(k); err != nil {
			add("audit: redact: %v", err)
		}
		if seen[strings.ToLower(k)] {
			add("audit: redact: %q listed twice", k)
		}
		seen[strings.ToLower(k)] = true
	}
	if a.MaxValueBytes > MaxMessageSize {
		add("audit: max_value_bytes: %s is more than %s", units.FormatSize(int64(a.MaxValueBytes)), units.FormatSize(MaxMessageSize))
	}
	if h := f.Admin.KeyHash; h != "" {
		if err := checkKeyHash(h); err != nil {
			add("admin: key_hash: %v", err)
		} else if name, dup := hashes[h]; dup {
			add("admin: key_hash: the hash of API key %q: the admin key must be a key of its own", name)
		}
		if f.AdminListen == "" {
			add("admin: key_hash: the admin page is served on admin_listen, which is off")
		}
	}
	for _, u := range f.Gateway.Upstreams {
		if u.Auth != nil && u.URL == "" {
			add("upstream %q: auth applies to url upstreams only", u.Name)
		}
	}
}
