package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// run feeds the lines of input to a report and returns what it printed and
// the results as the counts file has them.
func run(t *testing.T, input string, ci bool) (string, []string) {
	t.Helper()
	var out bytes.Buffer
	r := newReport(&out, ci)
	for l := range strings.Lines(input) {
		r.line([]byte(strings.TrimSuffix(l, "\n")))
	}
	r.finish()
	var res []string
	for _, x := range r.results {
		res = append(res, x.String())
	}
	return out.String(), res
}

// testdata/mixed.jsonl is `go test -json ./...` of a module with a package
// holding passed, failed and skipped tests and subtests, one that does not
// build, one whose TestMain panics, and one without tests.
func TestMixed(t *testing.T) {
	in, err := os.ReadFile("testdata/mixed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out, res := run(t, string(in), false)
	want := []string{
		"pass example.com/m/a TestPass",
		"pass example.com/m/a TestSub/ok",
		"fail example.com/m/a TestSub/bad",
		"skip example.com/m/a TestSub/skip\ta_test.go:7: not here",
		"fail example.com/m/a TestSub",
		"skip example.com/m/a TestSkip\ta_test.go:9: needs redis",
		"fail example.com/m/b\tbuild failed",
		"fail example.com/m/c\tfailed outside any test (see its output)",
	}
	if !slices.Equal(res, want) {
		t.Errorf("results\n%s\nwant\n%s", strings.Join(res, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{
		"b/b_test.go:3:27: undefined: undefined\n",     // the build failure
		"    a_test.go:6: boom\n--- FAIL: TestSub/bad", // a failed test's log
		"--- FAIL: TestSub (0.00s)\n",
		"FAIL\texample.com/m/a\t0.004s\n",
		"FAIL\texample.com/m/b [build failed]\n",
		"panic: in main\n",
		"?   \texample.com/m/d\t[no test files]\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// A passed or skipped test's output, and test2json's framing, are not
	// shown, as plain go test does not show them.
	for _, s := range []string{"quiet", "printed", "needs redis", "=== RUN"} {
		if strings.Contains(out, s) {
			t.Errorf("output shows %q:\n%s", s, out)
		}
	}
}

// In CI a skip is a failure, shown with its output; a package go test
// passed fails for it.
func TestCISkipFails(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: redis-server is missing;\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"        install it\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB","Elapsed":0}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.012s\n"}
{"Action":"pass","Package":"p","Elapsed":0.02}
`
	out, res := run(t, in, false)
	if want := []string{"pass p TestA", "skip p TestB\tb_test.go:9: redis-server is missing; install it"}; !slices.Equal(res, want) {
		t.Errorf("outside CI: %q, want %q", res, want)
	}
	if want := "ok  \tp\t0.012s\t(1 passed, 1 skipped)\n"; out != want {
		t.Errorf("outside CI printed %q, want %q", out, want)
	}

	out, res = run(t, in, true)
	if want := []string{"pass p TestA", "fail p TestB\tskipped, which fails in CI: b_test.go:9: redis-server is missing; install it"}; !slices.Equal(res, want) {
		t.Errorf("in CI: %q, want %q", res, want)
	}
	want := "    b_test.go:9: redis-server is missing;\n        install it\n--- SKIP: TestB (0.00s)\nFAIL\tp\t(1 skipped, which fails in CI)\n"
	if out != want {
		t.Errorf("in CI printed\n%s\nwant\n%s", out, want)
	}
}

// A package whose end never came (the go command was killed) failed, and a
// line that is not an event is passed through.
func TestUnfinishedAndPlainLines(t *testing.T) {
	in := `go: downloading example.com/x v1.0.0
{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"p","Output":"partial line"}
`
	out, res := run(t, in, false)
	if want := []string{"fail p\tdid not finish"}; !slices.Equal(res, want) {
		t.Errorf("results %q, want %q", res, want)
	}
	if want := "go: downloading example.com/x v1.0.0\npartial line\n"; out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
}

func TestTally(t *testing.T) {
	r := newReport(&bytes.Buffer{}, false)
	r.results = []result{{Status: "pass"}, {Status: "pass"}, {Status: "fail"}, {Status: "skip"}}
	if p, f, s := r.tally(); p != 2 || f != 1 || s != 1 {
		t.Errorf("tally %d %d %d", p, f, s)
	}
}
