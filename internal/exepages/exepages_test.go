package exepages_test

import (
	"errors"
	"testing"

	"github.com/toolwire/toolwire/internal/exepages"
)

// Release lowers the test binary's file-backed resident memory: the
// pages its start-up and the tests before touched are given back.
func TestReleaseLowersFileBackedRSS(t *testing.T) {
	st, err := exepages.Release()
	if errors.Is(err, exepages.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("Release: %v", err)
	}
	if st.Mapped == 0 {
		t.Fatal("Release advised no mapping of the binary")
	}
	if st.Before <= 0 || st.After < 0 {
		t.Fatalf("RssFile not read: before %d, after %d", st.Before, st.After)
	}
	if st.After >= st.Before {
		t.Errorf("RssFile %d bytes after Release, %d before: nothing given back", st.After, st.Before)
	}
	// The program goes on running code from the released pages.
	if _, err := exepages.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}
