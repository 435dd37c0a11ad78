package sessionstoretest_test

import (
	"testing"

	"github.com/toolwire/toolwire/transport/streamable"
	"github.com/toolwire/toolwire/transport/streamable/sessionstoretest"
)

func TestMemorySessionStore(t *testing.T) {
	sessionstoretest.Run(t, func(*testing.T, *sessionstoretest.Clock) (streamable.SessionStore, bool) {
		return streamable.NewMemorySessionStore(), false
	})
}
