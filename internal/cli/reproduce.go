package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// ReproduceOptions are the flags of `iotbench reproduce`.
type ReproduceOptions struct {
	Streams Streams

	File        string // scenarios.yaml
	Experiments string // experiments.yaml
	Names       []string
	// Runs, when set, are the only runs measured (by name); the others' files stay as they are.
	Runs []string
	Out  string
	// Trials and Duration shorten every run (0: as the file says): a quick look, not the
	// published experiment.
	Trials   int
	Duration time.Duration
	CABundle string
	// Effects are the runs' effects on the world; those left nil are Docker's (run.Docker). The
	// engine is reached only when a run can be measured on this host.
	Effects run.Effects

	// set records which flags the user gave.
	set func(name string) bool
}

// NewCmdReproduce builds `iotbench reproduce`; runF replaces the behaviour in tests.
func NewCmdReproduce(s Streams, runF func(context.Context, *ReproduceOptions) error) *cobra.Command {
	o := &ReproduceOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "reproduce NAME|all",
		Short: "Redo a published experiment (experiments.yaml): its runs, then its claims checked",
		Long: `Run every run of a published experiment (as published, and iotbench's corrected variants) and
check each of its claims against the source's own figures and the rows: holds, holds in direction
not in size, does not hold, inconclusive (with what would decide it), impossible as published, or
needs a larger host (docs/experiments.md states the rule of each). "all" runs every experiment, in
the file's order.

Each run writes <out>/<experiment>/<run>.csv. The command is resumable: run it again and it
measures only the cells missing from those files (same seed and settings), so an interrupted
experiment goes on where it stopped. --runs measures only the runs named (to measure one again,
move its file away first); the claims are still checked against every run's file. A run that
needs N target CPUs (a cluster, a worker pool) gets the last N CPUs on a host of N+1 or more; on
a smaller host it is not run: its cells are recorded as skipped, in seconds, and its claims need
a larger host.

iotbench claims prints the report again from the files, without running anything.`,
		Example: `  iotbench list                                  # the experiments, with their sources
  iotbench reproduce virtual-threads-500ms       # one experiment, as experiments.yaml says
  iotbench reproduce all --out results/experiments
  iotbench reproduce iot-ingest --runs realistic-corrected   # that run only; the others' files are kept
  iotbench reproduce all --trials 2 --duration 5s --out /tmp/short   # short: proves the chain, decides few claims`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name an experiment of experiments.yaml, or all (iotbench list shows them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			o.set = func(name string) bool { return cmd.Flags().Changed(name) }
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runReproduce(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "scenarios.yaml", "scenario matrix")
	f.StringVar(&o.Experiments, "experiments", "experiments.yaml", "the published experiments")
	f.StringVar(&o.Out, "out", "results/experiments", "folder of the runs' files, one folder per experiment")
	f.StringSliceVar(&o.Runs, "runs", nil, "measure only these runs of the experiments named (default: all their runs)")
	f.IntVar(&o.Trials, "trials", 0, "trials per target in every run (default: each run's)")
	f.DurationVar(&o.Duration, "duration", 0, "measured phase of every cell (default: each run's)")
	addCABundleFlag(f, &o.CABundle)
	return cmd
}

// loadExperiments reads the scenario matrix and the experiments, and resolves names ("all").
func loadExperiments(file, experiments string, names []string) (*scenario.File, *experiment.File, []string, error) {
	sf, err := scenario.Load(file)
	if err != nil {
		return nil, nil, nil, usageError(err)
	}
	ef, err := experiment.Load(experiments, sf)
	if err != nil {
		return nil, nil, nil, usageError(err)
	}
	if len(names) == 0 || slices.Contains(names, "all") {
		if len(names) > 1 {
			return nil, nil, nil, usagef("give experiment names or all, not both")
		}
		return sf, ef, ef.Order, nil
	}
	for _, n := range names {
		if ef.Experiments[n] == nil {
			return nil, nil, nil, usagef("no experiment %q in %s (known: %s, or all)", n, experiments, strings.Join(ef.Order, ", "))
		}
	}
	return sf, ef, names, nil
}

func runReproduce(ctx context.Context, o *ReproduceOptions) error {
	given := func(name string) bool { return o.set != nil && o.set(name) }
	if given("trials") || o.Trials != 0 {
		if err := loadspec.CheckTrials(o.Trials); err != nil {
			return flagErr("trials", fmt.Sprint(o.Trials), err)
		}
	}
	if given("duration") || o.Duration != 0 {
		if err := loadspec.CheckPhase(o.Duration); err != nil {
			return flagErr("duration", loadspec.FormatDuration(o.Duration), err)
		}
	}
	sf, ef, names, err := loadExperiments(o.File, o.Experiments, o.Names)
	if err != nil {
		return err
	}
	if err := checkRuns(ef, names, o.Runs); err != nil {
		return err
	}
	runs := run.New(o.Effects)
	defer runs.Close()
	return runs.Reproduce(ctx, run.Reproduction{
		Scenarios: sf, ScenariosPath: o.File, Experiments: ef, Names: names, Runs: o.Runs,
		Trials: o.Trials, Duration: o.Duration, Out: o.Out, CABundle: o.CABundle, Log: o.Streams.ErrOut,
		// Each experiment's claims, as soon as its runs are recorded.
		Done: func(name string) error {
			measured, err := experiment.ReadMeasured(o.Out, ef, []string{name})
			if err != nil {
				return err
			}
			return experiment.Write(o.Streams.Out, experiment.Text, ef, sf, []string{name}, measured)
		},
	})
}

// checkRuns refuses a run name (--runs) that no experiment of names has.
func checkRuns(ef *experiment.File, names, runs []string) error {
	var known []string
	for _, n := range names {
		for _, r := range ef.Experiments[n].Runs {
			known = append(known, r.Name)
		}
	}
	for _, r := range runs {
		if !slices.Contains(known, r) {
			return flagErr("runs", r, fmt.Errorf("no such run in %s (its runs: %s)", strings.Join(names, ", "), strings.Join(known, ", ")))
		}
	}
	return nil
}

// ClaimsOptions are the flags of `iotbench claims`.
type ClaimsOptions struct {
	Streams     Streams
	File        string
	Experiments string
	Names       []string
	Results     string
	Format      string
}

// NewCmdClaims builds `iotbench claims`; runF replaces the behaviour in tests.
func NewCmdClaims(s Streams, runF func(*ClaimsOptions) error) *cobra.Command {
	o := &ClaimsOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "claims [NAME…|all]",
		Short: "Check the published claims against the rows of reproduced experiments, without running anything",
		Long: `Read the run files iotbench reproduce wrote (<results>/<experiment>/<run>.csv) and report, per
experiment, each published claim beside iotbench's measurement with a verdict, then each run's table
beside the published figures. --format markdown is docs/experiments.md (make experiments-doc).`,
		Example: "  iotbench claims all --results results/experiments\n  iotbench claims all --results docs/experiments --format markdown > docs/experiments.md",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			if runF != nil {
				return runF(o)
			}
			return runClaims(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "scenarios.yaml", "scenario matrix")
	f.StringVar(&o.Experiments, "experiments", "experiments.yaml", "the published experiments")
	f.StringVar(&o.Results, "results", "results/experiments", "folder iotbench reproduce wrote to")
	f.StringVar(&o.Format, "format", "table", "table or markdown")
	return cmd
}

func runClaims(o *ClaimsOptions) error {
	format := experiment.Text
	switch tableFormat(o.Format, o.Streams.ErrOut) {
	case "table":
	case "markdown":
		format = experiment.Markdown
	default:
		return flagErr("format", o.Format, errors.New("give table or markdown"))
	}
	sf, ef, names, err := loadExperiments(o.File, o.Experiments, o.Names)
	if err != nil {
		return err
	}
	measured, err := experiment.ReadMeasured(o.Results, ef, names)
	if err != nil {
		return err
	}
	return experiment.Write(o.Streams.Out, format, ef, sf, names, measured)
}
