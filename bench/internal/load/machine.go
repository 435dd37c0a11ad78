package load

import (
	"os"
	"strings"
)

// SystemLoad is the machine's 1, 5 and 15 minute load averages as the
// kernel reports them, or "?" where it does not: benchmark reports record
// it, since other work on the machine competes with the load generator.
func SystemLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
