package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// chromiumNames are the names a Chromium or Chrome browser goes by on PATH,
// in the order Chromium looks for them.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// Chromium returns the path of a Chromium (or Chrome) browser for headless
// browser tests, found on PATH as chromium, chromium-browser or
// google-chrome. Without one it skips the test, or fails it in CI (CI set),
// where ./scripts/test should have installed Debian's chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no Chromium browser (%v) on PATH; ./scripts/test should have installed it "+
			"(Debian package chromium, see scripts/lib/debian-packages.sh)", chromiumNames)
	}
	t.Skipf("no Chromium browser (%v) on PATH; install it with `apt-get install chromium` (as root), "+
		"or run ./scripts/test as root", chromiumNames)
	return ""
}
