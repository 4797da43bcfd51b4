package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/sampling"
	"github.com/iotbench/iotbench/internal/timeline"
)

// seconds is a phase's timeline whose per-second p50 and p99 (ms) are p50s and twice them.
func seconds(p50s ...float64) []timeline.Second {
	out := make([]timeline.Second, len(p50s))
	for i, p := range p50s {
		d := time.Duration(p * float64(time.Millisecond))
		out[i] = timeline.Second{Index: i, Successes: 100, P50: d, P99: 2 * d}
	}
	return out
}

// TestSamplingChecksOnTheRow: each check's figures land in the row's columns, and a failed one
// adds a warning saying what it means for the figures.
func TestSamplingChecksOnTheRow(t *testing.T) {
	// Alternating seconds: independent (r < 0); a slow swing over several seconds: correlated.
	independent := seconds(10, 12, 9, 11, 10, 13, 9, 11, 10, 12, 9, 11, 10, 12)
	swinging := seconds(10, 11, 12, 13, 14, 13, 12, 11, 10, 11, 12, 13, 14, 13, 12, 11, 10)
	clumps2ms := sampling.Dispersion{Width: 250 * time.Microsecond, Windows: 80000, Mean: 10, Variance: 8,
		Wider: []sampling.Dispersion{{Width: 8 * time.Millisecond, Windows: 2500, Mean: 320, Variance: 6400}}}
	for _, c := range []struct {
		name        string
		res         load.Result
		arrival     bool // judged, as intended
		independent bool
		warns       []string
	}{
		{"as intended, independent", load.Result{Mode: load.Open, Arrival: arrival.Uniform, Sends: sampling.Dispersion{Width: 10 * time.Millisecond, Windows: 200, Mean: 10, Variance: 0.3}, Timeline: independent},
			true, true, nil},
		{"poisson sends on a uniform schedule, correlated seconds", load.Result{Mode: load.Open, Arrival: arrival.Uniform, Sends: sampling.Dispersion{Width: 10 * time.Millisecond, Windows: 200, Mean: 10, Variance: 10}, Timeline: swinging},
			false, false, []string{"arrivals not as intended: the sends came in clumps (dispersion 1.00", "seconds not independent: the per-second p50 follows the second before it", "worth about"}},
		// Clumps of 2 ms at 40,000 rps (index 0.8 in windows of ten requests, 20 in windows of
		// 8 ms): within the 5 ms of own delay a p99 of 50 ms allows, past the 1 ms a p99 of 5 ms
		// allows.
		{"clumps narrower than the own delay allowed", load.Result{Mode: load.Open, Arrival: arrival.Uniform, Latency: latency.Summary{P99: 50 * time.Millisecond}, Sends: clumps2ms, Timeline: independent},
			true, true, nil},
		{"clumps wider than the own delay allowed", load.Result{Mode: load.Open, Arrival: arrival.Uniform, Latency: latency.Summary{P99: 5 * time.Millisecond}, Sends: clumps2ms, Timeline: independent},
			false, true, []string{"(dispersion 20.00 in windows of 8.00 ms; evenly spaced is near 0, a Poisson process 1), running 2.00 ms ahead of or behind their pace where the generator may add 1.00 ms"}},
		{"closed loop", load.Result{Mode: load.Closed, Timeline: independent}, false, true, nil},
		// 256 connections over 30 s answering 60,000 times: ±8.5 of 2,000 rps, under 2%.
		{"closed loop, a fine count", load.Result{Mode: load.Closed, InFlightLimit: 256, PeakInFlight: 256, Duration: 30 * time.Second, Answered: 60000, Timeline: independent}, false, true, nil},
		// seed 002's Tomcat at 50 threads: 100 connections over 30 s, 261 answers (8.7 rps).
		{"closed loop, a coarse count", load.Result{Mode: load.Closed, InFlightLimit: 100, PeakInFlight: 100, Duration: 30 * time.Second, Answered: 261, Timeline: independent}, false, true,
			[]string{"count coarse: throughput within ±3.33 rps (38%) by the count alone, each of 100 users answering one time more or fewer over 30s", "a phase of 9m35s would hold it within 2%"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var row results.Row
			fill(&row, c.res)
			row.Duration = c.res.Duration // the cell's, from its settings
			judgeSampling(&row, c.res)
			if c.res.Mode == load.Open && (!row.ArrivalJudged || row.ArrivalAsIntended != c.arrival) {
				t.Errorf("arrival judged %v, as intended %v; want judged, %v", row.ArrivalJudged, row.ArrivalAsIntended, c.arrival)
			}
			if c.res.Mode == load.Closed && row.ArrivalJudged {
				t.Error("a closed loop's arrivals judged")
			}
			if !row.SecondsJudged || row.SecondsIndependent != c.independent || (c.independent && row.SecondsEffectiveN < float64(len(c.res.Timeline)-1)) {
				t.Errorf("seconds judged %v, independent %v, r %.2f, n_eff %.1f; want independent %v", row.SecondsJudged, row.SecondsIndependent, row.SecondsLag1R, row.SecondsEffectiveN, c.independent)
			}
			for _, w := range c.warns {
				if !strings.Contains(row.Warnings, w) {
					t.Errorf("warnings %q lack %q", row.Warnings, w)
				}
			}
			if c.warns == nil && row.Warnings != "" {
				t.Errorf("warnings %q; want none", row.Warnings)
			}
		})
	}
	// Too few seconds: not judged.
	var row results.Row
	judgeSampling(&row, load.Result{Mode: load.Closed, Timeline: seconds(1, 2, 3)})
	if row.SecondsJudged {
		t.Error("3 seconds judged")
	}
}
