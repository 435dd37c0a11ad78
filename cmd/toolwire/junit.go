package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// JUnit XML as CI systems read it (the Jenkins/Ant schema): one
// <testsuite> per flow file, one <testcase> per flow, a <failure> for a flow
// that failed (its message the error's first line, its body the whole
// explanation).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	File      string      `xml:"file,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

// junitSkipped marks a test that did not run (--fail-fast after a failure).
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// junitTest is one test's outcome as the report needs it.
type junitTest struct {
	Name     string
	Line     int
	Duration time.Duration
	// Failed: the flow ran and failed (a <failure>); Errored: it could
	// not run (bad inputs, a manifest that does not load: an <error>).
	Failed, Errored bool
	// Skipped: it never ran (--fail-fast stopped the run first).
	Skipped bool
	Type    string // the error code
	Message string // one line
	Body    string // the full explanation
}

// junitFile is one flow file and its tests, in file order.
type junitFile struct {
	Path    string
	Started time.Time
	Tests   []junitTest
}

func junitSeconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// buildJUnit turns the outcomes into the report's document.
func buildJUnit(files []junitFile, total time.Duration) junitSuites {
	doc := junitSuites{Name: "toolwire test", Time: junitSeconds(total), Suites: []junitSuite{}}
	for _, f := range files {
		s := junitSuite{Name: f.Path, File: f.Path, Cases: []junitCase{}}
		if !f.Started.IsZero() {
			s.Timestamp = f.Started.UTC().Format("2006-01-02T15:04:05")
		}
		var sum time.Duration
		for _, t := range f.Tests {
			c := junitCase{Name: t.Name, Classname: f.Path, Time: junitSeconds(t.Duration), File: f.Path, Line: t.Line}
			fail := &junitFailure{Message: t.Message, Type: t.Type, Body: t.Body}
			switch {
			case t.Skipped:
				c.Skipped = &junitSkipped{Message: t.Message}
				s.Skipped++
			case t.Errored:
				c.Error = fail
				s.Errors++
			case t.Failed:
				c.Failure = fail
				s.Failures++
			}
			s.Tests++
			sum += t.Duration
			s.Cases = append(s.Cases, c)
		}
		s.Time = junitSeconds(sum)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	return doc
}

// writeJUnit writes the report to path, creating its directory; the file
// is replaced whole (written next to it, then renamed).
func writeJUnit(path string, files []junitFile, total time.Duration) error {
	out, err := xml.MarshalIndent(buildJUnit(files, total), "", "  ")
	if err != nil {
		return err
	}
	data := append([]byte(xml.Header), out...)
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".junit-*.xml")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
