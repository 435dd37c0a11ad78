package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/gateway"
	"github.com/toolwire/toolwire/gateway/config"
	"github.com/toolwire/toolwire/gateway/policy"
	"github.com/toolwire/toolwire/internal/datadir"
)

// maxSettleReads bounds the reads of a file that keeps changing: a reload
// gives up after them, and the next change or SIGHUP tries again.
const maxSettleReads = 20

// LoadConfig reads the gateway config file at path and decodes it, paths
// in it relative to the file's directory, as a reload reads it again; data
// is the content read (for Reload.Data). A file larger than
// config.DefaultMaxSize is refused.
func LoadConfig(path string) (file *config.File, data []byte, err error) {
	if data, err = readConfigFile(path); err != nil {
		return nil, nil, err
	}
	if file, err = parseConfig(path, data); err != nil {
		return nil, nil, err
	}
	return file, data, nil
}

// parseConfig decodes the content of the config file at path, relative
// paths in it relative to the file's directory.
func parseConfig(path string, data []byte) (*config.File, error) {
	return config.Parse(data, path, config.WithBaseDir(filepath.Dir(path)))
}

// newReloader is the reloader of r for g: the config it starts from is
// r.Data's, or the file's as read now.
func newReloader(r Reload, g *gateway.Gateway, shared *datadir.Shared, logger *slog.Logger) (*reloader, error) {
	data := r.Data
	if data == nil {
		var err error
		if data, err = readConfigFile(r.Path); err != nil {
			return nil, err
		}
	}
	loaded, err := parseConfig(r.Path, data)
	if err != nil {
		return nil, err
	}
	settle := r.Settle
	if settle <= 0 {
		settle = DefaultReloadSettle
	}
	return &reloader{path: r.Path, settle: settle, g: g, started: loaded, applied: loaded,
		seen: sha256.Sum256(data), shared: shared, logger: logger}, nil
}

// reloader reloads the config file on SIGHUP and when its content
// changes. It applies a file only once it has stopped changing (two reads
// settle apart agree: a file caught in the middle of a write is never
// applied) and only whole (parsed and validated; an invalid or empty file
// is logged and the running config stays), then logs what changed.
type reloader struct {
	path    string
	settle  time.Duration
	g       *gateway.Gateway
	started *config.File // as loaded at start: what only a restart changes
	applied *config.File // the config last applied
	seen    [sha256.Size]byte
	shared  *datadir.Shared
	logger  *slog.Logger
}

