// Package testhttp is how the project's tests make one HTTP exchange and
// look at all of it: the response with its body read whole and closed, so
// that a test asserts on the status, the headers and the body as text, and
// a transport error or a body cut short fails the test where it happened.
//
// It depends on the standard library only, so the internal tests of any
// package in the module can use it.
package testhttp

import (
	"io"
	"net/http"
	"testing"
)

// Do sends req with c (http.DefaultClient when nil) and returns the
// response, whose body is read and closed, and that body. An error
// sending the request or reading the body fails t.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res, ReadBody(t, res)
}

// ReadBody reads res's body whole and closes it; an error reading it
// (a body cut short) fails t, naming the request when res has one.
func ReadBody(t testing.TB, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		if res.Request != nil {
			t.Fatalf("reading the reply to %s %s: %v", res.Request.Method, res.Request.URL, err)
		}
		t.Fatal(err)
	}
	return string(b)
}

// Get is Do of a GET of url with http.DefaultClient, for the status and
// the body.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, body := Do(t, nil, req)
	return res.StatusCode, body
}
