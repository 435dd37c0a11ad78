package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTokenErrorClasses(t *testing.T) {
	inv := invalidToken("the token has expired")
	una := unavailable("the issuer's keys could not be fetched", errors.New("dial tcp 127.0.0.1:1: connection refused"))
	if !errors.Is(inv, ErrInvalidToken) || errors.Is(inv, ErrUnavailable) {
		t.Fatalf("invalid: %v", inv)
	}
	if !errors.Is(una, ErrUnavailable) || errors.Is(una, ErrInvalidToken) {
		t.Fatalf("unavailable: %v", una)
	}
	wrapped := fmt.Errorf("verifying: %w", una)
	var te *TokenError
	if !errors.As(wrapped, &te) || te.Description != "the issuer's keys could not be fetched" || !strings.Contains(wrapped.Error(), "connection refused") {
		t.Fatalf("wrapped: %v", wrapped)
	}
}

// A verifier's error that is not a TokenError, or a principal without a
// subject, is not a pass: 503.
func TestRequireTreatsOtherErrorsAsUnavailable(t *testing.T) {
	for _, v := range []TokenVerifierFunc{
		func(context.Context, string) (*Principal, error) { return nil, errors.New("boom") },
		func(context.Context, string) (*Principal, error) { return nil, nil },
		func(context.Context, string) (*Principal, error) { return &Principal{Issuer: "x"}, nil },
	} {
		ran := false
		h := Require(v)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer abc")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || ran {
			t.Fatalf("status %d, ran %v", w.Code, ran)
		}
	}
}
