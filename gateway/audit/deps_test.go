package audit

import (
	"os/exec"
	"strings"
	"testing"
)

// The core of the audit trail (records, chain, key, journal format,
// export, filters) links no database driver: the stores live in their own
// packages (gateway/audit/sqlite, gateway/audit/postgres), so a program
// that only verifies or exports records, or keeps them elsewhere, does not
// carry them.
func TestCoreLinksNoDatabaseDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	drivers := []string{"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "database/sql"}
	for _, dep := range strings.Fields(string(out)) {
		for _, d := range drivers {
			if dep == d || strings.HasPrefix(dep, d+"/") {
				t.Errorf("gateway/audit links %s", dep)
			}
		}
	}
}
