package testwait

import (
	"sync"
	"testing"
)

// Concurrently runs callers goroutines at once, each calling f for rounds
// rounds in order (caller and round numbered from 0) and stopping at its
// first error, which is how a test puts several clients' requests in
// flight together. It waits for every goroutine to end, reports each
// error with t.Error, and returns whether there was none, so that a test
// checks what the calls left (connections dialled, sessions open) only
// after they all succeeded.
func Concurrently(t testing.TB, callers, rounds int, f func(caller, round int) error) bool {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				if err := f(c, r); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	ok := true
	for err := range errs {
		t.Error(err)
		ok = false
	}
	return ok
}
