package bench

import (
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/sampling"
	"github.com/iotbench/iotbench/internal/timeline"
)

// judgeSampling records the sampling checks of a measured phase in row (docs/selfcheck.md):
// whether the requests were sent as the intended arrival process sends them, how independent
// its seconds were, and whether a closed loop's count is fine enough for its throughput (row,
// filled from res already); a failed check adds a warning saying what it means for the row's
// figures.
func judgeSampling(row *results.Row, res load.Result) {
	if res.Mode == load.Open {
		a := sampling.JudgeArrivals(res.Arrival, res.Sends, load.LagAllowed(res.Latency.P99, res.ExpectedLatency))
		row.ArrivalJudged, row.ArrivalAsIntended, row.ArrivalDispersion = a.Judged, a.Fits, a.Index
		if words := a.String(); words != "" {
			warn(row, words)
		}
	}
	if words := row.CountWarning(); words != "" {
		warn(row, words)
	}
	in := independence(res.Timeline)
	if in.Figure == "" {
		return
	}
	row.SecondsJudged, row.SecondsIndependent = true, !in.Correlated()
	row.SecondsLag1R, row.SecondsEffectiveN = in.R, in.EffectiveN
	if words := in.String(); words != "" {
		warn(row, words)
	}
}

// independence judges the per-second p50 and p99 of the seconds the steady-state test judges
// (the last, cut short, left out), from as many seconds as that test needs.
func independence(seconds []timeline.Second) sampling.Independence {
	if len(seconds) > 0 {
		seconds = seconds[:len(seconds)-1]
	}
	var p50, p99 []float64
	for _, s := range seconds {
		if s.Successes > 0 {
			p50 = append(p50, s.P50.Seconds()*1000)
			p99 = append(p99, s.P99.Seconds()*1000)
		}
	}
	if len(p50) < minIndependenceSeconds {
		return sampling.Independence{}
	}
	return sampling.JudgeIndependence([]string{"p50", "p99"}, [][]float64{p50, p99})
}

// minIndependenceSeconds is the fewest seconds whose lag-1 autocorrelation is judged: below
// it, the estimate's own spread (about 1/√n) is as large as the bar.
const minIndependenceSeconds = 8
