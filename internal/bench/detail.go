package bench

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/steady"
	"github.com/iotbench/iotbench/internal/timeline"
)

// Detail is what a measured phase saw besides its row: second by second, and every latency.
type Detail struct {
	Cell timeline.Cell
	// Latencies is the measured phase's histogram (µs), the one the row's percentiles come from.
	Latencies *hdrhistogram.Histogram
}

// detail hands the phase's timeline, with the target's resources second by second, to
// r.Detail, then each stage's (res.Stages) and each request's of a mix, as their rows (stageRows,
// kindRows) are keyed; a failure to keep them is a warning on the row, not a failed cell.
func (r *Runner) detail(row *results.Row, res load.Result, usage []resources.SecondUsage) {
	if r.Detail == nil || res.Latencies == nil {
		return
	}
	d := Detail{
		Cell:      timeline.Cell{Key: detailKey(*row), Warmup: res.WarmupTimeline, Measure: withUsage(res.Timeline, usage)},
		Latencies: res.Latencies,
	}
	if err := r.Detail(*row, d); err != nil {
		warn(row, "timeline and histograms not kept: "+err.Error())
		return
	}
	for k, part := range res.Stages {
		sr := *row
		sr.Scenario, sr.RequestedRPS, sr.WarmupTaken = stageScenario(row.Scenario, k), part.RequestedRate, 0
		d := Detail{Cell: timeline.Cell{Key: detailKey(sr), Measure: part.Timeline}, Latencies: part.Latencies}
		if err := r.Detail(sr, d); err != nil {
			warn(row, fmt.Sprintf("stage %d's timeline and histograms not kept: %v", k+1, err))
			return
		}
	}
	for _, k := range res.Kinds {
		if k.Latencies == nil {
			continue
		}
		// The request's row as far as its files need it: its name, rate and (no) warm-up.
		kr := *row
		kr.Scenario, kr.RequestedRPS, kr.WarmupTaken = kindScenario(row.Scenario, k.Kind), k.RequestedRate, 0
		d := Detail{Cell: timeline.Cell{Key: detailKey(kr), Measure: k.Timeline}, Latencies: k.Latencies}
		if err := r.Detail(kr, d); err != nil {
			warn(row, "request "+k.Kind+"'s timeline and histograms not kept: "+err.Error())
			return
		}
	}
}

// detailKey is the timeline key of row.
func detailKey(row results.Row) timeline.Key {
	return timeline.Key{Scenario: row.Scenario, Target: timeline.SideTarget(row.Target, row.Variant), Trial: row.Trial, RequestedRPS: row.RequestedRPS}
}

// withUsage fills the seconds' CPU and memory from the target's usage over the same seconds.
func withUsage(seconds []timeline.Second, usage []resources.SecondUsage) []timeline.Second {
	for i := range seconds {
		if i < len(usage) {
			seconds[i].CPUCores, seconds[i].MemoryBytes = usage[i].CPUCores, int64(usage[i].Memory)
		}
	}
	return seconds
}

// ramps says whether stages change their rate over the phase: a ramp, or steps between rates.
func ramps(stages []load.Stage) bool {
	for _, s := range stages {
		if s.From != s.To || s.From != stages[0].From {
			return true
		}
	}
	return false
}

// judgeSteady records in row whether the measured phase's seconds were in a steady state, with a
// warning in words for a phase that was not (docs/results.md, "Steady state"), which it returns;
// empty when steady or not judged.
func judgeSteady(row *results.Row, seconds []timeline.Second) string {
	v := steady.Judge(seconds)
	row.Steady, row.SteadyJudged = v.Steady(), v.Judged
	if words := v.String(); words != "" {
		warn(row, words)
		return words
	}
	return ""
}
