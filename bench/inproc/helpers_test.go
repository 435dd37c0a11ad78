package inproc

import (
	"testing"

	"github.com/toolwire/toolwire/bench/impls"
)

// subtester is *testing.T or *testing.B: a test whose Run takes its own kind.
type subtester[T any] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// eachImpl runs f as a subtest (or sub-benchmark) per server of impls.All,
// with the server's name and a client of its handler in process: a
// 2025-11-25 session (initialized), or, modern, a stateless 2026-07-28
// client of its ModernHandler.
func eachImpl[T subtester[T]](tb T, modern bool, f func(tb T, impl string, c *Client)) {
	for _, impl := range impls.All {
		tb.Run(impl, func(tb T) {
			if modern {
				h, err := ModernHandler(impl)
				if err != nil {
					tb.Fatal(err)
				}
				f(tb, impl, &Client{H: h})
				return
			}
			h, err := Handler(impl)
			if err != nil {
				tb.Fatal(err)
			}
			c, err := Open(h)
			if err != nil {
				tb.Fatal(err)
			}
			f(tb, impl, c)
		})
	}
}
