package postgres

import (
	"testing"

	"github.com/toolwire/toolwire/gateway/audit"
	"github.com/toolwire/toolwire/gateway/audit/storetest"
	"github.com/toolwire/toolwire/internal/testenv"
)

// BenchmarkAppend measures a synchronous Append to PostgreSQL: by one
// caller at a time (each append its own commit) and by many at once (group
// commit; recs/commit says how many records a transaction carried on
// average).
func BenchmarkAppend(b *testing.B) {
	b.Run("postgres", func(b *testing.B) {
		srv := testenv.Postgres(b)
		storetest.BenchAppend(b, func(s audit.Store) *audit.GroupCommit { return s.(*Store).gc }, func(b *testing.B) audit.Store { return openPG(b, pgDatabase(b, srv)) })
	})
}
