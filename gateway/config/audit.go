package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/audit"
)

// Audit defaults.
const (
	DefaultAuditStore     = "sqlite"
	DefaultAuditRetention = 90 * 24 * time.Hour
	// DefaultAuditHeadLogInterval is how often the chain's head is logged
	// when it moved (audit.head_log_interval).
	DefaultAuditHeadLogInterval = time.Minute
	// MaxAuditQueue is the largest audit.queue_size.
	MaxAuditQueue = 10_000_000
	// MaxRedactKeys is the most audit.redact entries.
	MaxRedactKeys = 1024
)

// DefaultAuditRedact are the argument names redacted by default.
func DefaultAuditRedact() []string {
	return []string{"password", "token", "secret", "authorization"}
}

func defaultAudit() Audit {
	return Audit{
		Store:           DefaultAuditStore,
		Fsync:           false,
		Retention:       DefaultAuditRetention,
		Redact:          DefaultAuditRedact(),
		MaxValueBytes:   gateway.DefaultAuditMaxValue,
		HeadLogInterval: DefaultAuditHeadLogInterval,
	}
}

var auditKeys = []string{"store", "postgres", "delivery", "queue_size", "fsync", "retention", "redact", "max_value_bytes",
	"key_file", "head_log_interval"}

func (d *decoder) audit(n ast.Node, f *File) {
	f.Audit = defaultAudit()
	m, ok := d.Mapping(n, "audit")
	if !ok || m == nil {
		return
	}
	a := &f.Audit
	keys := map[string]ast.Node{}
	d.fields(m, "audit", auditKeys, func(key string, mv *ast.MappingValueNode) {
		keys[key] = mv.Key
		w := "audit: " + key
		v := mv.Value
		switch key {
		case "store":
			d.checked(v, w, checkAuditStore, &a.Store)
		case "postgres":
			// Never echo the value: a DSN holds a password.
			d.checked(v, w, checkDSN, &a.Postgres)
		case "delivery":
			if s, ok := d.str(v, w); ok {
				if s != "sync" && s != "async" {
					d.Errorf(v, "%s: %q is neither sync nor async", w, truncate(s))
				}
				a.Async = s == "async"
			}
		case "queue_size":
			if q, ok := d.integer(v, w, 1, MaxAuditQueue); ok {
				a.QueueSize = int(q)
			}
		case "fsync":
			if b, ok := d.boolean(v, w); ok {
				a.Fsync = b
			}
		case "retention":
			if t, _, ok := d.duration(v, w, true, func(t time.Duration) error {
				if t <= 0 {
					return fmt.Errorf("%v is not more than zero (write off to keep records forever)", t)
				}
				return nil
			}); ok {
				a.Retention = t
			}
		case "redact":
			list, nodes, _ := d.strList(v, w)
			a.Redact = []string{}
			seen := map[string]ast.Node{}
			for i, k := range list {
				if i == MaxRedactKeys {
					d.Errorf(nodes[i], "%s: more than %d names", w, MaxRedactKeys)
					break
				}
				if err := checkRedactKey(k); err != nil {
					d.Errorf(nodes[i], "%s: %v", w, err)
					continue
				}
				if l, c, dup := repeated(seen, strings.ToLower(k), nodes[i]); dup {
					d.Errorf(nodes[i], "%s: %q listed twice (first at %d:%d; names match case-insensitively)", w, k, l, c)
					continue
				}
				a.Redact = append(a.Redact, k)
			}
		case "key_file":
			if s, ok := d.str(v, w); ok {
				if strings.TrimSpace(s) == "" || strings.IndexByte(s, 0) >= 0 {
					d.Errorf(v, "%s: want the path of a file", w)
					return
				}
				if d.opts.baseSet && !filepath.IsAbs(s) {
					s = filepath.Join(d.opts.baseDir, s)
				}
				a.KeyFile = s
			}
		case "head_log_interval":
			if t, _, ok := d.duration(v, w, true, func(t time.Duration) error {
				if t < time.Second {
					return fmt.Errorf("%v is less than 1s (write off to log the head only at start and shutdown)", t)
				}
				return nil
			}); ok {
				a.HeadLogInterval = t
			}
		case "max_value_bytes":
			if s, ok := d.str(v, w); ok {
				if s == "off" {
					a.MaxValueBytes = -1
					return
				}
				if n, ok := d.size(v, w); ok {
					a.MaxValueBytes = n
				}
			}
		}
	})
	only := func(key, store string) {
		if k := keys[key]; k != nil && a.Store != store && checkAuditStore(a.Store) == nil {
			d.Errorf(k, "audit: %s applies to store: %s only", key, store)
		}
	}
	only("postgres", "postgres")
	only("fsync", "sqlite")
	if k := keys["key_file"]; k != nil && a.Store == "off" {
		d.Errorf(k, "audit: key_file applies to store: sqlite or postgres only")
	}
	if a.Store == "postgres" && keys["postgres"] == nil {
		d.Errorf(keys["store"], "audit: store postgres needs postgres: the connection string (like \"${DATABASE_URL}\")")
	}
	if k := keys["queue_size"]; k != nil && !a.Async {
		d.Errorf(k, "audit: queue_size applies to delivery: async only")
	}
	if a.Async && a.QueueSize == 0 {
		a.QueueSize = audit.DefaultQueueSize
	}
}

func checkAuditStore(s string) error {
	switch s {
	case "sqlite", "postgres", "off":
		return nil
	}
	return fmt.Errorf("%q is not sqlite, postgres or off", truncate(s))
}

// checkDSN checks a connection string without echoing it.
func checkDSN(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("empty")
	case strings.IndexByte(s, 0) >= 0:
		return errNUL
	}
	return nil
}

func checkRedactKey(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("an empty name")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return errNUL
	}
	return nil
}
