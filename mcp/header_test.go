package mcp

import (
	"encoding/base64"
	"testing"
)

func TestDecodeHeaderValue(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"us-west1", "us-west1", false},
		{"a b", "a b", false},
		{"=?base64?" + base64.StdEncoding.EncodeToString([]byte("Hello, 世界")) + "?=", "Hello, 世界", false},
		{"=?base64?SGVsbG8=?=", "Hello", false},
		{"=?base64?SGVsbG8?=", "", true},     // bad padding
		{"=?base64?SGVs!!!bG8=?=", "", true}, // not base64
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", false},
		{"SGVsbG8=", "SGVsbG8=", false},
		{"caf\xc3\xa9", "", true}, // raw non-ASCII must be encoded
		{"a\x01b", "", true},
	}
	for _, c := range cases {
		got, err := DecodeHeaderValue(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestEncodeHeaderValueRoundTrips(t *testing.T) {
	for _, v := range []string{"us-west1", "a b", " lead", "trail ", "Hello, 世界", "=?base64?x?=", "tab\there", ""} {
		got, err := DecodeHeaderValue(EncodeHeaderValue(v))
		if err != nil || got != v {
			t.Errorf("%q: round trip gave %q, %v", v, got, err)
		}
	}
}
