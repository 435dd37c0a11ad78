package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/flow"
)

// The declarative flows of package flow, from the command line: `check`
// checks manifests without running them, `run` runs one flow and prints
// its outputs, `test` runs every flow under some paths as tests.

const flowExitHelp = `Exit status:
  0  success
  1  the flow failed (run), a test failed (test), a manifest has problems (check)
  2  usage error, or a manifest that does not pass the static check (run)
  130  interrupted`

// inputFlags is --input k=v, repeatable.
type inputFlags struct {
	inputs     []string
	inputsFile string
	verbose    bool
}

func (f *inputFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.inputs, "input", nil, "set the flow input NAME to VALUE, as NAME=VALUE (repeatable)")
	cmd.Flags().StringVar(&f.inputsFile, "inputs-file", "", "read flow inputs from FILE, a YAML or JSON mapping of names to values (--input wins)")
	cmd.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "log protocol diagnostics and the servers' stderr to stderr")
}

// parse returns the inputs as a map: those of --inputs-file, then each
// --input (which wins over the file). A pair without =, a name given twice
// with --input or a bad inputs file is a usage error.
func (f *inputFlags) parse() (map[string]string, error) {
	out := map[string]string{}
	fromFile := map[string]string{}
	if f.inputsFile != "" {
		in, err := flow.ReadInputsFile(f.inputsFile)
		if err != nil {
			return nil, usageError{"--inputs-file: " + strings.Join(loadProblems(err), "; ")}
		}
		fromFile = in
	}
	defer func() {
		for k, v := range fromFile {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}()
	for _, kv := range f.inputs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageError{fmt.Sprintf("invalid --input %q: want NAME=VALUE", kv)}
		}
		if _, dup := out[k]; dup {
			return nil, usageError{fmt.Sprintf("--input %s is given twice", k)}
		}
		out[k] = v
	}
	return out, nil
}

// clientOptions are the options of every client a flow connects: the
// clients' logs (the servers' stderr among them) go to stderr with
// --verbose and nowhere otherwise.
func (f *inputFlags) clientOptions(stderr io.Writer) flow.RunOption {
	var w io.Writer = io.Discard
	if f.verbose {
		w = stderr
	}
	return flow.WithClientOptions(client.WithLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))))
}

// declaredInputs keeps the inputs fl declares.
func declaredInputs(fl *flow.Flow, in map[string]string) map[string]string {
	out := map[string]string{}
	for _, d := range fl.Inputs {
		if v, ok := in[d.Name]; ok {
			out[d.Name] = v
		}
	}
	return out
}

// loadProblems lists the problems of a manifest that did not load: its
// diagnostics (file:line:col: msg), or the error itself.
func loadProblems(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if u, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range u.Unwrap() {
				walk(x)
			}
			return
		}
		out = append(out, e.Error())
	}
	walk(err)
	return out
}

// flowFiles expands the paths: a directory stands for every *.flow.yaml
// under it (recursively, sorted), a file for itself. Under a directory only
// regular files count (a symbolic link, by what it names): reading a named
// pipe or a device would block or never end, so each of those is skipped
// with a line on warn. A path given by name is read whatever it is (a
// pipe from <(...) among them).
func flowFiles(paths []string, warn io.Writer) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		if !fi.IsDir() {
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".flow.yaml") {
				return nil
			}
			if what := notRegular(path, d); what != "" {
				fmt.Fprintf(warn, "toolwire: skipping %s: %s, not a regular file\n", path, what)
				return nil
			}
			found = append(found, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, usageError{fmt.Sprintf("no *.flow.yaml files under %s", p)}
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return out, nil
}

// notRegular says what the entry at path is when it is not a regular file
// (following a symbolic link), "" when it is one.
func notRegular(path string, d fs.DirEntry) string {
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			return "a broken symbolic link"
		}
		mode = fi.Mode().Type()
	}
	switch {
	case mode.IsRegular():
		return ""
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a directory"
	}
	return "a special file"
}

// loadFlow is flow.Load given up when ctx ends (errInterrupted): opening a
// named pipe blocks until something writes to it, and no context reaches
// into that.
func loadFlow(ctx context.Context, path string) (*flow.File, error) {
	type loaded struct {
		file *flow.File
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		f, err := flow.Load(path)
		done <- loaded{f, err}
	}()
	select {
	case l := <-done:
		return l.file, l.err
	case <-ctx.Done():
		return nil, errInterrupted
	}
}

