package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/scenario"
)

// Reproduction redoes published experiments: each of their runs is a run like any other, into
// a file of its own (experiment.RunPath), continued where an earlier reproduction stopped.
type Reproduction struct {
	// Scenarios is the scenario matrix (read from ScenariosPath), Experiments the experiments.
	Scenarios     *scenario.File
	ScenariosPath string
	Experiments   *experiment.File
	Names         []string
	// Runs, when set, are the only runs measured (by name).
	Runs []string
	// Trials and Duration shorten every run (0: as the file says).
	Trials   int
	Duration time.Duration
	Out      string
	CABundle string
	Log      io.Writer
	// Done, when set, hears that experiment name's runs are all recorded.
	Done func(name string) error
}

// Reproduce runs every run of the experiments named, in order. Every plan is made first, so that
// a mistake in the files is found before an hour is spent.
func (rs *Runs) Reproduce(ctx context.Context, rp Reproduction) error {
	if rp.Log == nil {
		rp.Log = io.Discard
	}
	allowed, err := rs.Effects.AllowedCPUs()
	if err != nil {
		return err
	}
	for _, name := range rp.Names {
		for _, r := range rp.Experiments.Experiments[name].Runs {
			if _, err := plan.Make(rp.Scenarios, r.Scenario, rp.overrides(r, allowed), allowed); err != nil {
				return fmt.Errorf("experiment %s, run %s: %w", name, r.Name, PlanError(err))
			}
		}
	}
	for _, name := range rp.Names {
		e := rp.Experiments.Experiments[name]
		fmt.Fprintf(rp.Log, "experiment %s: %s (%s)\n", name, e.Title, e.Source)
		for _, r := range rp.measured(e) {
			s := Setup{
				Scenario: &Scenario{File: rp.ScenariosPath, Name: r.Scenario, Overrides: rp.overrides(r, allowed)},
				File:     experiment.RunPath(rp.Out, name, r.Name), NeedsCPUs: r.NeedsCPUs,
				CABundle: rp.CABundle, Name: r.Name, Log: rp.Log,
			}
			if r.FindMax != nil {
				var err error
				if s.FindMax, err = rp.findMax(r.FindMax); err != nil {
					return fmt.Errorf("experiment %s, run %s: %w", name, r.Name, err)
				}
			}
			if _, err := rs.Execute(ctx, s); err != nil {
				if errors.Is(err, context.Canceled) {
					fmt.Fprintf(rp.Log, "interrupted: the same command measures the rest (the files in %s keep every cell done)\n", rp.Out)
				}
				return err
			}
		}
		if rp.Done != nil {
			if err := rp.Done(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// measured are the runs of e to measure: those named in Runs, or all of them.
func (rp Reproduction) measured(e *experiment.Experiment) []*experiment.Run {
	if len(rp.Runs) == 0 {
		return e.Runs
	}
	var runs []*experiment.Run
	for _, r := range e.Runs {
		if slices.Contains(rp.Runs, r.Name) {
			runs = append(runs, r)
		}
	}
	return runs
}

// overrides are a run's settings over its scenario's, shortened by the reproduction's. A run that
// needs more target CPUs than the automatic split gives (a quarter of allowed) gets the last
// NeedsCPUs of them when the host has one more for the generator and its scenario sets no cpuset:
// so a host of NeedsCPUs+1 CPUs runs it, as the experiments' page says.
func (rp Reproduction) overrides(r *experiment.Run, allowed []int) plan.Overrides {
	over := plan.Overrides{Targets: r.Targets, Load: r.LoadSpec()}
	if s := rp.Scenarios.Scenarios[r.Scenario]; s != nil && s.CPUs == "" && r.NeedsCPUs > 0 && len(allowed) > r.NeedsCPUs {
		if auto, _, err := plan.SplitCPUs(allowed, ""); err == nil && len(auto) < r.NeedsCPUs {
			sorted := slices.Sorted(slices.Values(allowed))
			over.CPUs = cpuset.Format(sorted[len(sorted)-r.NeedsCPUs:])
		}
	}
	if rp.Trials > 0 {
		over.Load.Trials = rp.Trials
		over.Load.Give(loadspec.Trials)
	}
	if rp.Duration > 0 {
		over.Load.Duration = rp.Duration
		over.Load.Give(loadspec.Duration)
	}
	return over
}

// findMax is a run's search, its step shortened to the reproduction's duration when it has one.
func (rp Reproduction) findMax(m *experiment.FindMax) (*FindMax, error) {
	slo, step, resolution := m.SLO, m.Step, m.Resolution
	if slo == "" {
		slo = DefaultSLO
	}
	if step == 0 {
		step = DefaultStep
	}
	if rp.Duration > 0 {
		step = rp.Duration
	}
	if resolution == "" {
		resolution = DefaultResolution
	}
	return NewFindMax(slo, step, resolution, "")
}
