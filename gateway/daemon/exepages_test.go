package daemon_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/gateway/daemon"
	"github.com/toolwire/toolwire/internal/testwait"
)

// lockedBuffer is a log destination the daemon's goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveLogged runs file's gateway at debug level with opts until it
// serves, stops it, and returns its log.
func serveLogged(t *testing.T, opts ...daemon.Option) string {
	t.Helper()
	var log lockedBuffer
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan daemon.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, greeterFile(t), append([]daemon.Option{
			daemon.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			daemon.WithOnReady(func(a daemon.Addrs) { ready <- a })}, opts...)...)
	}()
	testwait.Recv(t, ready, "the daemon's listeners")
	cancel()
	if err := testwait.Recv(t, done, "Run's return"); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return log.String()
}

// Once serving, the daemon gives back the pages of its binary start-up
// touched, by default, and says so at debug level; the option keeps them.
func TestStartupPagesReleased(t *testing.T) {
	log := serveLogged(t)
	if strings.Contains(log, "start-up pages of the binary kept") {
		t.Skipf("this platform cannot give the pages back: %s", log)
	}
	if !strings.Contains(log, "gave back the start-up pages of the binary") {
		t.Fatalf("the default daemon did not give back its start-up pages; log:\n%s", log)
	}
	log = serveLogged(t, daemon.WithStartupPagesReleased(false))
	if strings.Contains(log, "start-up pages") {
		t.Errorf("WithStartupPagesReleased(false) still released the pages; log:\n%s", log)
	}
}
