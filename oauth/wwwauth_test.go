package oauth

import (
	"reflect"
	"testing"
)

func TestParseWWWAuthenticate(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []Challenge
	}{
		{[]string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="a b"`},
			[]Challenge{{Scheme: "bearer", Params: map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "scope": "a b"}}}},
		{[]string{`BEARER Error="insufficient_scope", SCOPE="x", error_description="say \"no\", please"`},
			[]Challenge{{Scheme: "bearer", Params: map[string]string{"error": "insufficient_scope", "scope": "x", "error_description": `say "no", please`}}}},
		{[]string{`Basic realm="a, b", Bearer realm=api, error=invalid_token`},
			[]Challenge{{Scheme: "basic", Params: map[string]string{"realm": "a, b"}}, {Scheme: "bearer", Params: map[string]string{"realm": "api", "error": "invalid_token"}}}},
		{[]string{`Negotiate abc123==, DPoP algs="ES256", error="use_dpop_nonce"`},
			[]Challenge{{Scheme: "negotiate", Params: map[string]string{}, Token68: "abc123=="}, {Scheme: "dpop", Params: map[string]string{"algs": "ES256", "error": "use_dpop_nonce"}}}},
		{[]string{`Bearer`, `DPoP resource_metadata="u"`},
			[]Challenge{{Scheme: "bearer", Params: map[string]string{}}, {Scheme: "dpop", Params: map[string]string{"resource_metadata": "u"}}}},
		{[]string{`Bearer scope="a", scope="b", , realm = "r"`},
			[]Challenge{{Scheme: "bearer", Params: map[string]string{"scope": "a", "realm": "r"}}}},
		{[]string{`Bearer scope="unterminated`}, []Challenge{{Scheme: "bearer", Params: map[string]string{"scope": "unterminated"}}}},
		{[]string{`=garbage, Bearer error=x`}, []Challenge{{Scheme: "bearer", Params: map[string]string{"error": "x"}}}},
		{[]string{``, `  ,  `}, nil},
	} {
		got := ParseWWWAuthenticate(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseWWWAuthenticate(%q)\n got %#v\nwant %#v", tc.in, got, tc.want)
		}
	}
}

func TestChallengeParams(t *testing.T) {
	ap := challengeParams(ParseWWWAuthenticate([]string{`Basic realm=x, Bearer scope="s", DPoP resource_metadata="https://m/prm", error="use_dpop_nonce"`}))
	if ap.resourceMetadata != "https://m/prm" || ap.err != "use_dpop_nonce" || ap.scheme != "dpop" {
		t.Errorf("%+v", ap)
	}
	ap = challengeParams(ParseWWWAuthenticate([]string{`Bearer error="insufficient_scope", scope="a b", resource_metadata="u"`}))
	if ap.scope != "a b" || ap.err != "insufficient_scope" || ap.resourceMetadata != "u" {
		t.Errorf("%+v", ap)
	}
}

// FuzzParseWWWAuthenticate: any header value parses without panicking,
// within the limits, to lower-case names.
func FuzzParseWWWAuthenticate(f *testing.F) {
	for _, s := range []string{`Bearer resource_metadata="https://x/y", scope="a b"`, `Basic realm="a\"b", Bearer`, `Negotiate abc==`, `,,,`, `Bearer scope="`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chs := ParseWWWAuthenticate([]string{s, s})
		if len(chs) > 2*maxChallenges {
			t.Fatalf("%d challenges", len(chs))
		}
		for _, c := range chs {
			if c.Scheme == "" || len(c.Params) > maxChallengeParams {
				t.Fatalf("bad challenge %#v", c)
			}
			for k := range c.Params {
				if k == "" {
					t.Fatal("empty parameter name")
				}
			}
		}
		_ = challengeParams(chs)
	})
}
