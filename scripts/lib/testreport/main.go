// Command testreport reads `go test -json` on its standard input and prints
// what plain `go test` prints: each package's ok line (here with its counts),
// and for a package that failed its output and the output of its failed
// tests. It counts tests: every top-level test and every subtest once, by its
// pass, fail or skip; a package that failed with no failed test (a build
// failure, a panic in TestMain, a timeout between tests) counts as one failed
// test. In CI (CI set, as internal/testenv reads it) a skipped test counts as
// failed.
//
// With -counts FILE it writes one line per counted test to FILE:
//
//	pass|fail|skip <package> <test>[\t<why>]
//
// (why: a skip's message, or what failed a package), which scripts/test
// sums. It exits 1 when any test failed, 0 otherwise; a line that is not a
// JSON event (a message of the go command) is printed as it is.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/internal/wirejson"
)

// event is one line of `go test -json` (cmd/test2json), with the build
// output the go command reports as events of its own.
type event struct {
	Action      string  `json:"Action"`
	Package     string  `json:"Package"`
	Test        string  `json:"Test"`
	Elapsed     float64 `json:"Elapsed"`
	Output      string  `json:"Output"`
	ImportPath  string  `json:"ImportPath"`
	FailedBuild string  `json:"FailedBuild"`
}

// result is one counted test.
type result struct {
	Status  string // pass, fail or skip
	Package string
	Test    string // "" for a package that failed outside any test
	Why     string
}

func (r result) String() string {
	s := r.Status + " " + r.Package
	if r.Test != "" {
		s += " " + r.Test
	}
	if r.Why != "" {
		s += "\t" + r.Why
	}
	return s
}

// line is one output line of a package, with the test it belongs to.
type line struct {
	test, text string
}

// pkg is what is known of a package until it ends.
type pkg struct {
	out    []line
	failed map[string]bool
	counts map[string]int // by status, after CI's rule
}

// report turns events into printed output and results.
type report struct {
	ci      bool
	w       io.Writer
	pkgs    map[string]*pkg
	order   []string // packages in the order they started
	results []result
}

func newReport(w io.Writer, ci bool) *report {
	return &report{ci: ci, w: w, pkgs: map[string]*pkg{}}
}

func (r *report) pkg(name string) *pkg {
	p, ok := r.pkgs[name]
	if !ok {
		p = &pkg{failed: map[string]bool{}, counts: map[string]int{}}
		r.pkgs[name] = p
		r.order = append(r.order, name)
	}
	return p
}

