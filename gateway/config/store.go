package config

import (
	"net/url"

	"github.com/goccy/go-yaml/ast"
)

// Store is the store section: where replicas of one gateway share the
// state of 2025-era sessions, stream events, tasks and rate limits. The
// zero value keeps everything in this process's memory (one replica).
type Store struct {
	// Redis, when set, shares them through Redis (package redisstore).
	Redis *RedisStore
}

// RedisStore is store.redis.
type RedisStore struct {
	// URL is redis:// or rediss:// (write "${REDIS_URL}": it may hold a
	// password, and is never printed in an error).
	URL string
	// Prefix starts every key (default DefaultRedisPrefix), so that
	// several deployments can share one Redis.
	Prefix string
}

// DefaultRedisPrefix is store.redis.prefix's default.
const DefaultRedisPrefix = "toolwire:"

// MaxRedisPrefix is the longest store.redis.prefix.
const MaxRedisPrefix = 64

// store decodes the store section.
func (d *decoder) store(n ast.Node, f *File) {
	d.section(n, "store", storeKeys, func(key string, mv *ast.MappingValueNode) {
		switch key {
		case "memory":
			// The default, written out: nothing to configure.
			if _, ok := d.Mapping(mv.Value, "store.memory"); ok {
				f.Store.Redis = nil
			}
		case "redis":
			f.Store.Redis = d.redisStore(mv.Value)
		}
	})
}

// storeKeys and redisKeys are the keys of store and store.redis.
var storeKeys, redisKeys = []string{"memory", "redis"}, []string{"url", "prefix"}

func (d *decoder) redisStore(n ast.Node) *RedisStore {
	m, ok := d.Mapping(n, "store.redis")
	if !ok {
		return nil
	}
	r := &RedisStore{Prefix: DefaultRedisPrefix}
	var urlNode ast.Node
	d.fields(m, "store.redis", redisKeys, func(key string, mv *ast.MappingValueNode) {
		switch key {
		case "url":
			urlNode = mv.Value
			if s, ok := d.str(mv.Value, "store.redis.url"); ok {
				u, err := url.Parse(s)
				switch {
				case err != nil || u.Host == "":
					d.Errorf(mv.Value, "store.redis.url: not a URL with a host (redis://host:port/db)")
				case u.Scheme != "redis" && u.Scheme != "rediss":
					d.Errorf(mv.Value, "store.redis.url: scheme %q; want redis or rediss", u.Scheme)
				default:
					r.URL = s
				}
			}
		case "prefix":
			if s, ok := d.str(mv.Value, "store.redis.prefix"); ok {
				if s == "" || len(s) > MaxRedisPrefix {
					d.Errorf(mv.Value, "store.redis.prefix: %d bytes; want 1 to %d", len(s), MaxRedisPrefix)
				}
				r.Prefix = s
			}
		}
	})
	if urlNode == nil {
		d.Errorf(n, "store.redis: url is required")
	}
	return r
}
