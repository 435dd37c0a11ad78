package ratelimit

import (
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	for s, want := range map[string]float64{
		"10/s": 10, "600/m": 10, "3600/h": 1, " 1.5 / second ": 1.5, "30/minute": 0.5, "7200/hour": 2,
	} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, msg := range map[string]string{
		"10": "calls per unit", "0/s": "positive", "-1/s": "positive", "x/s": "positive",
		"NaN/s": "positive", "Inf/s": "positive", "10/d": `unit "d"`, "/s": "positive",
	} {
		if _, err := ParseRate(s); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRate(%q) error = %v, want it to say %q", s, err, msg)
		}
	}
	if l := PerMinute(60, 5); l.Rate != 1 || l.Burst != 5 || l.Unlimited() {
		t.Errorf("PerMinute(60, 5) = %+v", l)
	}
	if !(Limit{}).Unlimited() {
		t.Error("the zero Limit is not unlimited")
	}
}
