package limits_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/limits"
)

// A zero value leaves what is there; any other, negative included,
// replaces it.
func TestSetKeepsOnZero(t *testing.T) {
	n := 5
	limits.Set(&n, 0)
	if n != 5 {
		t.Fatalf("zero replaced the value: %d", n)
	}
	limits.Set(&n, -1)
	if n != -1 {
		t.Fatalf("negative not stored: %d", n)
	}
	d := time.Second
	limits.Set(&d, 2*time.Second)
	if d != 2*time.Second {
		t.Fatalf("duration not stored: %v", d)
	}
}
