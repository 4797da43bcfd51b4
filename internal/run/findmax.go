package run

import (
	"context"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
)

// A search's defaults, as run --find-max and an experiment's find_max take them.
const (
	DefaultSLO        = "p99<100ms,errors<0.1%"
	DefaultStep       = 10 * time.Second
	DefaultResolution = "10%"
)

// maxRateLimit bounds the search: above what one generator core sends here (bun-native met the
// earlier bound, 50,000 rps, with the generator at 0.55 of its core), so that the generator's
// limit, said as such, ends a search first; a search that meets it says its maximum is at least
// that.
const maxRateLimit = 100000

// NewFindMax checks the find-max settings: the SLO every step must meet, how long a step is
// held, the precision of the maximum (a share of the rate, 10%, or rps, 200), and the
// percentages of the maximum at which latency is measured once it is found ("50%,75%,90%";
// empty: none).
func NewFindMax(slo string, step time.Duration, resolution, latencyAt string) (*FindMax, error) {
	s, err := maxrate.ParseSLO(slo)
	if err != nil {
		return nil, exitcode.Flag("slo", "", err)
	}
	if step <= 0 {
		return nil, exitcode.Usagef("--step must be positive (e.g. 10s)")
	}
	res, err := maxrate.ParseResolution(resolution)
	if err != nil {
		return nil, exitcode.Flag("resolution", resolution, err)
	}
	at, err := maxrate.ParseLatencyAt(latencyAt)
	if err != nil {
		return nil, exitcode.Flag("latency-at", latencyAt, err)
	}
	return &FindMax{bench.MaxSearch{SLO: s, Step: step, StepWarmup: step / 2,
		Ramp: max(step, minRampDoubling), Search: maxrate.Config{Resolution: res, Limit: maxRateLimit, LatencyAt: at}}}, nil
}

// minRampDoubling bounds how fast the ramp that brackets a search climbs. It is judged by the
// second and breaks after maxrate.RampBreak failing ones: doubling every 4 s, the rate rises 19% a
// second, and the ramp ends 4 s after its first failing second began, at about twice its rate.
const minRampDoubling = 4 * time.Second

// findMax searches every target of p and returns their maxima with the steps' rows. The search
// starts at the plan's rate, else 100 rps.
func findMax(ctx context.Context, r *bench.Runner, p *plan.Plan, m *FindMax) ([]maxrate.Outcome, []results.Row, error) {
	start := p.Cells[0].Load.Model.Rate
	if start == 0 {
		start = 100
	}
	m.Search.Start = start
	m.Search.Limit = max(m.Search.Limit, start)
	// The steps' rows, for what each target's maximum costs.
	var rows []results.Row
	record := r.Record
	r.Record = func(row results.Row) error { rows = append(rows, row); return record(row) }
	found, err := r.FindMax(ctx, p, m.MaxSearch)
	return found, rows, err
}
