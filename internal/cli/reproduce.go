package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// ReproduceOptions are the flags of `iotbench reproduce`.
type ReproduceOptions struct {
	Streams Streams

	File        string // scenarios.yaml
	Experiments string // experiments.yaml
	Names       []string
	Out         string
	// Trials and Duration shorten every run (0: as the file says): a quick look, not the
	// published experiment.
	Trials   int
	Duration time.Duration
	CABundle string
	// Engine reaches the containers' engine; nil: the Docker engine of the environment. It is
	// reached only when a run can be measured on this host.
	Engine func(ctx context.Context, caBundle string, log io.Writer) (container.Lifecycle, func(), error)
	// AllowedCPUs are the CPUs this process may use; nil: this machine's.
	AllowedCPUs func() ([]int, error)

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
check each of its claims against the rows: holds, does not hold, inconclusive, or cannot be tested
here (with the reason). "all" runs every experiment, in the file's order.

Each run writes <out>/<experiment>/<run>.csv. The command is resumable: run it again and it
measures only the cells missing from those files (same seed and settings), so an interrupted
experiment goes on where it stopped. A run that needs more target CPUs than this host can give
(a cluster, a worker pool) is not run: its cells are recorded as skipped, in seconds, and its
claims cannot be tested here.

iotbench claims prints the report again from the files, without running anything.`,
		Example: `  iotbench list                                  # the experiments, with their sources
  iotbench reproduce virtual-threads-500ms       # one experiment, as experiments.yaml says
  iotbench reproduce all --out results/experiments
  iotbench reproduce all --trials 2 --duration 5s --out docs/experiments   # short: what docs/experiments.md shows`,
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
	f.IntVar(&o.Trials, "trials", 0, "trials per target in every run (default: each run's)")
	f.DurationVar(&o.Duration, "duration", 0, "measured phase of every cell (default: each run's)")
	addCABundleFlag(f, &o.CABundle)
	return cmd
}

// loadExperiments reads the scenario matrix and the experiments, and resolves names ("all").
func loadExperiments(file, experiments string, names []string) (*scenario.File, *experiment.File, []string, error) {
	sf, err := scenario.Load(file)
	if err != nil {
		return nil, nil, nil, usageError{err}
	}
	ef, err := experiment.Load(experiments, sf)
	if err != nil {
		return nil, nil, nil, usageError{err}
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
		if err := scenario.CheckTrials(o.Trials); err != nil {
			return flagErr("trials", fmt.Sprint(o.Trials), err)
		}
	}
	if given("duration") || o.Duration != 0 {
		if err := scenario.CheckPhase(o.Duration); err != nil {
			return flagErr("duration", scenario.FormatDuration(o.Duration), err)
		}
	}
	sf, ef, names, err := loadExperiments(o.File, o.Experiments, o.Names)
	if err != nil {
		return err
	}
	allowedCPUs := o.AllowedCPUs
	if allowedCPUs == nil {
		allowedCPUs = hostinfo.AllowedCPUs
	}
	allowed, err := allowedCPUs()
	if err != nil {
		return err
	}
	// Every plan first: a mistake in the file is found before an hour is spent.
	plans := map[string]map[string]*plan.Plan{}
	for _, name := range names {
		plans[name] = map[string]*plan.Plan{}
		for _, r := range ef.Experiments[name].Runs {
			p, err := plan.Make(sf, r.Scenario, o.overrides(r), allowed)
			if err != nil {
				return fmt.Errorf("experiment %s, run %s: %w", name, r.Name, planError(err))
			}
			plans[name][r.Name] = p
		}
	}
	meta := bench.Meta{Version: hostinfo.Version, Commit: hostinfo.Commit(), HostCPU: hostinfo.CPUModel(), Kernel: hostinfo.Kernel()}
	var lifecycle container.Lifecycle
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	engine := func() (container.Lifecycle, error) {
		if lifecycle != nil {
			return lifecycle, nil
		}
		if o.Engine != nil {
			l, rel, err := o.Engine(ctx, o.CABundle, o.Streams.ErrOut)
			lifecycle, release = l, rel
			return l, err
		}
		d, err := connectDocker(ctx, "", o.CABundle, o.Streams.ErrOut)
		if err != nil {
			return nil, err
		}
		meta.DockerVersion = d.Version(ctx)
		lifecycle, release = d, func() { d.Close() }
		return d, nil
	}
	defer load.GeneratorGC()()
	for _, name := range names {
		e := ef.Experiments[name]
		fmt.Fprintf(o.Streams.ErrOut, "experiment %s: %s (%s)\n", name, e.Title, e.Source)
		for _, r := range e.Runs {
			if err := o.reproduceRun(ctx, name, r, plans[name][r.Name], meta, engine); err != nil {
				if errors.Is(err, context.Canceled) {
					fmt.Fprintf(o.Streams.ErrOut, "interrupted: the same command measures the rest (the files in %s keep every cell done)\n", o.Out)
				}
				return err
			}
		}
		measured, err := readMeasured(o.Out, ef, []string{name})
		if err != nil {
			return err
		}
		if err := experiment.Write(o.Streams.Out, experiment.Text, ef, sf, []string{name}, measured); err != nil {
			return err
		}
	}
	return nil
}

