package procs

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testwait"
)

// TestStartCleanup: Start waits for every ready line and keeps its group;
// the Line hook hides lines; Cleanup stops the process and the child it
// left in its group, and removes Dir. (Cleanup runs once a program: this
// is the one test that may call it.)
func TestStartCleanup(t *testing.T) {
	gracePeriod = 100 * time.Millisecond
	dir, err := Init("procs-test")
	if err != nil {
		t.Fatal(err)
	}
	// The shell logs both lines, leaves a child behind and ignores SIGTERM.
	script := `trap '' TERM; sleep 60 & echo "child=$!" >&2; echo "secret" >&2; echo 'url=http://x' >&2; echo 'admin at y' >&2; wait`
	p, err := Start(Cmd{
		Name: "sh", Bin: "/bin/sh", Args: []string{"-c", script},
		Ready: map[string]*regexp.Regexp{
			"url":   regexp.MustCompile(`url=(\S+)`),
			"admin": regexp.MustCompile(`admin at \S+`),
			"child": regexp.MustCompile(`child=(\d+)`),
		},
		Line: func(l string) bool { return l != "secret" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Found["url"] != "http://x" || p.Found["admin"] != "admin at y" || p.Found["child"] == "" {
		t.Fatalf("Found = %v", p.Found)
	}
	if got := p.Log(); strings.Contains(got, "secret") {
		t.Errorf("the log holds a line the hook hid:\n%s", got)
	}
	child, err := strconv.Atoi(p.Found["child"])
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	Cleanup()
	select {
	case <-p.Done():
	case <-time.After(time.Minute): // a bound for a hang, not a speed
		t.Fatal("the process outlived Cleanup")
	}
	t.Logf("Cleanup took %v", time.Since(begin).Round(time.Millisecond))
	// Killed, the child is gone once reaped (a zombie until then).
	testwait.WaitFor(t, "the child "+strconv.Itoa(child)+" to end after Cleanup", func() bool { return !alive(child) })
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Dir %s left: %v", dir, err)
	}
	if _, err := Start(Cmd{Name: "late", Bin: "/bin/true"}); err == nil {
		t.Error("a process started after Cleanup")
	}
}

// alive: pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}
