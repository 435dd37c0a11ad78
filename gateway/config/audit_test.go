package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAudit(t *testing.T) {
	for _, c := range []struct {
		src  string
		want Audit
	}{
		{"audit:\n", defaultAudit()},
		{"audit:\n  store: off\n", Audit{Store: "off", Fsync: false, Retention: DefaultAuditRetention, Redact: DefaultAuditRedact(), MaxValueBytes: 1024, HeadLogInterval: time.Minute}},
		{"audit:\n  store: sqlite\n  fsync: false\n  retention: 1d12h\n  redact: [Password, api_key]\n  max_value_bytes: 4KiB\n  head_log_interval: off\n",
			Audit{Store: "sqlite", Retention: 36 * time.Hour, Redact: []string{"Password", "api_key"}, MaxValueBytes: 4096}},
		{"audit:\n  store: postgres\n  postgres: ${DSN}\n  delivery: async\n  key_file: /etc/tw/audit.key\n",
			Audit{Store: "postgres", Postgres: "postgres://u:pw@h/db", Async: true, QueueSize: 10000, Retention: DefaultAuditRetention, Redact: DefaultAuditRedact(), MaxValueBytes: 1024,
				KeyFile: "/etc/tw/audit.key", HeadLogInterval: time.Minute}},
		{"audit:\n  delivery: async\n  queue_size: 5\n  fsync: \"${FSYNC}\"\n  retention: off\n  max_value_bytes: off\n  head_log_interval: 10m\n",
			Audit{Store: "sqlite", Async: true, QueueSize: 5, Fsync: true, Redact: DefaultAuditRedact(), MaxValueBytes: -1, HeadLogInterval: 10 * time.Minute}},
		{"audit:\n  delivery: sync\n  retention: 30m\n  max_value_bytes: 1\n  key_file: keys/audit.key\n",
			Audit{Store: "sqlite", Retention: 30 * time.Minute, Redact: DefaultAuditRedact(), MaxValueBytes: 1, KeyFile: "keys/audit.key", HeadLogInterval: time.Minute}},
	} {
		f, err := Parse([]byte(c.src), "g.yaml", env(map[string]string{"DSN": "postgres://u:pw@h/db", "FSYNC": "true"}))
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if diff := cmp.Diff(c.want, f.Audit); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.src, diff)
		}
		if err := Validate(f); err != nil {
			t.Errorf("%q: Validate: %v", c.src, err)
		}
	}
	// The default list is a fresh copy each time.
	DefaultAuditRedact()[0] = "x"
	if DefaultAuditRedact()[0] != "password" {
		t.Error("DefaultAuditRedact shares its list")
	}
}

func TestAuditErrors(t *testing.T) {
	const dsn = "postgres://tw:hunter2@db/tw"
	lookup := env(map[string]string{"DSN": dsn})
	for _, c := range []struct{ src, want string }{
		{"audit:\n  store: mysql\n", `g.yaml:2:10: audit: store: "mysql" is not sqlite, postgres or off`},
		{"audit:\n  store: postgres\n", `g.yaml:2:3: audit: store postgres needs postgres: the connection string (like "${DATABASE_URL}")`},
		{"audit:\n  postgres: ${DSN}\n", `g.yaml:2:3: audit: postgres applies to store: postgres only`},
		{"audit:\n  store: postgres\n  postgres: ''\n", `g.yaml:3:13: audit: postgres: empty`},
		{"audit:\n  store: postgres\n  postgres: ${DSN}\n  fsync: true\n", `g.yaml:4:3: audit: fsync applies to store: sqlite only`},
		{"audit:\n  delivery: later\n", `g.yaml:2:13: audit: delivery: "later" is neither sync nor async`},
		{"audit:\n  queue_size: 10\n", `g.yaml:2:3: audit: queue_size applies to delivery: async only`},
		{"audit:\n  delivery: async\n  queue_size: 0\n", `g.yaml:3:15: audit: queue_size: 0 is not from 1 to 10000000`},
		{"audit:\n  delivery: async\n  queue_size: -5\n", `g.yaml:3:15: audit: queue_size: -5 is not from 1 to 10000000`},
		{"audit:\n  delivery: async\n  queue_size: 1e9\n", `g.yaml:3:15: audit: queue_size: "1e9" is not a whole number`},
		{"audit:\n  fsync: 1\n", `g.yaml:2:10: audit: fsync: "1" is neither true nor false`},
		{"audit:\n  retention: 0d\n", `g.yaml:2:14: audit: retention: 0s is not more than zero (write off to keep records forever)`},
		{"audit:\n  retention: 90 days\n", `g.yaml:2:14: audit: retention: "90 days" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"audit:\n  retention: 100000d\n", `g.yaml:2:14: audit: retention: "100000d" is more than 36500d`},
		{"audit:\n  redact: [token, TOKEN]\n", `g.yaml:2:19: audit: redact: "TOKEN" listed twice (first at 2:12; names match case-insensitively)`},
		{"audit:\n  redact: ['']\n", `g.yaml:2:12: audit: redact: an empty name`},
		{"audit:\n  redact: token\n", `g.yaml:2:11: audit: redact: want a list, not a string`},
		{"audit:\n  max_value_bytes: 2GiB\n", `g.yaml:2:20: audit: max_value_bytes: 2GiB is more than 1GiB`},
		{"audit:\n  max_value_bytes: 0\n", `g.yaml:2:20: audit: max_value_bytes: 0 is not more than zero`},
		{"audit:\n  max_value_bytes: -1\n", `g.yaml:2:20: audit: max_value_bytes: "-1" is not a size (like 16MiB, 512KiB or 1048576)`},
		{"audit:\n  stor: sqlite\n", `g.yaml:2:3: unknown key "stor" in audit (did you mean "store"?)`},
		{"audit:\n  key_file: ''\n", `g.yaml:2:13: audit: key_file: want the path of a file`},
		{"audit:\n  store: off\n  key_file: k\n", `g.yaml:3:3: audit: key_file applies to store: sqlite or postgres only`},
		{"audit:\n  head_log_interval: 10ms\n", `g.yaml:2:22: audit: head_log_interval: 10ms is less than 1s (write off to log the head only at start and shutdown)`},
		{"audit:\n  head_log_interval: often\n", `g.yaml:2:22: audit: head_log_interval: "often" is not a duration (like 500ms, 30s, 36h or 90d)`},
		{"audit:\n  head_log_interval: 0s\n", `g.yaml:2:22: audit: head_log_interval: 0s is less than 1s (write off to log the head only at start and shutdown)`},
		{"audit: [sqlite]\n", `g.yaml:1:8: audit: want a mapping, not a list`},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", lookup)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password", c.src)
		}
	}
}