// overrides are a run's settings over its scenario's, shortened by the command line.
func (o *ReproduceOptions) overrides(r *experiment.Run) plan.Overrides {
	over := plan.Overrides{Targets: r.Targets, Rate: r.Rate, Connections: r.Connections, Trials: r.Trials, Timeout: r.Timeout, Warmup: r.Warmup}
	if r.Duration > 0 {
		over.Duration = &r.Duration
	}
	if o.Trials > 0 {
		over.Trials = o.Trials
	}
	if o.Duration > 0 {
		over.Duration = &o.Duration
	}
	return over
}

// runPath is where a run's rows go.
func runPath(out, experimentName, run string) string {
	return filepath.Join(out, experimentName, run+".csv")
}

// reproduceRun measures the cells of one run missing from its file; a run this host is too small
// for is recorded as skipped without reaching the engine.
func (o *ReproduceOptions) reproduceRun(ctx context.Context, name string, r *experiment.Run, p *plan.Plan, meta bench.Meta, engine func() (container.Lifecycle, error)) error {
	path := runPath(o.Out, name, r.Name)
	var w *results.Writer
	var resumed []results.Row
	var err error
	if _, statErr := os.Stat(path); statErr == nil {
		var warnings []string
		w, resumed, warnings, err = results.Append(path)
		if err != nil {
			return fmt.Errorf("%s: %v (remove it to measure the run again)", path, err)
		}
		for _, warning := range warnings {
			fmt.Fprintln(o.Streams.ErrOut, "warning:", warning)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if w, err = results.Create(path); err != nil {
			return err
		}
	}
	defer w.Close()
	if len(resumed) >= len(p.Cells) {
		fmt.Fprintf(o.Streams.ErrOut, "  run %s: all %d cell(s) recorded in %s\n", r.Name, len(p.Cells), path)
		return nil
	}
	if r.NeedsCPUs > len(p.TargetCPUs) {
		reason := fmt.Sprintf("%s: needs %d target CPUs; this host gives targets %d (%d CPUs, the generator keeps the others)",
			results.Skipped, r.NeedsCPUs, len(p.TargetCPUs), len(p.TargetCPUs)+len(p.GeneratorCPUs))
		fmt.Fprintf(o.Streams.ErrOut, "  run %s: cannot be tested here: %s\n", r.Name, strings.TrimPrefix(reason, results.Skipped+": "))
		done := map[string]bool{}
		for _, row := range resumed {
			done[fmt.Sprintf("%s/%d", row.Target, row.Trial)] = true
		}
		for _, c := range p.Cells {
			if done[fmt.Sprintf("%s/%d", c.Target, c.Trial)] {
				continue
			}
			row := results.Row{Scenario: c.Scenario, Target: c.Target, Trial: c.Trial, Mode: string(c.Load.Model.Mode()),
				RequestedRPS: c.Load.Model.Rate, Connections: c.Load.Model.InFlightLimit(),
				Duration: c.Load.Duration, Warmup: c.Load.Warmup, Timeout: c.Load.Timeout, InvalidReason: reason,
				StartedAt: time.Now(), CPUSet: cpuset.Format(p.TargetCPUs), GeneratorCPUSet: cpuset.Format(p.GeneratorCPUs),
				Memory: p.Memory, Version: meta.Version, GitCommit: meta.Commit, HostCPU: meta.HostCPU, Kernel: meta.Kernel}
			if err := w.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
	lifecycle, err := engine()
	if err != nil {
		return err
	}
	if err := hostinfo.PinProcess(p.GeneratorCPUs); err != nil {
		return err
	}
	seed := rand.Int64()
	if len(resumed) > 0 {
		seed = resumed[0].Seed
	}
	fmt.Fprintf(o.Streams.ErrOut, "  run %s (%s): %d cell(s), %d recorded; rows go to %s\n", r.Name, r.Scenario, len(p.Cells), len(resumed), path)
	runner := &bench.Runner{Lifecycle: lifecycle, Log: o.Streams.ErrOut, Record: w.Write, Meta: meta, Seed: seed,
		LogDir: strings.TrimSuffix(path, filepath.Ext(path)) + ".logs", Resumed: resumed}
	_, err = runner.Run(ctx, p)
	var re *bench.ResumeError
	if errors.As(err, &re) {
		return usagef("%s: %v: the experiment or its flags changed since it was written; remove the file to measure the run again", path, re)
	}
	return err
}

// readMeasured reads the run files of the named experiments under dir; a run without a file has
// no rows.
func readMeasured(dir string, ef *experiment.File, names []string) (experiment.Measured, error) {
	out := experiment.Measured{}
	for _, name := range names {
		out[name] = map[string][]results.Row{}
		for _, r := range ef.Experiments[name].Runs {
			path := runPath(dir, name, r.Name)
			rows, warnings, err := results.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			_ = warnings // a cut last row: the rows before it are the run's
			out[name][r.Name] = rows
		}
	}
	return out, nil
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
	f.StringVar(&o.Format, "format", "text", "text or markdown")
	return cmd
}

func runClaims(o *ClaimsOptions) error {
	format := experiment.Text
	switch o.Format {
	case "text":
	case "markdown":
		format = experiment.Markdown
	default:
		return flagErr("format", o.Format, errors.New("give text or markdown"))
	}
	sf, ef, names, err := loadExperiments(o.File, o.Experiments, o.Names)
	if err != nil {
		return err
	}
	measured, err := readMeasured(o.Results, ef, names)
	if err != nil {
		return err
	}
	return experiment.Write(o.Streams.Out, format, ef, sf, names, measured)
}
