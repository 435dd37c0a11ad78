package limits_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// Overlay takes the fields given (negative ones included) and keeps the
// others, including those an earlier Overlay set.
func TestOverlayKeepsZeroFields(t *testing.T) {
	type lims struct {
		Bytes int
		Wait  time.Duration
		Rate  float64
	}
	l := lims{Bytes: 10, Wait: time.Second, Rate: 1.5}
	limits.Overlay(&l, lims{Bytes: -1})
	limits.Overlay(&l, lims{Wait: 2 * time.Second})
	if want := (lims{Bytes: -1, Wait: 2 * time.Second, Rate: 1.5}); l != want {
		t.Fatalf("after two overlays: %+v, want %+v", l, want)
	}
}
