package oauth

import (
	"strings"
	"testing"
	"time"
)

// TestAuthorizationServerAnswersReadExactly: metadata, token, registration
// and error answers are read as the wire is: a member named twice, or a
// case variant of a member this client reads, is refused, never resolved
// by taking one of the readings (which a second, lenient reader of the
// same bytes might not take).
func TestAuthorizationServerAnswersReadExactly(t *testing.T) {
	md := func(extra string) []byte {
		return []byte(`{"issuer":"https://as.example.com","token_endpoint":"https://as.example.com/token"` + extra + `}`)
	}
	if _, err := DecodeAuthServerMetadata(md("")); err != nil {
		t.Fatal(err)
	}
	for extra, want := range map[string]string{
		`,"token_endpoint":"https://evil.example.com/token"`:    `duplicate member name "token_endpoint"`,
		`,"Registration_Endpoint":"https://evil.example.com/r"`: "case-sensitive",
		`,"scopes_supported":["a"],"x":{"y":1,"y":2}`:           `duplicate member name "y"`,
		`} {`: "after top-level value",
	} {
		if _, err := DecodeAuthServerMetadata(md(extra)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("metadata with %s: %v, want an error saying %q", extra, err, want)
		}
	}
	if _, err := DecodeProtectedResourceMetadata([]byte(`{"resource":"https://mcp.example.com","resource":"https://evil.example.com"}`)); err == nil {
		t.Error("protected resource metadata naming resource twice accepted")
	}

	now := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	if _, err := decodeTokenResponse([]byte(`{"access_token":"a","token_type":"Bearer","access_token":"b"}`), false, now); err == nil {
		t.Error("a token response naming access_token twice accepted")
	}
	var rr registrationResponse
	if err := decodeObject([]byte(`{"client_id":"c","Client_Secret":"s"}`), &rr, DefaultMaxResponseBytes); err == nil {
		t.Error(`a registration response with "Client_Secret" accepted`)
	}
	if _, err := DecodeExchangeResponse([]byte(`{"access_token":"a","issued_token_type":"x","token_type":"N_A","Expires_In":-1}`)); err == nil {
		t.Error(`a token exchange response with "Expires_In" accepted`)
	}

	// An error answer that is not one by the strict reading names no error
	// code, not the one read before the duplicate (no nonce retry on it).
	if er := decodeErrorResponse([]byte(`{"error":"use_dpop_nonce","error":"invalid_grant"}`)); er != (errorResponse{}) {
		t.Errorf("error answer naming error twice read as %+v", er)
	}
	if er := decodeErrorResponse([]byte(`{"error":"invalid_grant","error_description":"no"}`)); er.Error != "invalid_grant" || er.ErrorDescription != "no" {
		t.Errorf("error answer read as %+v", er)
	}
}
