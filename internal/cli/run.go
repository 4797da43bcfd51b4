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
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/report"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/stats"
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
	DB       string
	DBCPUs   string
	DBPool   []int
	Out      string
	Resume   string
	CABundle string
	// DockerHost is the engine the targets run on (a DOCKER_HOST value); empty: DOCKER_HOST's.
	DockerHost string

	// Ad-hoc mode: a service already listening on loopback.
	URL             string
	Method          string
	BodyFile        string
	Headers         []string
	Contains        []string
	ExpectedLatency time.Duration
	Timeout         time.Duration

	// A paired run: a baseline measured beside the candidate, round by round.
	Baseline          string // a checkout of the baseline: its scenarios file and build contexts
	BaselineURL       string // ad-hoc: the baseline service
	AA                int    // A/A control rounds
	FailOn            string
	AllowInconclusive bool
	Until             string
	MaxTrials         int
	// Name names an ad-hoc run's target instead of its host:port.
	Name string

	// --find-max: search each target's maximum sustainable rate instead of measuring at one.
	FindMax bool
	// Generators is how many generator processes share each cell's load (internal/shard).
	Generators int
	// GeneratorHosts are engines whose containers run the generator shards instead of processes
	// here (generatorhost.go); Generators defaults to one a host.
	GeneratorHosts []string
	SLO            string
	Step           time.Duration
	Resolution     string

	// Output: what is printed at the end, the HTML report, no progress.
	Format string
	HTML   string
	Quiet  bool

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

With --url, load a service already listening on loopback instead (no Docker, nothing pinned).

The targets may run on another host's engine (--docker-host), and the load may come from several
generator shards (--generators N): processes here, or containers on other engines
(--generator-host, repeatable), whose clocks are measured against this one's. docs/scale.md has
the layouts.

