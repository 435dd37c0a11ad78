package otc_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testclock"
	"github.com/toolwire/toolwire/otc"
)

// seedCases are seed 004's seven examples and the calls that produce them.
var seedCases = []struct {
	file   string
	toolID string
	input  map[string]any
}{
	{"1_calculator_add.json", "Calculator.Add", map[string]any{"a": 7, "b": 8}},
	{"2_doorbell_ring.json", "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell42"}},
	{"3_system_gettimestamp.json", "System.GetTimestamp", nil},
	{"4_gmail_getemails.json", "Gmail.GetEmails@1.0.0", map[string]any{}},
	{"5_sms_send.json", "SMS.Send@1", map[string]any{"phone_number": "+15551234567", "message": "Your code is 1234"}},
	{"6_error.json", "Weather.GetForecast", map[string]any{"city": "Oslo"}},
	{"7_error_retry.json", "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell1"}},
}

// TestSeedExamples produces each of seed 004's CallToolResponse examples
// with a real tool through the real handler over HTTP and compares every
// field. The request sends the example's call_id, and the handler's clock
// steps by the example's duration, so those two match too.
func TestSeedExamples(t *testing.T) {
	env := defaultSeedEnv(t)
	clock := testclock.New(time.Unix(1_700_000_000, 0))
	ts := serve(t, newSeedServer(t, env), otc.WithClock(clock.Now))
	checkSeedExamples(t, ts, clock)
	env.mu.Lock()
	defer env.mu.Unlock()
	if len(env.rung) != 1 || env.rung[0] != "doorbell42" {
		t.Errorf("doorbells rung: %v", env.rung)
	}
	if len(env.sent) != 1 || env.sent[0].Message != "Your code is 1234" {
		t.Errorf("SMS sent: %+v", env.sent)
	}
}

// checkSeedExamples runs the seven seed calls against an OTC endpoint.
func checkSeedExamples(t *testing.T, ts *httptest.Server, clock *testclock.Clock) {
	t.Helper()
	corrected := loadSchema(t, "call-tool-response.json")
	for _, tc := range seedCases {
		t.Run(tc.file, func(t *testing.T) {
			want := readJSON(t, filepath.Join("testdata", "seed004", tc.file))
			clock.SetStep(time.Duration(want["duration"].(float64)) * time.Millisecond)
			req := map[string]any{"tool_id": tc.toolID, "call_id": want["call_id"]}
			if tc.input != nil {
				req["input"] = tc.input
			}
			r := call(t, ts, req, nil)
			wantStatus(t, r, 200)
			if r.body["$schema"] != "otc://1.0" {
				t.Errorf(`"$schema" = %v, want otc://1.0`, r.body["$schema"])
			}
			got, ok := r.body["result"].(map[string]any)
			if !ok {
				t.Fatalf("no result object: %s", r.raw)
			}
			for _, d := range diffJSON("result", want, got) {
				t.Error(d)
			}
			if err := validate(t, corrected, got); err != nil {
				t.Errorf("response fails the corrected CallToolResponse schema: %v", err)
			}
		})
	}
}

// TestSeedExamplesWithoutCallID checks the parts the seed leaves to the
// server: a generated UUID call_id and a measured duration.
func TestSeedExamplesWithoutCallID(t *testing.T) {
	ts := serve(t, newSeedServer(t, defaultSeedEnv(t)))
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for _, tc := range seedCases {
		r := call(t, ts, map[string]any{"tool_id": tc.toolID, "input": tc.input}, nil)
		wantStatus(t, r, 200)
		res := r.body["result"].(map[string]any)
		id, _ := res["call_id"].(string)
		if !uuid.MatchString(id) || seen[id] {
			t.Errorf("%s: call_id %q is not a fresh UUID", tc.toolID, id)
		}
		seen[id] = true
		if d, ok := res["duration"].(float64); !ok || d < 0 {
			t.Errorf("%s: duration %v", tc.toolID, res["duration"])
		}
	}
}

// diffJSON lists every difference between two decoded JSON values.
func diffJSON(path string, want, got any) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []string
		for _, k := range names {
			wv, inW := wm[k]
			gv, inG := gm[k]
			switch {
			case !inW:
				out = append(out, fmt.Sprintf("%s.%s: unexpected, got %v", path, k, gv))
			case !inG:
				out = append(out, fmt.Sprintf("%s.%s: missing, want %v", path, k, wv))
			default:
				out = append(out, diffJSON(path+"."+k, wv, gv)...)
			}
		}
		return out
	}
	wa, wok := want.([]any)
	ga, gok := got.([]any)
	if wok && gok && len(wa) == len(ga) {
		var out []string
		for i := range wa {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), wa[i], ga[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %#v, want %#v", path, got, want)}
	}
	return nil
}