// run reloads on SIGHUP, and when the file's content differs from the
// last one tried (read every interval; 0: only on SIGHUP), until stop.
func (w *reloader) run(ctx context.Context, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		context.AfterFunc(ctx, t.Stop)
		tick = t.C
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				w.reload(ctx, "SIGHUP")
			case <-tick:
				// A file that cannot be read (being replaced) is tried
				// again at the next tick.
				data, err := readConfigFile(w.path)
				switch {
				case err != nil:
				case sha256.Sum256(data) != w.seen:
					w.reload(ctx, "file changed")
				default:
					w.logger.Debug("gateway: config file unchanged", "config", w.path)
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// reload reads the file once it has settled and applies it.
func (w *reloader) reload(ctx context.Context, why string) {
	data, err := settledRead(ctx, w.path, w.settle)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		// Not remembered as tried: the next tick reads it again.
		w.logger.Error("gateway: reload refused; the running config stays", "config", w.path, "cause", why, "error", err)
		return
	}
	// Tried, valid or not: an invalid file is not retried until it changes.
	w.seen = sha256.Sum256(data)
	file, err := parseConfig(w.path, data)
	if err == nil {
		err = shareLimits(w.shared, file)
	}
	if err == nil {
		err = w.g.Reload(file.Gateway)
	}
	if err != nil {
		w.logger.Error("gateway: reload refused; the running config stays", "config", w.path, "cause", why, "error", err)
		return
	}
	attrs := append([]any{"config", w.path, "cause", why, "upstreams", len(file.Gateway.Upstreams)}, configChanges(w.applied, file)...)
	w.logger.Info("gateway: config reloaded", attrs...)
	w.applied = file
	if keys := restartOnly(w.started, file); len(keys) > 0 {
		w.logger.Warn("gateway: these settings changed and take effect only on a restart", "keys", strings.Join(keys, ", "))
	}
}

// settledRead reads path until two reads settle apart agree and returns
// that content: a writer still at work changes it in between. It gives up
// after maxSettleReads reads of a file that keeps changing.
func settledRead(ctx context.Context, path string, settle time.Duration) ([]byte, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(settle)
	defer t.Stop()
	for range maxSettleReads {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		again, err := readConfigFile(path)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(data, again) {
			return data, nil
		}
		data = again
		t.Reset(settle)
	}
	return nil, fmt.Errorf("the file kept changing for %d reads %v apart; it is read again on its next change or SIGHUP", maxSettleReads, settle)
}

// configChanges are the log attributes naming what next changes from
// prev: upstreams, personas and API keys added, removed or changed, by
// name only (never a key's hash or a header's value); personas whose
// order changed (the first that matches decides).
func configChanges(prev, next *config.File) []any {
	var attrs []any
	add := func(key string, names []string) {
		if len(names) > 0 {
			attrs = append(attrs, key, strings.Join(names, ","))
		}
	}
	ups := func(f *config.File) (names []string, by map[string]gateway.Upstream) {
		by = map[string]gateway.Upstream{}
		for _, u := range f.Gateway.Upstreams {
			names, by[u.Name] = append(names, u.Name), u
		}
		return names, by
	}
	pn, pu := ups(prev)
	nn, nu := ups(next)
	added, removed, changed := diffNames(pn, nn, func(n string) bool { return sameUpstream(pu[n], nu[n]) })
	add("upstreams_added", added)
	add("upstreams_removed", removed)
	add("upstreams_changed", changed)

	personas := func(f *config.File) (names []string, by map[string]policy.Persona) {
		by = map[string]policy.Persona{}
		for _, p := range f.Personas {
			names, by[p.Name] = append(names, p.Name), p
		}
		return names, by
	}
	pp, ppBy := personas(prev)
	np, npBy := personas(next)
	added, removed, changed = diffNames(pp, np, func(n string) bool { return reflect.DeepEqual(ppBy[n], npBy[n]) })
	add("personas_added", added)
	add("personas_removed", removed)
	add("personas_changed", changed)
	var keptBefore, keptAfter []string
	for _, n := range pp {
		if _, ok := npBy[n]; ok {
			keptBefore = append(keptBefore, n)
		}
	}
	for _, n := range np {
		if _, ok := ppBy[n]; ok {
			keptAfter = append(keptAfter, n)
		}
	}
	if !slices.Equal(keptBefore, keptAfter) {
		add("personas_order", np)
	}

	added, removed, changed = diffNames(slices.Sorted(maps.Keys(prev.Auth.APIKeys)), slices.Sorted(maps.Keys(next.Auth.APIKeys)),
		func(n string) bool { return prev.Auth.APIKeys[n] == next.Auth.APIKeys[n] })
	add("api_keys_added", added)
	add("api_keys_removed", removed)
	add("api_keys_changed", changed)
	return attrs
}

// diffNames says which of next's names are not in prev (added), which of
// prev's are not in next (removed), and which are in both but not same.
func diffNames(prev, next []string, same func(string) bool) (added, removed, changed []string) {
	in := func(list []string, n string) bool { return slices.Contains(list, n) }
	for _, n := range next {
		switch {
		case !in(prev, n):
			added = append(added, n)
		case !same(n):
			changed = append(changed, n)
		}
	}
	for _, n := range prev {
		if !in(next, n) {
			removed = append(removed, n)
		}
	}
	return added, removed, changed
}

// sameUpstream reports whether two upstream specs are alike: every field
// equal, the authorizer and in-process server the same ones.
func sameUpstream(a, b gateway.Upstream) bool {
	sameAuth := a.Auth == nil && b.Auth == nil
	if a.Auth != nil && b.Auth != nil && reflect.TypeOf(a.Auth).Comparable() && reflect.TypeOf(a.Auth) == reflect.TypeOf(b.Auth) {
		sameAuth = a.Auth == b.Auth
	}
	sameServer := a.Server == b.Server
	a.Auth, b.Auth, a.Server, b.Server = nil, nil, nil, nil
	return sameAuth && sameServer && reflect.DeepEqual(a, b)
}

// readConfigFile reads path, at most one byte past the largest config
// file accepted (config.Parse refuses a longer one).
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, config.DefaultMaxSize+1))
}

// restartOnly names the settings that differ between the running config
// and a reloaded one but are applied only at start: listeners, data_dir,
// public_url, auth, audit and admin. (Upstreams, naming, personas, rate
// limits and enrichment are reloaded.)
func restartOnly(running, next *config.File) []string {
	var keys []string
	for _, c := range []struct {
		key  string
		same bool
	}{
		{"listen", running.Listen == next.Listen},
		{"admin_listen", running.AdminListen == next.AdminListen},
		{"otc_listen", running.OTCListen == next.OTCListen},
		{"allowed_hosts", slices.Equal(running.AllowedHosts, next.AllowedHosts)},
		{"data_dir", running.DataDir == next.DataDir},
		{"public_url", running.PublicURL == next.PublicURL},
		{"auth", reflect.DeepEqual(running.Auth, next.Auth)},
		{"audit", reflect.DeepEqual(running.Audit, next.Audit)},
		{"admin", running.Admin == next.Admin},
		{"store", reflect.DeepEqual(running.Store, next.Store)},
		{"limits", running.Limits == next.Limits},
	} {
		if !c.same {
			keys = append(keys, c.key)
		}
	}
	return keys
}