// line handles one line of input.
func (r *report) line(b []byte) {
	var e event
	if len(b) == 0 || b[0] != '{' || wirejson.Unmarshal(b, &e) != nil || (e.Action == "" && e.ImportPath == "") {
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	if e.Action == "build-output" {
		fmt.Fprint(r.w, e.Output)
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	switch e.Action {
	case "output":
		p.out = append(p.out, line{e.Test, e.Output})
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.end(e.Package, p, e, "")
			return
		}
		res := result{Status: e.Action, Package: e.Package, Test: e.Test}
		if e.Action == "fail" {
			p.failed[e.Test] = true
		}
		if e.Action == "skip" {
			res.Why = p.skipReason(e.Test)
			if r.ci {
				res.Status = "fail"
				res.Why = "skipped, which fails in CI: " + res.Why
				p.failed[e.Test] = true
			}
		}
		p.counts[res.Status]++
		r.results = append(r.results, res)
	}
}

// skipReason is why a test skipped, on one line: what it logged from the
// last log line on (t.Skip's message is its last), or else all it printed.
func (p *pkg) skipReason(test string) string {
	var parts []string
	from := -1
	for _, l := range p.out {
		if l.test != test || framing(l.text) || strings.HasPrefix(strings.TrimSpace(l.text), "--- SKIP: ") {
			continue
		}
		if logLine.MatchString(l.text) {
			from = len(parts)
		}
		if s := strings.TrimSpace(l.text); s != "" {
			parts = append(parts, s)
		}
	}
	if from >= 0 {
		parts = parts[from:]
	}
	s := strings.Join(parts, " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	return s
}

// logLine is how the testing package starts a line of t.Log or t.Skip.
var logLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: `)

// framing tells the lines of -test.v=test2json that plain go test does not
// print.
func framing(s string) bool {
	for _, f := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, f) {
			return true
		}
	}
	return false
}

// end prints a package that ended and counts a failure outside its tests
// (why says what it was, when go test's event does not).
func (r *report) end(name string, p *pkg, e event, why string) {
	delete(r.pkgs, name)
	r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == name })
	if e.Action != "fail" && len(p.failed) > 0 {
		// Only CI's rule failed it (go test said ok): the skipped tests.
		r.print(p, false)
		fmt.Fprintf(r.w, "FAIL\t%s\t(%d skipped, which fails in CI)\n", name, len(p.failed))
		return
	}
	if e.Action == "fail" {
		r.print(p, true)
		if len(p.failed) == 0 {
			switch {
			case why != "":
			case e.FailedBuild != "":
				why = "build failed"
			default:
				why = "failed outside any test (see its output)"
			}
			r.results = append(r.results, result{Status: "fail", Package: name, Why: why})
			p.counts["fail"]++
		}
		return
	}
	// Passed, or no test files: the package's last line, as go test prints.
	last := ""
	for _, l := range p.out {
		if l.test == "" && strings.TrimSpace(l.text) != "" {
			last = strings.TrimRight(l.text, "\n")
		}
	}
	if last == "" {
		last = fmt.Sprintf("%s\t%s\t%.3fs", map[string]string{"pass": "ok  ", "skip": "?   "}[e.Action], name, e.Elapsed)
	}
	if n := p.counts["pass"] + p.counts["skip"]; n > 0 {
		last += fmt.Sprintf("\t(%d passed", p.counts["pass"])
		if s := p.counts["skip"]; s > 0 {
			last += fmt.Sprintf(", %d skipped", s)
		}
		last += ")"
	}
	fmt.Fprintln(r.w, last)
}

// print prints the output of a package's failed tests and, with own, the
// package's own output too (its FAIL line, a panic outside any test).
func (r *report) print(p *pkg, own bool) {
	for _, l := range p.out {
		if ((own && l.test == "") || p.failed[l.test]) && !framing(l.text) {
			fmt.Fprint(r.w, l.text)
			if !strings.HasSuffix(l.text, "\n") {
				fmt.Fprintln(r.w)
			}
		}
	}
}

// finish counts a package that never ended (the go command died) as failed.
func (r *report) finish() {
	for _, name := range slices.Clone(r.order) {
		r.end(name, r.pkgs[name], event{Action: "fail", Package: name}, "did not finish")
	}
}

// tally is the count of each status.
func (r *report) tally() (pass, fail, skip int) {
	for _, res := range r.results {
		switch res.Status {
		case "pass":
			pass++
		case "fail":
			fail++
		case "skip":
			skip++
		}
	}
	return pass, fail, skip
}

func main() {
	counts := flag.String("counts", "", "write one line per test to this `file`")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | testreport [-counts file]")
		os.Exit(2)
	}
	r := newReport(os.Stdout, os.Getenv("CI") != "")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		r.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		r.results = append(r.results, result{Status: "fail", Package: "(go test output)", Why: err.Error()})
	}
	r.finish()
	pass, fail, skip := r.tally()
	fmt.Printf("go test: %d passed, %d failed, %d skipped\n", pass, fail, skip)
	if *counts != "" {
		var b strings.Builder
		for _, res := range r.results {
			b.WriteString(res.String() + "\n")
		}
		if err := os.WriteFile(*counts, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			os.Exit(1)
		}
	}
	if fail > 0 {
		os.Exit(1)
	}
}
