package httpguard

import "testing"

// TestClientAddress: an IPv4 address as it is (mapped ones unmapped), an
// IPv6 address by its /64, anything else as given.
func TestClientAddress(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:5000":             "192.0.2.7",
		"[::ffff:192.0.2.7]:1":       "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"not-an-address":             "not-an-address",
	} {
		if got := ClientAddress(in); got != want {
			t.Errorf("ClientAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
