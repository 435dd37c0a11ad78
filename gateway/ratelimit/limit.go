package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limit is a token bucket: Rate tokens per second refill it, up to Burst.
// The zero Limit means no limit for its scope.
type Limit struct {
	Rate  float64 // tokens per second
	Burst int
}

// PerSecond is n calls a second with bursts of burst.
func PerSecond(n float64, burst int) Limit { return Limit{Rate: n, Burst: burst} }

// PerMinute is n calls a minute with bursts of burst.
func PerMinute(n float64, burst int) Limit { return Limit{Rate: n / 60, Burst: burst} }

// Unlimited reports whether l is the zero Limit.
func (l Limit) Unlimited() bool { return l == Limit{} }

func (l Limit) validate() error {
	switch {
	case l.Unlimited():
		return nil
	case math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || l.Rate <= 0:
		return fmt.Errorf("rate %v is not a positive number of calls per second", l.Rate)
	case l.Burst < 1:
		return fmt.Errorf("burst %d must be at least 1", l.Burst)
	}
	return nil
}

// ParseRate reads a rate as a config file writes it, a number of calls
// per unit: "10/s", "600/m", "1000/h" (or "/second", "/minute", "/hour"),
// and returns it in calls per second.
func ParseRate(s string) (float64, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("rate %q: want calls per unit, like 10/s or 600/m", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
		return 0, fmt.Errorf("rate %q: %q is not a positive number", s, num)
	}
	var per time.Duration
	switch strings.TrimSpace(unit) {
	case "s", "second":
		per = time.Second
	case "m", "minute":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	default:
		return 0, fmt.Errorf("rate %q: unit %q is not s, m or h", s, unit)
	}
	return n / per.Seconds(), nil
}