A paired run measures a baseline beside the candidate in one sitting: --baseline DIR builds the
targets of a baseline checkout (its scenarios file and build contexts, images tagged :base), and
--baseline-url loads a second service beside --url. Each round runs the baseline and the
candidate of every target back to back, the pair's order shuffled, so that the machine's drift
hits both alike; rows carry their variant. At the end it prints a verdict per cell and gated
metric (--fail-on; see iotbench compare --help), and its exit status is the gate's: 0 every gated
metric equivalent or improved, 1 one regressed, 4 one inconclusive. --aa adds A/A rounds (the
baseline against itself: the noise floor), --until adds rounds until the intervals are as narrow
as asked.`,
		Example: `  # the default scenario of scenarios.yaml, all its targets
  iotbench run

  # two targets, shorter, at a different rate
  iotbench run --scenario io-heavy --targets spring-mvc-virtual,fastify --duration 30s --rate 2000

  # closed loop, 100 connections, as the published wrk/k6 runs did
  iotbench run --scenario blocking-500 --connections 100

  # each target's maximum sustainable rate (median of 3 searches), and its latency at 50/75/90% of it
  iotbench run --scenario io-heavy --targets spring-mvc-platform,javalin-platform --find-max --slo 'p99<100ms,errors<0.1%' --trials 3

  # every target on a PostgreSQL server of its own (on the target's CPUs), at pool sizes 5, 10 and 20
  iotbench run --scenario io-heavy --db postgres --db-pool 5,10,20

  # targets and their PostgreSQL servers on another host's engine, reached over ssh; load from here
  iotbench run --scenario io-heavy --docker-host ssh://bench@10.0.0.2 --db postgres

  # finish a run that was interrupted (Ctrl-C, a crash): same flags, and the file it was writing
  iotbench run --scenario io-heavy --resume results/20261123T181500Z.csv

  # a CI gate: the base branch checked out in ../base against this checkout, in one paired run
  iotbench run --scenario io-heavy --baseline ../base --fail-on 'throughput:-5%,p99:+10%'

  # two builds of your own service, rounds added until p99's interval is within ±3% (at most 30)
  iotbench run --url http://127.0.0.1:8081/ingest --baseline-url http://127.0.0.1:8080/ingest \
    --name ingest --rate 1000 --duration 10s --trials 6 --aa 2 --until 'p99:±3%' --max-trials 30

  # targets on another host's engine, the load from 4 shards in containers on two generator hosts
  iotbench run --scenario io-heavy --docker-host tcp://10.0.0.2:2376 \
    --generator-host tcp://10.0.0.3:2376 --generator-host tcp://10.0.0.4:2376 --generators 4

  # a service of your own on loopback
  iotbench run --url http://127.0.0.1:8080/ingest --method POST --body-file payloads/iot-reading.json \
    --header Content-Type:application/json --rate 2000 --duration 20s --expected-latency 50ms`,
		Args: noArgs,
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
	addDBFlags(f, &o.DB, &o.DBCPUs, &o.DBPool)
	f.StringVar(&o.Out, "out", "results", "folder for the results CSV")
	f.StringVar(&o.Resume, "resume", "", "finish an interrupted run: the results CSV it was writing; give the flags that started it")
	addCABundleFlag(f, &o.CABundle)
	f.StringVar(&o.DockerHost, "docker-host", "", "the Docker `ENGINE` the targets run on: an address, tcp://10.0.0.2:2376 (TLS from DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) or ssh://user@10.0.0.2 (ssh runs docker system dial-stdio there), or a docker context's name; on another host, targets and --db postgres servers listen on its address and load goes there (default: $DOCKER_HOST, else $DOCKER_CONTEXT, else docker's current context, else the local engine; docs/scale.md)")
	addOutputFlags(f, o)
	f.StringVar(&o.URL, "url", "", "load this running service on loopback instead of a scenario")
	f.StringVar(&o.Method, "method", "GET", "--url: HTTP method")
	f.StringVar(&o.BodyFile, "body-file", "", "--url: request body")
	f.StringArrayVar(&o.Headers, "header", nil, "--url: request header K:V (repeatable)")
	f.StringArrayVar(&o.Contains, "contains", nil, "--url: a successful body must contain this (repeatable)")
	f.DurationVar(&o.ExpectedLatency, "expected-latency", 100*time.Millisecond, "--url: expected latency, sizes the in-flight bound")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Second, "per-request timeout, a slower answer is an error (default: the scenario's load.timeout; 10s for --url)")
	f.StringVar(&o.Name, "name", "", "--url: name the run's target (default: the service's host:port); runs of the same name compare")
	f.StringVar(&o.Baseline, "baseline", "", "a paired run: a checkout of the baseline (its --file and build contexts), measured round by round beside this one")
	f.StringVar(&o.BaselineURL, "baseline-url", "", "a paired --url run: the baseline service on loopback, measured round by round beside --url")
	f.IntVar(&o.AA, "aa", 0, "a paired run: this many extra rounds measure the baseline against itself (an A/A control: the noise floor), e.g. 3")
	f.StringVar(&o.FailOn, "fail-on", "", "a paired run: gated metrics and limits, e.g. 'throughput:-5%,p99:+10%' (default "+compare.DefaultPairedGates+")")
	f.BoolVar(&o.AllowInconclusive, "allow-inconclusive", false, "a paired run: exit 0, not 4, when a verdict is inconclusive or untestable (and none regressed)")
	f.StringVar(&o.Until, "until", "", "a paired run: add rounds until each named metric's 90% interval is this narrow, e.g. 'p99:±3%,p50:±2%' (up to --max-trials)")
	f.IntVar(&o.MaxTrials, "max-trials", 30, "--until: the most rounds")
	f.IntVar(&o.Generators, "generators", 1, "generator shards sharing each cell's load, each sending rate/N on an offset schedule, their histograms merged: processes here (one per generator CPU when there are as many), or containers on the --generator-host engines (default there: one a host; docs/scale.md)")
	f.StringArrayVar(&o.GeneratorHosts, "generator-host", nil, "a Docker engine whose host runs generator shards, as containers of an iotbench image built there (repeatable; shards dealt to the hosts in turn, --generators of them, one a host by default); another host's clock is measured and each shard's start corrected; its shards load only the targets' host (--docker-host) (docs/scale.md)")
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

// addDBFlags adds the database flags of run and verify.
func addDBFlags(f *pflag.FlagSet, db, cpus *string, pool *[]int) {
	f.StringVar(db, "db", "", "targets' store: embedded (their in-process database) or postgres (a PostgreSQL server started beside each target, a fresh database every trial) (default: the scenario's, else embedded)")
	f.StringVar(cpus, "db-cpus", "", "--db postgres: the server's cpuset (default: the target's, as one host serving both)")
	f.IntSliceVar(pool, "db-pool", nil, "targets' connection-pool sizes, comma-separated: the scenario runs once per size, rows named <scenario>.pool-<n> (default: the scenario's db_pool, else 10)")
}

func runRun(ctx context.Context, o *RunOptions) error {
	if err := o.checkOutputFlags(); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	search, err := o.maxSearch()
	if err != nil {
		return err
	}
	gate, err := o.pairedGate(search != nil)
	if err != nil {
		return err
	}
	p, lifecycle, meta, cleanup, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	r := &bench.Runner{Lifecycle: lifecycle, Meta: meta,
		// A service the user started is measured even when its answers fail their check: its
		// error ratio under load is what they came for.
		WarnUnverified: o.URL != ""}
	// The generators first: a generator host that cannot be used stops the run before any file
	// is written.
	if len(o.GeneratorHosts) > 0 {
		closeHosts, err := useGeneratorHosts(ctx, r, p, lifecycle, o.GeneratorHosts, o.generatorCount(), o.Streams.ErrOut)
		if err != nil {
			return err
		}
		defer closeHosts()
	} else if err := useGenerators(r, p, o.Generators, o.Streams.ErrOut); err != nil {
		return err
	}

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
	keep, closeFiles, err := runFiles(path)
	if err != nil {
		return err
	}
	defer closeFiles()
	log, status, statusDone := o.progressOutput()
	defer statusDone()
	r.Log, r.Status, r.Detail, r.Record, r.Seed = log, status, keep, w.Write, seed
	r.LogDir, r.Resumed = strings.TrimSuffix(path, filepath.Ext(path))+".logs", resumed
	if gate != nil && gate.until != nil {
		r.More = gate.more(o, p)
	}
	if search != nil {
		targets := map[string]bool{}
		for _, c := range p.Cells {
			targets[c.Target] = true
		}
		fmt.Fprintf(o.Streams.ErrOut, "%s: find-max, %d search(es) over %d target(s), one a trial; every step goes to %s as it finishes\n", p.Name, len(p.Cells), len(targets), path)
	} else if p.Paired {
		fmt.Fprintf(o.Streams.ErrOut, "%s: paired run, %d round(s) of baseline and candidate (%d cell(s)); results go to %s as each finishes\n", p.Name, p.Rounds(), len(p.Cells), path)
	} else {
		fmt.Fprintf(o.Streams.ErrOut, "%s: %d cell(s); results go to %s as each finishes\n", p.Name, len(p.Cells), path)
	}
	fmt.Fprintf(o.Streams.ErrOut, "targets take turns in an order shuffled by seed %d (--seed %d replays it)\n", seed, seed)
	if search != nil {
		return runFindMax(ctx, o, r, p, search, path)
	}
	rows, runErr := r.Run(ctx, p)
	statusDone()
	var re *bench.ResumeError
	if errors.As(runErr, &re) {
		return usagef("--resume %s: %v: run it with the flags that started it, or start a new run", o.Resume, re)
	}
	rows = append(resumed, rows...)
	if errors.Is(runErr, context.Canceled) {
		fmt.Fprintf(o.Streams.ErrOut, "interrupted: %d of %d cell(s) recorded in %s; the same command with --resume %s measures the rest\n", len(rows), len(p.Cells), path, path)
	}
	if len(rows) > 0 {
		table := func(w io.Writer) error { return report.Write(w, sidesApart(rows)) }
		if err := o.writeRunOutput(path, table); err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.ErrOut, "%s; results: %s\n", report.Summary(rows), path)
	}
	if runErr != nil {
		return runErr
	}
	if p.Paired {
		res := gate.analyze(path, rows)
		if gate.until != nil {
			res.Until = gate.outcome(res, p.Rounds(), o.MaxTrials)
		}
		// The verdicts follow the run's output: a table under the table, markdown under the
		// markdown; beside JSON, whose reader expects one document, they go to stderr (iotbench
		// compare --format json gives them as JSON).
		s, format := o.Streams, "text"
		switch o.Format {
		case "markdown":
			format = "markdown"
		case "json":
			s.Out = s.ErrOut
		}
		fmt.Fprintln(s.Out)
		return writeVerdicts(s, res, format, o.AllowInconclusive)
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
	if o.set("name") {
		return nil, nil, meta, nothing, usagef("--name names a --url run's target; a scenario's targets have their names")
	}

	allowed, err := hostinfo.AllowedCPUs()
	if err != nil {
		return nil, nil, meta, nothing, err
	}
	p, err := o.scenarioPlan(allowed)
	if err != nil {
		return nil, nil, meta, nothing, err
	}
	d, err := connectDocker(ctx, o.DockerHost, o.CABundle, o.Streams.ErrOut)
	if err != nil {
		return nil, nil, meta, nothing, err
	}
	meta.DockerVersion = d.Version(ctx)
	if d.Remote() != "" {
		// The targets' CPUs are the engine host's; this machine is the generator's, all of it.
		facts, err := d.Facts(ctx)
		if err != nil {
			d.Close()
			return nil, nil, meta, nothing, fmt.Errorf("asking the engine at %s about its host: %w", d.Remote(), err)
		}
		meta.HostCPU, meta.Kernel, meta.DockerVersion = facts.CPU, facts.Kernel, facts.EngineVersion
		remoteCPUs := make([]int, facts.CPUs)
		for i := range remoteCPUs {
			remoteCPUs[i] = i
		}
		if p, err = o.scenarioPlan(remoteCPUs); err != nil {
			d.Close()
			return nil, nil, meta, nothing, err
		}
		if err := downstreamReachable(p, d.Remote()); err != nil {
			d.Close()
			return nil, nil, meta, nothing, err
		}
		p.GeneratorCPUs = allowed
	}
	if err := hostinfo.PinProcess(p.GeneratorCPUs); err != nil {
		d.Close()
		return nil, nil, meta, nothing, err
	}
	return p, d, meta, func() { d.Close() }, nil
}

// scenarioPlan plans the scenario run of the options on the CPUs allowed, paired with the
// baseline checkout's when there is one.
func (o *RunOptions) scenarioPlan(allowed []int) (*plan.Plan, error) {
	f, err := scenario.Load(o.File)
	if err != nil {
		return nil, usageError{err}
	}
	name := o.Scenario
	if name == "" {
		name = f.DefaultScenario
	}
	if name == "" {
		return nil, usagef("no --scenario given and %s has no default_scenario (scenarios: %s)", o.File, strings.Join(f.ScenarioOrder, ", "))
	}
	over := plan.Overrides{Targets: o.Targets, Rate: o.Rate, Connections: o.Conns, Trials: o.Trials, CPUs: o.CPUs, Memory: o.Memory,
		DB: o.DB, DBCPUs: o.DBCPUs, DBPool: o.DBPool}
	if o.set("duration") {
		over.Duration = &o.Duration
	}
	if o.set("warmup") {
		over.Warmup = &o.Warmup
	}
	if o.set("timeout") {
		over.Timeout = o.Timeout
	}
	p, err := plan.Make(f, name, over, allowed)
	if err != nil {
		return nil, planError(err)
	}
	if o.Baseline != "" {
		return o.pairWithBaseline(p, name, over, allowed)
	}
	return p, nil
}

// pairedAdHocRounds are a paired --url run's rounds unless --trials says: a scenario gives its
// own trials, a run of one side of --url does one.
const pairedAdHocRounds = 10

// pairWithBaseline plans the same scenario from the baseline checkout's scenarios file, and
// pairs its cells with the candidate's.
func (o *RunOptions) pairWithBaseline(candidate *plan.Plan, name string, over plan.Overrides, allowed []int) (*plan.Plan, error) {
	if info, err := os.Stat(o.Baseline); err != nil || !info.IsDir() {
		return nil, usagef("--baseline %s: not a folder: give a checkout of the baseline (e.g. git worktree add ../base origin/main)", o.Baseline)
	}
	if filepath.IsAbs(o.File) {
		return nil, usagef("--baseline %s: --file %s is absolute; give it relative to the checkouts, as each holds its own", o.Baseline, o.File)
	}
	path := filepath.Join(o.Baseline, o.File)
	f, err := scenario.Load(path)
	if err != nil {
		return nil, usagef("--baseline: %v", err)
	}
	base, err := plan.Make(f, name, over, allowed)
	if err != nil {
		return nil, usagef("--baseline %s: %v", o.Baseline, err)
	}
	p, err := plan.Pair(candidate, base, o.AA)
	if err != nil {
		return nil, usagef("--baseline %s: %v", o.Baseline, err)
	}
	return p, nil
}

func (o *RunOptions) adHocPlan() (*plan.Plan, error) {
	for _, scenarioOnly := range []string{"scenario", "targets", "cpus", "memory", "file", "db", "db-cpus", "db-pool"} {
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
	if o.BaselineURL != "" && !o.set("trials") {
		o.Trials = pairedAdHocRounds
	}
	a := plan.AdHoc{
		URL: o.URL, Name: o.Name, Request: req, Check: load.NewCheck(o.Contains...),
		Model:  load.Model{Rate: o.Rate, Connections: o.Conns, ExpectedLatency: o.ExpectedLatency},
		Warmup: o.Warmup, Duration: o.Duration, Timeout: o.Timeout, Trials: o.Trials,
	}
	p, err := plan.MakeAdHoc(a)
	if err != nil {
		return nil, usageError{err}
	}
	if o.BaselineURL != "" {
		// Both sides are one target: the candidate's name.
		a.URL, a.Name = o.BaselineURL, p.Cells[0].Target
		base, err := plan.MakeAdHoc(a)
		if err != nil {
			return nil, usagef("--baseline-url: %v", err)
		}
		if p, err = plan.Pair(p, base, o.AA); err != nil {
			return nil, usageError{err}
		}
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

// paired are the settings of a paired run's verdicts.
type paired struct {
	gates []compare.Gate
	until []compare.Until
	alpha float64
	// added counts the rounds --until added, for its progress lines.
	added int
}

// pairedGate checks the paired-run flags: nil for a run of one side.
func (o *RunOptions) pairedGate(findMax bool) (*paired, error) {
	if o.Baseline == "" && o.BaselineURL == "" {
		for _, name := range []string{"aa", "fail-on", "allow-inconclusive", "until", "max-trials"} {
			if o.set(name) {
				return nil, usagef("--%s belongs to a paired run (--baseline DIR, or --baseline-url with --url)", name)
			}
		}
		return nil, nil
	}
	switch {
	case findMax:
		return nil, usagef("--find-max searches each target's maximum; a paired run measures at one load: drop --baseline/--baseline-url or --find-max")
	case o.BaselineURL != "" && o.URL == "":
		return nil, usagef("--baseline-url pairs with --url: give the candidate service's --url too (for scenario runs, --baseline DIR)")
	case o.Baseline != "" && o.URL != "":
		return nil, usagef("--baseline DIR is a checkout of a scenario run's targets; beside --url, give --baseline-url")
	case o.AA < 0:
		return nil, usagef("--aa %d: give a number of A/A rounds, 0 or more", o.AA)
	}
	gates, err := pairedGates(o.FailOn)
	if err != nil {
		return nil, err
	}
	g := &paired{gates: gates, alpha: stats.DefaultAlpha}
	if o.Until != "" {
		if g.until, err = compare.ParseUntil(o.Until); err != nil {
			return nil, usagef("--until %v", err)
		}
		for _, u := range g.until {
			if !slices.ContainsFunc(gates, func(x compare.Gate) bool { return x.Metric == u.Metric }) {
				return nil, usagef("--until %s: %s is not a gated metric (gates: %s): add it to --fail-on", u, u.Metric, o.gateText(gates))
			}
		}
		if o.MaxTrials < compare.MinRounds {
			return nil, usagef("--max-trials %d: at least %d, the fewest rounds that can settle anything", o.MaxTrials, compare.MinRounds)
		}
	}
	return g, nil
}

func (o *RunOptions) gateText(gates []compare.Gate) string {
	var s []string
	for _, g := range gates {
		s = append(s, g.String())
	}
	return strings.Join(s, ",")
}

func (g *paired) analyze(path string, rows []results.Row) compare.PairedResult {
	return compare.AnalyzePaired(path, rows, compare.PairedOptions{Alpha: g.alpha, Gates: g.gates})
}

// more is --until's question after each round: another one, while an interval is wider than
// asked and the rounds are fewer than --max-trials.
func (g *paired) more(o *RunOptions, p *plan.Plan) func([]results.Row) bool {
	return func(rows []results.Row) bool {
		res := g.analyze("", rows)
		reached, why := res.Reached(g.until)
		switch {
		case reached:
			fmt.Fprintf(o.Streams.ErrOut, "--until %s: reached after %d round(s)\n", untilText(g.until), p.Rounds())
			return false
		case p.Rounds() >= o.MaxTrials:
			fmt.Fprintf(o.Streams.ErrOut, "--until %s: not reached at --max-trials %d: %s\n", untilText(g.until), o.MaxTrials, why)
			return false
		}
		fmt.Fprintf(o.Streams.ErrOut, "--until %s: after %d round(s), %s: one more\n", untilText(g.until), p.Rounds(), why)
		return true
	}
}

// outcome is the note of how an adaptive run ended.
func (g *paired) outcome(res compare.PairedResult, rounds, maxTrials int) string {
	if reached, why := res.Reached(g.until); !reached {
		return fmt.Sprintf("--until %s NOT reached: %s after %d round(s) (--max-trials %d)", untilText(g.until), why, rounds, maxTrials)
	}
	return fmt.Sprintf("--until %s reached after %d round(s)", untilText(g.until), rounds)
}

func untilText(until []compare.Until) string {
	var s []string
	for _, u := range until {
		s = append(s, u.String())
	}
	return strings.Join(s, ",")
}

// sidesApart names a paired run's rows after their side for the run's table, so that the
// baseline's trials and the candidate's are summarized apart.
func sidesApart(rows []results.Row) []results.Row {
	if !compare.IsPaired(rows) {
		return rows
	}
	out := slices.Clone(rows)
	for i := range out {
		out[i].Target += " (" + out[i].Variant + ")"
	}
	return out
}

// downstreamReachable refuses a remote engine's run whose scenario calls the downstream service:
// iotbench serves it on this machine's loopback, where a target on another host cannot call it.
func downstreamReachable(p *plan.Plan, remote string) error {
	for _, c := range p.Cells {
		if c.Load.Check.CallsDownstream {
			return usagef("scenario %s calls the downstream service, which iotbench serves on this machine's loopback: a target on %s cannot reach it; run this scenario on a local engine", c.Scenario, remote)
		}
	}
	return nil
}