// exitOnSecondSignal makes a second SIGINT or SIGTERM end the process at
// once (status 130): the first cancels the command's context (main), and
// whatever does not heed it (a server that will not stop) is not waited for
// after another. stop ends the watch.
func exitOnSecondSignal() (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for seen := 0; ; {
			select {
			case <-ch:
				if seen++; seen == 2 {
					fmt.Fprintln(os.Stderr, "toolwire: interrupted again: exiting now")
					os.Exit(130)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// ---- check

func newCheckCmd() *cobra.Command {
	var f inputFlags
	var connect bool
	cmd := &cobra.Command{
		Use:   "check PATH...",
		Short: "Check flow manifests without running them",
		Long: "Check flow manifests (*.flow.yaml; a directory stands for every one under it) without running\n" +
			"anything: YAML syntax, unknown keys, step kinds, names and references, CEL parse and type errors,\n" +
			"catch handlers for codes nothing can throw, durations, regexps and JSON Schemas. Each problem is\n" +
			"printed as file:line:col: message; a file without any gets an \"ok\" line.\n\n" +
			"--connect also starts each flow's clients, fetches their tools and checks every call of a literal\n" +
			"tool name: that the tool exists and that literal arguments fit its inputSchema (client fields\n" +
			"may use inputs: give them with --input).\n\n" +
			"  toolwire check examples/flows\n" +
			"  toolwire check --connect weather.flow.yaml --input url=http://127.0.0.1:8080/mcp\n\n" + flowExitHelp,
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, &f, connect, args) },
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&connect, "connect", false, "start the clients and check calls against the servers' tools")
	return cmd
}

func runCheck(cmd *cobra.Command, f *inputFlags, connect bool, args []string) error {
	if len(args) == 0 {
		return usageError{"no manifest given: toolwire check FILE..."}
	}
	defer exitOnSecondSignal()()
	inputs, err := f.parse()
	if err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	files, err := flowFiles(args, errOut)
	if err != nil {
		return err
	}
	bad := 0
	for _, path := range files {
		file, err := loadFlow(cmd.Context(), path)
		if err == errInterrupted {
			return err
		}
		if err == nil && connect {
			opts := []flow.RunOption{flow.WithConnect(true), f.clientOptions(errOut)}
			in := map[string]string{}
			for _, fl := range file.Flows {
				for k, v := range declaredInputs(fl, inputs) {
					in[k] = v
				}
			}
			if len(in) > 0 {
				opts = append(opts, flow.WithInputs(in))
			}
			err = flow.Check(cmd.Context(), file, opts...)
			if cmd.Context().Err() != nil {
				return errInterrupted
			}
		}
		if err != nil {
			bad++
			for _, p := range loadProblems(err) {
				fmt.Fprintln(out, p)
			}
			continue
		}
		fmt.Fprintf(out, "%s: ok (%s)\n", path, plural(len(file.Flows), "flow"))
	}
	if bad > 0 {
		verb := "have"
		if bad == 1 {
			verb = "has"
		}
		return fmt.Errorf("%d of %s %s problems", bad, plural(len(files), "file"), verb)
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ---- run

func newRunCmd() *cobra.Command {
	var f inputFlags
	var name, output string
	cmd := &cobra.Command{
		Use:   "run FILE [--flow NAME] [--input NAME=VALUE ...]",
		Short: "Run a flow and print its outputs",
		Long: "Run one flow of a manifest: each step is shown on stderr as it ends (✓ passed, ✗ failed, - skipped;\n" +
			"on a terminal the running step is shown live), then the flow's outputs are printed on stdout, as\n" +
			"indented JSON (--output json, the default) or one \"name: value\" line each (--output text).\n" +
			"A manifest of several flows needs --flow NAME. When the flow fails, the error is shown: its code,\n" +
			"message, step and place in the file, and for an assertion the expected and actual values.\n\n" +
			"  toolwire run weather.flow.yaml --input city=Paris\n\n" + flowExitHelp,
		RunE: func(cmd *cobra.Command, args []string) error { return runFlowCmd(cmd, &f, name, output, args) },
	}
	f.register(cmd)
	cmd.Flags().StringVar(&name, "flow", "", "the flow to run, by name, when the file holds several")
	cmd.Flags().StringVarP(&output, "output", "o", "json", "how to print the outputs: json or text")
	return cmd
}

func runFlowCmd(cmd *cobra.Command, f *inputFlags, name, output string, args []string) error {
	if len(args) != 1 {
		return usageError{"toolwire run takes one manifest: toolwire run FILE [--flow NAME]"}
	}
	if output != "json" && output != "text" {
		return usageError{fmt.Sprintf("invalid --output %q: want json or text", output)}
	}
	inputs, err := f.parse()
	if err != nil {
		return err
	}
	defer exitOnSecondSignal()()
	out, errOut := cmd.OutOrStdout(), syncWriter(cmd.ErrOrStderr())
	file, err := loadFlow(cmd.Context(), args[0])
	if err == nil {
		errOut = masked(errOut, secretsOf(file.Flows, inputs))
	}
	if err == errInterrupted {
		return err
	}
	if err != nil {
		problems := loadProblems(err)
		for _, p := range problems {
			fmt.Fprintln(errOut, p)
		}
		return usageError{fmt.Sprintf("%s does not pass the check (%s)", args[0], plural(len(problems), "problem"))}
	}
	fl, err := pickFlow(file, name)
	if err != nil {
		return err
	}
	pal := paletteFor(cmd.ErrOrStderr())
	pr := newStepPrinter(errOut, cmd.ErrOrStderr())
	res, err := fl.Run(cmd.Context(), flow.WithInputs(inputs), flow.WithObserver(pr.observe), f.clientOptions(errOut))
	pr.close()
	if err != nil {
		if cmd.Context().Err() != nil {
			return errInterrupted
		}
		return usageError{err.Error()}
	}
	if res.Err != nil {
		if cmd.Context().Err() != nil {
			fmt.Fprintf(errOut, "flow %s interrupted after %s\n", fl.Name, fmtDuration(res.Duration))
			return errInterrupted
		}
		fmt.Fprintf(errOut, "%s flow %s failed after %s:\n%s", pal.paint(pal.red, "✗"), fl.Name, fmtDuration(res.Duration),
			describeFlowError(file.Path, res.Err, "  "))
		return fmt.Errorf("flow %s failed: %s", fl.Name, res.Err.Code)
	}
	fmt.Fprintf(errOut, "%s flow %s passed in %s\n", pal.paint(pal.green, "✓"), fl.Name, fmtDuration(res.Duration))
	return printOutputs(out, fl, res.Outputs, output)
}

// pickFlow returns the flow named name, or the file's only flow.
func pickFlow(file *flow.File, name string) (*flow.Flow, error) {
	var names []string
	for _, fl := range file.Flows {
		if fl.Name == name || (name == "" && len(file.Flows) == 1) {
			return fl, nil
		}
		names = append(names, fl.Name)
	}
	if name == "" {
		return nil, usageError{fmt.Sprintf("%s holds %d flows: choose one with --flow (%s)", file.Path, len(file.Flows), strings.Join(names, ", "))}
	}
	return nil, usageError{fmt.Sprintf("%s has no flow %q (its flows: %s)", file.Path, name, strings.Join(names, ", "))}
}

// printOutputs prints the outputs as indented JSON, or as "name: value"
// lines in declaration order (strings as they are, other values as JSON).
func printOutputs(w io.Writer, fl *flow.Flow, outputs map[string]any, format string) error {
	if outputs == nil {
		outputs = map[string]any{}
	}
	if format == "json" {
		b, err := json.MarshalIndent(outputs, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	var names []string
	for _, o := range fl.Outputs {
		names = append(names, o.Name)
	}
	for _, k := range sortedKeys(outputs) {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	for _, k := range names {
		v, ok := outputs[k]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", k, compactJSON(v, false))
	}
	return nil
}

// ---- test

type testFlags struct {
	inputFlags
	parallel int
	junit    string
	run      string
	failFast bool
	report   string
}

func newTestCmd() *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test PATH... [--parallel N] [--junit FILE] [--run REGEXP] [--input NAME=VALUE ...]",
		Short: "Run flows as tests",
		Long: "Run every flow of the given manifests as a test; a directory stands for every *.flow.yaml under\n" +
			"it. Each flow document is one test, passed when the flow ends without an uncaught error. A line\n" +
			"is printed per test (PASS or FAIL, name, file, duration; for a failure the error, the step and\n" +
			"its place, and for an assertion the expected and actual values), then the summary\n" +
			"\"N passed, M failed\". --junit writes a JUnit XML report: one testsuite per file, one testcase\n" +
			"per flow. Each flow gets the --input values it declares (and those of --inputs-file, a YAML or\n" +
			"JSON mapping; --input wins); an input no flow declares is an error. --report json prints on stdout\n" +
			"a JSON document of every flow and step (status, attempts, duration, error; its schema is in\n" +
			"docs/flows.md) and the lines on stderr. --fail-fast starts no flow once one has failed (the rest\n" +
			"are skipped). The values of inputs declared secret: true are masked (***) in every output.\n\n" +
			"  toolwire test examples/flows --input url=http://127.0.0.1:8080/mcp --junit out/junit.xml\n" +
			"  toolwire test flows --inputs-file ci-inputs.yaml --report json --fail-fast > report.json\n\n" +
			"Exit status: 0 when every test passed, 1 when any failed, 2 on usage errors, 130 interrupted.",
		RunE: func(cmd *cobra.Command, args []string) error { return runTestCmd(cmd, &f, args) },
	}
	f.register(cmd)
	cmd.Flags().IntVarP(&f.parallel, "parallel", "p", runtime.GOMAXPROCS(0), "run up to N flows at once")
	cmd.Flags().StringVar(&f.junit, "junit", "", "write a JUnit XML report to FILE")
	cmd.Flags().StringVar(&f.run, "run", "", "run only the flows whose name matches REGEXP")
	cmd.Flags().BoolVar(&f.failFast, "fail-fast", false, "start no flow after one has failed (those left are reported as skipped)")
	cmd.Flags().StringVar(&f.report, "report", "text", "what stdout gets: text (a line per test) or json (the JSON report of docs/flows.md; the lines go to stderr)")
	return cmd
}

// testCase is one flow to run as a test, and how it went.
type testCase struct {
	file   *flow.File
	flow   *flow.Flow
	res    junitTest
	result *flow.Result // nil when it did not run
}

func runTestCmd(cmd *cobra.Command, f *testFlags, args []string) error {
	if len(args) == 0 {
		return usageError{"no path given: toolwire test PATH..."}
	}
	if f.parallel < 1 {
		return usageError{fmt.Sprintf("invalid --parallel %d: want 1 or more", f.parallel)}
	}
	if f.report != "text" && f.report != "json" {
		return usageError{fmt.Sprintf("invalid --report %q: want text or json", f.report)}
	}
	var filter *regexp.Regexp
	if f.run != "" {
		re, err := regexp.Compile(f.run)
		if err != nil {
			return usageError{fmt.Sprintf("invalid --run: %v", err)}
		}
		filter = re
	}
	defer exitOnSecondSignal()()
	inputs, err := f.parse()
	if err != nil {
		return err
	}
	paths, err := flowFiles(args, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	lines := cmd.OutOrStdout()
	if f.report == "json" {
		lines = cmd.ErrOrStderr()
	}
	out := syncWriter(lines)
	pal := paletteFor(lines)
	start := time.Now()

	// Load every file; one that does not load is a failed test of its own.
	reports := make([]junitFile, len(paths))
	var cases [][]*testCase // per file, in file order
	declared := map[string]bool{}
	for i, path := range paths {
		reports[i] = junitFile{Path: path}
		file, err := loadFlow(cmd.Context(), path)
		if err == errInterrupted {
			return err
		}
		if err != nil {
			problems := loadProblems(err)
			reports[i].Tests = []junitTest{{Name: filepath.Base(path), Errored: true, Type: "load",
				Message: fmt.Sprintf("%s does not pass the check (%s)", path, plural(len(problems), "problem")),
				Body:    strings.Join(problems, "\n") + "\n"}}
			cases = append(cases, nil)
			continue
		}
		var cs []*testCase
		for _, fl := range file.Flows {
			if filter != nil && !filter.MatchString(fl.Name) {
				continue
			}
			for _, in := range fl.Inputs {
				declared[in.Name] = true
			}
			cs = append(cs, &testCase{file: file, flow: fl})
		}
		cases = append(cases, cs)
	}
	for _, k := range sortedKeys(inputs) {
		if !declared[k] {
			return usageError{fmt.Sprintf("--input %s: no flow to run declares an input %q", k, k)}
		}
	}
	var all []*flow.Flow
	for _, cs := range cases {
		for _, tc := range cs {
			all = append(all, tc.flow)
		}
	}
	mask := secretsOf(all, inputs)
	out = masked(out, mask)
	stderr := masked(syncWriter(cmd.ErrOrStderr()), mask)

	// Report the files that did not load, then run the flows.
	passed, failed, skipped := 0, 0, 0
	var mu sync.Mutex
	var stop atomic.Bool // --fail-fast: a test failed, start no more
	report := func(path string, t junitTest) {
		mu.Lock()
		defer mu.Unlock()
		mark := pal.paint(pal.green, "PASS")
		if t.Skipped {
			skipped++
			fmt.Fprintf(out, "SKIP %s (%s): %s\n", t.Name, path, t.Message)
			return
		}
		if t.Failed || t.Errored {
			if f.failFast {
				stop.Store(true)
			}
			mark = pal.paint(pal.red, "FAIL")
			failed++
		} else {
			passed++
		}
		fmt.Fprintf(out, "%s %s (%s) %s\n", mark, t.Name, path, fmtDuration(t.Duration))
		if t.Failed || t.Errored {
			fmt.Fprint(out, indentLines(t.Body, "    "))
		}
	}
	for i, r := range reports {
		if cases[i] == nil && len(r.Tests) == 1 && r.Tests[0].Errored {
			report(r.Path, r.Tests[0])
		}
	}

	ctx := cmd.Context()
	sem := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for i := range cases {
		if len(cases[i]) > 0 {
			reports[i].Started = time.Now()
		}
		for _, tc := range cases[i] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
				switch {
				case ctx.Err() == nil && stop.Load():
					<-sem
					tc.res = junitTest{Name: tc.flow.Name, Line: tc.flow.Pos.Line, Skipped: true, Message: "not run: an earlier test failed (--fail-fast)"}
				case ctx.Err() == nil:
					tc.res, tc.result = runTest(ctx, f, tc, inputs, stderr)
					<-sem
				default:
					tc.res = junitTest{Name: tc.flow.Name, Line: tc.flow.Pos.Line, Errored: true, Type: flow.CodeCancelled,
						Message: "interrupted before it started", Body: "interrupted before it started\n"}
				}
				report(tc.file.Path, tc.res)
			}()
		}
	}
	wg.Wait()
	for i := range cases {
		for _, tc := range cases[i] {
			reports[i].Tests = append(reports[i].Tests, tc.res)
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintln(out, summary)
	for i := range reports {
		for j := range reports[i].Tests {
			t := &reports[i].Tests[j]
			t.Message, t.Body = mask.Mask(t.Message), mask.Mask(t.Body)
		}
	}
	if f.junit != "" {
		if err := writeJUnit(f.junit, reports, time.Since(start)); err != nil {
			return fmt.Errorf("writing the JUnit report: %w", err)
		}
	}
	if f.report == "json" {
		if err := writeJSONReport(cmd.OutOrStdout(), buildJSONReport(reports, cases, time.Since(start)), mask); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	if failed > 0 {
		return fmt.Errorf("%d of %s failed", failed, plural(passed+failed, "test"))
	}
	if passed == 0 {
		return fmt.Errorf("no flow matched --run %q", f.run)
	}
	return nil
}

// runTest runs one flow as a test; the result is nil when it could not
// run.
func runTest(ctx context.Context, f *testFlags, tc *testCase, inputs map[string]string, stderr io.Writer) (junitTest, *flow.Result) {
	t := junitTest{Name: tc.flow.Name, Line: tc.flow.Pos.Line}
	began := time.Now()
	res, err := tc.flow.Run(ctx, flow.WithInputs(declaredInputs(tc.flow, inputs)), f.clientOptions(stderr))
	t.Duration = time.Since(began)
	switch {
	case err != nil:
		t.Errored, t.Type = true, "run"
		t.Message = oneLine(err.Error(), 200)
		t.Body = strings.Join(loadProblems(err), "\n") + "\n"
	case res.Err != nil:
		t.Failed, t.Type = true, res.Err.Code
		t.Message = oneLine(res.Err.Code+": "+res.Err.Message, 200)
		t.Body = describeFlowError(tc.file.Path, res.Err, "")
		if res.Duration > 0 {
			t.Duration = res.Duration
		}
	default:
		if res.Duration > 0 {
			t.Duration = res.Duration
		}
	}
	return t, res
}

// indentLines prefixes every line of s.
func indentLines(s, indent string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(indent + l)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
