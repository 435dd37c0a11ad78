package config

import (
	"strings"
	"testing"
)

// TestStore: store.redis decodes with its default prefix and variables;
// every mistake is reported at its line and column, the URL's password
// never in the message.
func TestStore(t *testing.T) {
	f, err := Parse([]byte("store:\n  redis:\n    url: ${REDIS_URL}\n"), "g.yaml", env(map[string]string{"REDIS_URL": "redis://:hunter2@cache:6379/1"}))
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Store.Redis; r == nil || r.URL != "redis://:hunter2@cache:6379/1" || r.Prefix != DefaultRedisPrefix {
		t.Fatalf("store.redis: %+v", f.Store.Redis)
	}
	if f, err := Parse([]byte("store: {memory: {}}\n"), "g.yaml", env(nil)); err != nil || f.Store.Redis != nil {
		t.Fatalf("store.memory: %+v, %v", f.Store, err)
	}
	for _, c := range []struct{ src, want string }{
		{"store:\n  redis: {prefix: x}\n", "g.yaml:2:10: store.redis: url is required"},
		{"store:\n  redis: {url: \"http://:hunter2@h/\"}\n", `g.yaml:2:16: store.redis.url: scheme "http"; want redis or rediss`},
		{"store:\n  redis: {url: \"redis://\"}\n", "g.yaml:2:16: store.redis.url: not a URL with a host"},
		{"store:\n  redis: {url: \"redis://h\", prefix: \"\"}\n", "g.yaml:2:37: store.redis.prefix: 0 bytes; want 1 to 64"},
		{"store:\n  redis: {url: \"redis://h\", db: 2}\n", `g.yaml:2:29: unknown key "db" in store.redis`},
		{"store:\n  etcd: {}\n", `g.yaml:2:3: unknown key "etcd" in store`},
		{"store: redis\n", "g.yaml:1:8: store: want a mapping"},
	} {
		_, err := Parse([]byte(c.src), "g.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the password is in the error: %v", c.src, err)
		}
	}
}
