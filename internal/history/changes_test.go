package history

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// TestDistrustedRowsAreNoPoints: every reason compare leaves a valid row out of a verdict makes
// the row no point of a series, under its own verdict.
func TestDistrustedRowsAreNoPoints(t *testing.T) {
	cases := []struct {
		name, verdict string
		spoil         func(*results.Row)
	}{
		{"trusted", "valid", func(*results.Row) {}},
		{"invalid", "invalid", func(r *results.Row) { r.Valid, r.InvalidReason = false, "success ratio 0.9 below 0.99" }},
		{"not steady", "not-steady", func(r *results.Row) { r.SteadyJudged, r.Steady = true, false }},
		{"still warming", "still-warming", func(r *results.Row) { r.JITJudged, r.JITBusy = true, r.Duration }},
		{"calibration missed", CalibrationMissed, func(r *results.Row) { r.Calibrated, r.CalibrationWithin = true, false }},
		{"calibration within", "valid", func(r *results.Row) { r.Calibrated, r.CalibrationWithin = true, true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results.Row{Scenario: "s", Target: "t", Trial: 1, Mode: "open", RequestedRPS: 100, Duration: 10 * time.Second, Valid: true,
				Requests: 1000, Successes: 1000, SuccessRatio: 1, ThroughputRPS: 100, LatencyP50: 20 * time.Millisecond}
			c.spoil(&r)
			p := pointOf(r, "", "c1", "")
			if p.Verdict != c.verdict || p.Usable() != (c.verdict == "valid") {
				t.Errorf("verdict %q (usable %v), want %q", p.Verdict, p.Usable(), c.verdict)
			}
		})
	}
}

// TestUndecided: a series with fewer usable points than a change point needs on both sides is
// undecided, naming why its other points are unusable; an optional metric no point records is
// no reason; no series at all is undecided too.
func TestUndecided(t *testing.T) {
	points := func(verdicts ...string) []Point {
		var out []Point
		for _, v := range verdicts {
			out = append(out, Point{Verdict: v, Values: map[string]float64{"p50": 20}})
		}
		return out
	}
	ten := strings.Fields(strings.Repeat("valid ", 10))
	key := Key{Scenario: "s", Target: "t"}
	p50, cpu := results.MustMetric("p50"), results.MustMetric("cpu")
	cases := []struct {
		name    string
		series  []Series
		metrics []results.Metric
		want    string
	}{
		{"ten usable", []Series{{key, points(ten...)}}, []results.Metric{p50}, ""},
		{"ten, one invalid", []Series{{key, points(append(ten[1:], "invalid")...)}}, []results.Metric{p50},
			"s / t: 9 usable point(s) of 10 (1 invalid): a change point needs 5 on each side, so none can be found: no verdict of p50"},
		{"ten, two distrusted", []Series{{key, points(append(ten[2:], CalibrationMissed, "not-steady")...)}}, []results.Metric{p50},
			"s / t: 8 usable point(s) of 10 (1 calibration-missed, 1 not-steady)"},
		{"four, all usable", []Series{{key, points("valid", "valid", "valid", "valid")}}, []results.Metric{p50}, "s / t: 4 usable point(s) of 4: a change point"},
		{"cpu not recorded", []Series{{key, points(ten...)}}, []results.Metric{p50, cpu}, ""},
		{"no series", nil, nil, "no point on branch main: nothing to judge"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(Undecided(c.series, c.metrics, DefaultDetection, "main"), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("undecided %q, want %q", got, c.want)
			}
		})
	}
}
