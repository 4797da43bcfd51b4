package cli

import (
	"context"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/report"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
)

// maxRateLimit bounds the search: the generator's in-flight bound caps what one machine can send
// well below it.
const maxRateLimit = 50000

// maxSearch reads the --find-max flags; nil when the run measures at one rate.
func (o *RunOptions) maxSearch() (*bench.MaxSearch, error) {
	if !o.FindMax {
		for _, name := range []string{"slo", "step", "resolution"} {
			if o.set(name) {
				return nil, usagef("--%s belongs to --find-max", name)
			}
		}
		return nil, nil
	}
	if o.Conns > 0 {
		return nil, usagef("--find-max searches an open-loop rate: drop --connections (--rate sets where the search starts)")
	}
	slo, err := maxrate.ParseSLO(o.SLO)
	if err != nil {
		return nil, flagErr("slo", "", err)
	}
	if o.Step <= 0 {
		return nil, usagef("--step must be positive (e.g. 10s)")
	}
	resolution, err := maxrate.ParseResolution(o.Resolution)
	if err != nil {
		return nil, flagErr("resolution", o.Resolution, err)
	}
	return &bench.MaxSearch{SLO: slo, Step: o.Step, StepWarmup: o.Step / 2, Cooldown: 2 * time.Second,
		Search: maxrate.Config{Resolution: resolution, Limit: maxRateLimit}}, nil
}

// runFindMax searches every target of p and reports their maxima. The search starts at --rate,
// else the scenario's rate, else 100 rps.
func runFindMax(ctx context.Context, o *RunOptions, r *bench.Runner, p *plan.Plan, m *bench.MaxSearch, csvPath string) error {
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
	found, err := r.FindMax(ctx, p, *m)
	if len(found) > 0 {
		withSLO := func(ov *summary.Overview) {
			for i := range ov.Scenarios {
				ov.Scenarios[i].SLO = m.SLO.String()
			}
		}
		table := func(w io.Writer) error {
			if err := report.WriteMax(w, p.Name, p.Name+results.FindMaxSuffix, m.SLO, m.Step, m.Search.Resolution, found); err != nil {
				return err
			}
			ov := summary.FromRows(rows)
			withSLO(ov)
			for _, sc := range ov.Scenarios {
				if err := report.WriteMaxima(w, sc); err != nil {
					return err
				}
			}
			return nil
		}
		if werr := o.writeRunOutput(csvPath, table, withSLO); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	for _, f := range found {
		if f.Failed != "" || f.Max == 0 {
			return errInvalidCells
		}
	}
	return nil
}
