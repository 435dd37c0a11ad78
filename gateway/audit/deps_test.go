package audit

import (
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
)

// The core of the audit trail (records, chain, key, journal format,
// export, filters) links no database driver: the stores live in their own
// packages (gateway/audit/sqlite, gateway/audit/postgres), so a program
// that only verifies or exports records, or keeps them elsewhere, does not
// carry them.
func TestCoreLinksNoDatabaseDriver(t *testing.T) {
	testenv.LinksNone(t, "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "database/sql")
}
