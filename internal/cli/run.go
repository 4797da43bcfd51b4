package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/report"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// RunOptions are the flags of `iotbench run`.
type RunOptions struct {
	Streams Streams

	File     string
	Scenario string
	Targets  []string
	Duration time.Duration
	Warmup   time.Duration
	Rate     int
	Conns    int
	Trials   int
	Seed     int64
	CPUs     string
	Memory   string
	Out      string
	Resume   string
	CABundle string

	// Ad-hoc mode: a service already listening on loopback.
	URL             string
	Method          string
	BodyFile        string
	Headers         []string
	Contains        []string
	ExpectedLatency time.Duration
	Timeout         time.Duration

	// --find-max: search each target's maximum sustainable rate instead of measuring at one.
	FindMax    bool
	SLO        string
	Step       time.Duration
	Resolution string

	// set records which flags the user gave, so that only those override the scenario.
	set func(name string) bool
}

// NewCmdRun builds `iotbench run`; runF replaces the behaviour in tests.
func NewCmdRun(s Streams, runF func(context.Context, *RunOptions) error) *cobra.Command {
	o := &RunOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Build, start and load targets as a scenario says, or load a running service",
		Long: `Run a scenario of the scenario matrix: build each target's image, then for every trial and
target start a fresh pinned container, verify the endpoint, warm up, measure, and remove it.
A row per cell goes to <out>/<UTC time>.csv as soon as the cell is done; a table follows at the end.

With --url, load a service already listening on loopback instead (no Docker, nothing pinned).`,
		Example: `  # the default scenario of scenarios.yaml, all its targets
  iotbench run

  # two targets, shorter, at a different rate
  iotbench run --scenario io-heavy --targets spring-mvc-virtual,fastify --duration 30s --rate 2000

  # closed loop, 100 connections, as the published wrk/k6 runs did
  iotbench run --scenario blocking-500 --connections 100

  # each target's maximum sustainable rate (median of 3 searches), and its latency at 50/75/90% of it
  iotbench run --scenario io-heavy --targets spring-mvc-platform,javalin-platform --find-max --slo 'p99<100ms,errors<0.1%' --trials 3

  # finish a run that was interrupted (Ctrl-C, a crash): same flags, and the file it was writing
  iotbench run --scenario io-heavy --resume results/20261123T181500Z.csv

  # a service of your own on loopback
  iotbench run --url http://127.0.0.1:8080/ingest --method POST --body-file payloads/iot-reading.json \
    --header Content-Type:application/json --rate 2000 --duration 20s --expected-latency 50ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.set = func(name string) bool { return cmd.Flags().Changed(name) }
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "scenarios.yaml", "scenario matrix")
	f.StringVar(&o.Scenario, "scenario", "", "scenario to run (default: the file's default_scenario)")
	f.StringSliceVar(&o.Targets, "targets", nil, "targets to run, comma-separated (default: the scenario's)")
	f.DurationVar(&o.Duration, "duration", 0, "measured phase per cell (default: the scenario's)")
	f.DurationVar(&o.Warmup, "warmup", 0, "discarded warm-up before each measurement (default: the scenario's)")
	f.IntVar(&o.Rate, "rate", 0, "open loop: requests per second (default: the scenario's)")
	f.IntVar(&o.Conns, "connections", 0, "closed loop: connections sending back to back, instead of a rate")
	f.IntVar(&o.Trials, "trials", 0, "trials per target, each in a fresh container (default: the scenario's)")
	f.Int64Var(&o.Seed, "seed", 0, "shuffles the targets' order in each round of trials; every row records it (default: a new one each run)")
	f.StringVar(&o.CPUs, "cpus", "", "targets' cpuset, e.g. 1 or 2-3; the generator gets the other CPUs (default: the last quarter of the CPUs, at least one)")
	f.StringVar(&o.Memory, "memory", "", "targets' memory limit, e.g. 1g (default: the scenario's)")
	f.StringVar(&o.Out, "out", "results", "folder for the results CSV")
	f.StringVar(&o.Resume, "resume", "", "finish an interrupted run: the results CSV it was writing; give the flags that started it")
	addCABundleFlag(f, &o.CABundle)
	f.StringVar(&o.URL, "url", "", "load this running service on loopback instead of a scenario")
	f.StringVar(&o.Method, "method", "GET", "--url: HTTP method")
	f.StringVar(&o.BodyFile, "body-file", "", "--url: request body")
	f.StringArrayVar(&o.Headers, "header", nil, "--url: request header K:V (repeatable)")
	f.StringArrayVar(&o.Contains, "contains", nil, "--url: a successful body must contain this (repeatable)")
	f.DurationVar(&o.ExpectedLatency, "expected-latency", 100*time.Millisecond, "--url: expected latency, sizes the in-flight bound")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Second, "per-request timeout, a slower answer is an error (default: the scenario's load.timeout; 10s for --url)")
	f.BoolVar(&o.FindMax, "find-max", false, "search each target's highest open-loop rate meeting --slo (ramp from --rate, then bisect), once per trial")
	f.StringVar(&o.SLO, "slo", "p99<100ms,errors<0.1%", "--find-max: what every step must meet")
	f.DurationVar(&o.Step, "step", 10*time.Second, "--find-max: how long each rate is held")
	f.StringVar(&o.Resolution, "resolution", "10%", "--find-max: precision of the maximum, a share of the rate (10%) or rps (200)")
	return cmd
}

// addCABundleFlag adds --ca-bundle, shared by the commands that build images.
func addCABundleFlag(f *pflag.FlagSet, v *string) {
	def := container.DefaultCABundle
	if env, ok := os.LookupEnv("IOTBENCH_CA_BUNDLE"); ok {
		def = env
	}
	f.StringVar(v, "ca-bundle", def, "PEM certificates image builds trust (for registries behind TLS inspection); empty for none [$IOTBENCH_CA_BUNDLE]")
}

func runRun(ctx context.Context, o *RunOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	search, err := o.maxSearch()
	if err != nil {
		return err
	}
	p, lifecycle, meta, cleanup, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	defer cleanup()

	seed := o.Seed
	if !o.set("seed") {
		seed = rand.Int64()
	}
	w, resumed, err := o.results(search != nil, &seed)
	if err != nil {
		return err
	}
	defer w.Close()
	path := w.Path()
	warnGeneratorCapacity(o.Streams.ErrOut, p, meta.HostCPU)
	defer load.GeneratorGC()()
	r := &bench.Runner{Lifecycle: lifecycle, Log: o.Streams.ErrOut, Record: w.Write, Meta: meta, Seed: seed,
		LogDir: strings.TrimSuffix(path, filepath.Ext(path)) + ".logs", Resumed: resumed,
		// A service the user started is measured even when its answers fail their check: its
		// error ratio under load is what they came for.
		WarnUnverified: o.URL != ""}
	if search != nil {
		targets := map[string]bool{}
		for _, c := range p.Cells {
			targets[c.Target] = true
		}
		fmt.Fprintf(o.Streams.ErrOut, "%s: find-max, %d search(es) over %d target(s), one a trial; every step goes to %s as it finishes\n", p.Name, len(p.Cells), len(targets), path)
	} else {
		fmt.Fprintf(o.Streams.ErrOut, "%s: %d cell(s); results go to %s as each finishes\n", p.Name, len(p.Cells), path)
	}
	fmt.Fprintf(o.Streams.ErrOut, "targets take turns in an order shuffled by seed %d (--seed %d replays it)\n", seed, seed)
	if search != nil {
		return runFindMax(ctx, o, r, p, search)
	}
	rows, runErr := r.Run(ctx, p)
	var re *bench.ResumeError
	if errors.As(runErr, &re) {
		return usagef("--resume %s: %v: run it with the flags that started it, or start a new run", o.Resume, re)
	}
	rows = append(resumed, rows...)
	if errors.Is(runErr, context.Canceled) {
		fmt.Fprintf(o.Streams.ErrOut, "interrupted: %d of %d cell(s) recorded in %s; the same command with --resume %s measures the rest\n", len(rows), len(p.Cells), path, path)
	}
	if len(rows) > 0 {
		if err := report.Write(o.Streams.Out, rows); err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.ErrOut, "%s; results: %s\n", report.Summary(rows), path)
	}
	if runErr != nil {
		return runErr
	}
	for _, row := range rows {
		if !row.Valid {
			return errInvalidCells
		}
	}
	return nil
}

// results opens where the run's rows go: a new file in --out, or, with --resume, the file of an
// interrupted run, whose rows are returned and whose seed the run takes.
func (o *RunOptions) results(findMax bool, seed *int64) (*results.Writer, []results.Row, error) {
	if o.Resume == "" {
		w, err := results.CreateIn(o.Out, time.Now())
		return w, nil, err
	}
	if findMax {
		return nil, nil, usagef("--resume continues a run at one load; a --find-max search cannot be resumed: start it again")
	}
	if o.set("out") {
		return nil, nil, usagef("--resume appends to its file: drop --out")
	}
	w, rows, warnings, err := results.Append(o.Resume)
	if err != nil {
		return nil, nil, usagef("--resume: %v", err)
	}
	for _, warning := range warnings {
		fmt.Fprintln(o.Streams.ErrOut, "warning:", warning)
	}
	if len(rows) > 0 {
		if o.set("seed") && o.Seed != rows[0].Seed {
			w.Close()
			return nil, nil, usagef("--seed %d: %s was ordered by seed %d; drop --seed to resume it", o.Seed, o.Resume, rows[0].Seed)
		}
		*seed = rows[0].Seed
	}
	return w, rows, nil
}

// prepare turns the options into a plan and the lifecycle that runs it.
func (o *RunOptions) prepare(ctx context.Context) (*plan.Plan, container.Lifecycle, bench.Meta, func(), error) {
	meta := bench.Meta{Version: hostinfo.Version, Commit: hostinfo.Commit(), HostCPU: hostinfo.CPUModel(), Kernel: hostinfo.Kernel()}
	nothing := func() {}
	if o.URL != "" {
		p, err := o.adHocPlan()
		if err != nil {
			return nil, nil, meta, nothing, err
		}
		u, _ := url.Parse(o.URL)
		return p, container.Running{BaseURL: u.Scheme + "://" + u.Host}, meta, nothing, nil
	}

	f, err := scenario.Load(o.File)
	if err != nil {
		return nil, nil, meta, nothing, usageError{err}
	}
	name := o.Scenario
	if name == "" {
		name = f.DefaultScenario
	}
	if name == "" {
		return nil, nil, meta, nothing, usagef("no --scenario given and %s has no default_scenario (scenarios: %s)", o.File, strings.Join(f.ScenarioOrder, ", "))
	}
	over := plan.Overrides{Targets: o.Targets, Rate: o.Rate, Connections: o.Conns, Trials: o.Trials, CPUs: o.CPUs, Memory: o.Memory}
	if o.set("duration") {
		over.Duration = &o.Duration
	}
	if o.set("warmup") {
		over.Warmup = &o.Warmup
	}
	if o.set("timeout") {
		over.Timeout = o.Timeout
	}
	allowed, err := hostinfo.AllowedCPUs()
	if err != nil {
		return nil, nil, meta, nothing, err
	}
	p, err := plan.Make(f, name, over, allowed)
	if err != nil {
		return nil, nil, meta, nothing, planError(err)
	}
	d, err := connectDocker(ctx, o.CABundle, o.Streams.ErrOut)
	if err != nil {
		return nil, nil, meta, nothing, err
	}
	meta.DockerVersion = d.Version(ctx)
	if err := hostinfo.PinProcess(p.GeneratorCPUs); err != nil {
		d.Close()
		return nil, nil, meta, nothing, err
	}
	return p, d, meta, func() { d.Close() }, nil
}

func (o *RunOptions) adHocPlan() (*plan.Plan, error) {
	for _, scenarioOnly := range []string{"scenario", "targets", "cpus", "memory", "file"} {
		if o.set(scenarioOnly) {
			return nil, usagef("--%s belongs to scenario runs; --url loads a running service as it is", scenarioOnly)
		}
	}
	if o.Rate == 0 && o.Conns == 0 {
		return nil, usagef("--url needs --rate (open loop) or --connections (closed loop)")
	}
	if !o.set("duration") {
		o.Duration = 20 * time.Second
	}
	req := load.Request{Method: strings.ToUpper(o.Method), Header: http.Header{}}
	for _, h := range o.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, usagef("--header %q: write it as Name:value", h)
		}
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if o.BodyFile != "" {
		body, err := os.ReadFile(o.BodyFile)
		if err != nil {
			return nil, usagef("--body-file: %v", err)
		}
		req.Body = body
	}
	p, err := plan.MakeAdHoc(plan.AdHoc{
		URL: o.URL, Request: req, Check: load.NewCheck(o.Contains...),
		Model:  load.Model{Rate: o.Rate, Connections: o.Conns, ExpectedLatency: o.ExpectedLatency},
		Warmup: o.Warmup, Duration: o.Duration, Timeout: o.Timeout, Trials: o.Trials,
	})
	if err != nil {
		return nil, usageError{err}
	}
	if o.Rate > 0 && o.Conns > 0 {
		return nil, usagef("give --rate (open loop) or --connections (closed loop), not both")
	}
	return p, nil
}

// warnGeneratorCapacity warns when the plan's rate is above what the load generator sustained on
// this machine when `make bench-generator` last measured it (internal/load.Capacity).
func warnGeneratorCapacity(w io.Writer, p *plan.Plan, hostCPU string) {
	if len(p.Cells) == 0 {
		return
	}
	cpus := len(p.GeneratorCPUs)
	if cpus == 0 { // --url: not pinned
		allowed, _ := hostinfo.AllowedCPUs()
		cpus = len(allowed)
	}
	if msg := load.CapacityWarning(p.Cells[0].Load.Model.Rate, cpus, hostCPU); msg != "" {
		fmt.Fprintln(w, "warning:", msg)
	}
}
