package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolwire/toolwire/flow"
)

// What toolwire test reports beyond its text lines and JUnit: the JSON
// report of --report json, and the masking of secret inputs in everything
// the flow commands print.

// maskWriter masks secret inputs in what is written through it. The
// writers it wraps get whole lines or log records per Write (the step
// printer, slog), so a secret is never cut between two writes.
type maskWriter struct {
	w io.Writer
	m *flow.Masker
}

func (mw maskWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(mw.w, mw.m.Mask(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// masked wraps w when m masks anything.
func masked(w io.Writer, m *flow.Masker) io.Writer {
	if m.Empty() {
		return w
	}
	return maskWriter{w: w, m: m}
}

// secretsOf masks the secret inputs of every flow given: the values given
// with --input or --inputs-file, else their defaults (each flow's
// Flow.Masker, over the inputs of them all).
func secretsOf(flows []*flow.Flow, inputs map[string]string) *flow.Masker {
	var all flow.Flow
	for _, fl := range flows {
		all.Inputs = append(all.Inputs, fl.Inputs...)
	}
	return all.Masker(inputs)
}

// jsonReport is the document --report json prints (version 1; the schema
// is in docs/flows.md, "JSON report").
type jsonReport struct {
	Version    int        `json:"version"`
	Passed     int        `json:"passed"`
	Failed     int        `json:"failed"`
	Skipped    int        `json:"skipped"`
	DurationMs float64    `json:"durationMs"`
	Files      []jsonFile `json:"files"`
}

type jsonFile struct {
	Path  string     `json:"path"`
	Flows []jsonFlow `json:"flows"`
}

type jsonFlow struct {
	Name       string         `json:"name"`
	Line       int            `json:"line,omitempty"`
	Status     string         `json:"status"` // passed, failed, error, skipped
	DurationMs float64        `json:"durationMs"`
	Error      *jsonError     `json:"error"`
	Outputs    map[string]any `json:"outputs,omitempty"`
	Steps      []jsonStep     `json:"steps"`
}

type jsonError struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Step     string   `json:"step,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	Data     any      `json:"data,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

type jsonStep struct {
	Path       string     `json:"path"`
	Name       string     `json:"name,omitempty"`
	Kind       string     `json:"kind"`
	Line       int        `json:"line"`
	Column     int        `json:"column"`
	Status     string     `json:"status"`
	Attempts   int        `json:"attempts"`
	DurationMs float64    `json:"durationMs"`
	Error      *jsonError `json:"error"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func jsonErrorOf(e *flow.Error) *jsonError {
	if e == nil {
		return nil
	}
	return &jsonError{Code: e.Code, Message: e.Message, Step: e.Step, Line: e.Pos.Line, Column: e.Pos.Column, Data: e.Data}
}

// buildJSONReport turns the outcomes into the report: files in the order
// given, flows in file order, steps in order of completion.
func buildJSONReport(files []junitFile, cases [][]*testCase, total time.Duration) jsonReport {
	rep := jsonReport{Version: 1, DurationMs: ms(total), Files: []jsonFile{}}
	for i, f := range files {
		jf := jsonFile{Path: f.Path, Flows: []jsonFlow{}}
		for j, t := range f.Tests {
			jfl := jsonFlow{Name: t.Name, Line: t.Line, DurationMs: ms(t.Duration), Steps: []jsonStep{}}
			switch {
			case t.Skipped:
				jfl.Status = "skipped"
				rep.Skipped++
			case t.Errored:
				jfl.Status = "error"
				jfl.Error = &jsonError{Code: t.Type, Message: t.Message, Problems: nonEmptyLines(t.Body)}
				rep.Failed++
			case t.Failed:
				jfl.Status = "failed"
				rep.Failed++
			default:
				jfl.Status = "passed"
				rep.Passed++
			}
			var res *flow.Result
			if i < len(cases) && j < len(cases[i]) {
				res = cases[i][j].result
			}
			if res != nil {
				if t.Failed {
					jfl.Error = jsonErrorOf(res.Err)
				}
				jfl.Outputs = res.Outputs
				for _, s := range res.Steps {
					jfl.Steps = append(jfl.Steps, jsonStep{Path: s.Path, Name: s.Name, Kind: s.Kind, Line: s.Pos.Line, Column: s.Pos.Column,
						Status: string(s.Status), Attempts: s.Attempts, DurationMs: ms(s.Duration), Error: jsonErrorOf(s.Err)})
				}
			}
			jf.Flows = append(jf.Flows, jfl)
		}
		rep.Files = append(rep.Files, jf)
	}
	return rep
}

// writeJSONReport prints the report as indented JSON, masked once more
// as text (the values in it are masked already).
func writeJSONReport(w io.Writer, rep jsonReport, m *flow.Masker) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("the JSON report: %w", err)
	}
	_, err = fmt.Fprintln(w, m.Mask(string(b)))
	return err
}

// nonEmptyLines splits s into its non-empty lines.
func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
