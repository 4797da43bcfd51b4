package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/history"
	"github.com/iotbench/iotbench/internal/kube"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/profile"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// RunOptions are the flags of `iotbench run`.
type RunOptions struct {
	Streams Streams

	File     string
	Scenario string
	Targets  []string
	// Load are the load settings the flags give (loadSpec marks which); Stages and Think are
	// their text until parsed into it.
	Load   loadspec.Spec
	Stages string
	Think  string
	// CA is the PEM CA of a --url service over TLS.
	CA       string
	Seed     int64
	CPUs     string
	Memory   string
	DB       string
	DBCPUs   string
	DBPool   []int
	Signals  bool
	Out      string
	Resume   string
	CABundle string
	// DockerHost is the engine the targets run on (a DOCKER_HOST value); empty: DOCKER_HOST's.
	DockerHost string

	// Ad-hoc mode: a service already listening on loopback.
	URL      string
	Method   string
	BodyFile string
	Headers  []string
	Contains []string

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
	// Kube is the kubeconfig context whose cluster runs the targets and the shards (--kube);
	// Kubeconfig, Namespace and ImageLoader say how (kube.Options).
	Kube, Kubeconfig, Namespace, ImageLoader, Registry string
	SLO                                                string
	Step                                               time.Duration
	Resolution                                         string
	LatencyAt                                          string
	Profile                                            bool

	// Output: what is printed at the end, the HTML report, no progress.
	Format string
	HTML   string
	Quiet  bool

	// History is a performance history (a file or a postgres:// URL) each row is added to.
	History string

	// Calibration measures a reference server of known latency before the first cell and after
	// the last (run.Calibrate).
	Calibration bool
	// KeepDisturbed keeps a disturbed cell's first measurement (run.Setup.KeepDisturbed).
	KeepDisturbed bool

	// Effects are the run's effects on the world; those left nil are Docker's (run.Docker).
	Effects run.Effects

	// set records which flags the user gave, so that only those override the scenario.
	set func(name string) bool
	// flags and commandPath are the command as given, for the one a run too short to rank
	// suggests instead (rankedRun).
	flags       *pflag.FlagSet
	commandPath string
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
(--generator-host, repeatable), whose clocks are measured against this one's. On Kubernetes
(--kube CONTEXT), the targets are Guaranteed pods on the cluster's target node and the shards an
indexed Job on its generator nodes, all in a namespace of the run's, removed at the end.
docs/scale.md has the layouts.

A paired run measures a baseline beside the candidate in one sitting: --baseline DIR builds the
targets of a baseline checkout (its scenarios file and build contexts, images tagged :base), and
--baseline-url loads a second service beside --url. Each round runs the baseline and the
candidate of every target back to back, the pair's order shuffled, so that the machine's drift
hits both alike; rows carry their variant. At the end it prints a verdict per cell and gated
metric (--fail-on; see iotbench compare --help), and its exit status is the gate's: 0 every gated
metric equivalent or improved, 1 one regressed, 4 one inconclusive. --aa adds A/A rounds (the
baseline against itself: the noise floor), --until adds rounds until the intervals are as narrow
as asked.

The flags in more detail:
  --cpus            the targets' cpuset (default: the last quarter of the CPUs, at least one); the
                    generator is pinned to the other CPUs
  --seed            shuffles the targets' order in each round of trials; every row records it,
                    and the same seed replays the order
  --docker-host     an address, tcp://10.0.0.2:2376 (TLS from DOCKER_TLS_VERIFY,
                    DOCKER_CERT_PATH), ssh://user@10.0.0.2 (ssh runs docker system dial-stdio
                    there) or a docker context's name; on another host, targets and --db postgres
                    servers listen on its address and load goes there (default: $DOCKER_HOST,
                    else $DOCKER_CONTEXT, else docker's current context, else the local engine)
  --generators      shards each send rate/N on an offset schedule, their histograms merged:
                    processes here (one per generator CPU when there are as many), or containers
                    on the --generator-host engines (one a host by default)
  --generator-host  shards run as containers of an iotbench image built there, dealt to the hosts
                    in turn; another host's clock is measured and each shard's start corrected;
                    its shards load only the targets' host (--docker-host)
  --kube            a kubeconfig context: nodes labelled iotbench.io/role=target (kubelet
                    --cpu-manager-policy=static) run the targets, pinned; iotbench.io/role=generator
                    nodes the shards (one a node by default); images are built here and loaded
                    with --image-loader, or pushed under --registry for the nodes to pull
  --db              embedded: the target's in-process database; postgres: a PostgreSQL server
                    started beside each target, a fresh database every trial (default: the
                    scenario's, else embedded)
  --db-pool         rows named <scenario>.pool-<n> (default: the scenario's db_pool, else 10)
  --timeout         a slower answer is an error (default: the scenario's load.timeout; 10s for
                    --url)
  --arrival         uniform spaces requests evenly; poisson draws exponential gaps, seeded by the
                    trial, so every target of a trial meets the same arrivals
  --stages          DURATION:RATE holds a rate, DURATION:FROM-TO ramps it (whole seconds); the
                    stages replace --rate and set the measured phase; the cell's row is followed
                    by a row per stage, <scenario>.stage-<n>
  --think           each closed-loop connection pauses this long after its answer (exp:100ms: an
                    exponential of that mean); the cell is judged by Little's law's throughput
  --name            runs of the same name compare (default: the service's host:port)
  --fail-on         default ` + compare.DefaultPairedGates + `; with --find-max the maxima are
                    gated, round by round: default ` + compare.DefaultPairedMaxGates + `
  --until           each named metric's 90% interval, up to --max-trials rounds
  --find-max        ramps from --rate until the SLO breaks, then bisects by steps, once per
                    trial; an even trial starts between the rates the trial before ended
                    between; --resolution is a share of the rate (10%) or rps (200); one
                    search a target is a first answer, a ranking needs 5 (--trials 6)
  --latency-at      after each search that found a maximum, a step at each percentage of it:
                    the latency users see with headroom (a step each, so none by default)
  --resume          give the flags that started the run
  --calibration     on by default: before the first cell and after the last, about 5 s each, a
                    reference server of known latency is measured and the instrument's error
                    recorded in every row (calibration_ columns; docs/results.md "Calibration")
docs/scale.md has the layouts of engines and generators.`,
		Example: `  # the default scenario of scenarios.yaml, all its targets
  iotbench run

  # two targets, shorter, at a different rate
  iotbench run --scenario io-heavy --targets spring-mvc-virtual,fastify --duration 30s --rate 2000

  # closed loop, 100 connections, as the published wrk/k6 runs did
  iotbench run --scenario blocking-500 --connections 100

  # Poisson arrivals; a ramp between two holds (one row for the cell, one for each stage)
  iotbench run --scenario io-heavy --rate 2000 --arrival poisson
  iotbench run --scenario io-heavy --stages 30s:500,60s:500-5000,30s:5000

  # 200 users pausing a second on average between an answer and their next request
  iotbench run --scenario io-heavy --connections 200 --think exp:1s

  # each target's maximum sustainable rate (median of 6 searches, enough to rank), and its latency at 50/75/90% of it
  iotbench run --scenario io-heavy --targets spring-mvc-platform,javalin-platform --find-max --slo 'p99<100ms,errors<0.1%' \
    --trials 6 --latency-at 50%,75%,90%

  # a first answer: one search a target, no latency below the maximum, not a ranking
  iotbench run --scenario io-heavy --find-max --trials 1

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
			o.flags, o.commandPath = cmd.Flags(), invokedAs(cmd)
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
	f.DurationVar(&o.Load.Duration, "duration", 0, "measured phase per cell (default: the scenario's)")
	f.Var(&o.Load.Warmup, "warmup", "discarded warm-up before each measurement: 10s, or auto (until steady, at most 2m), auto:90s (default: the scenario's)")
	f.StringVar((*string)(&o.Load.Compat), "compat", "", "count as another tool does, beside iotbench's own figures: wrk")
	f.IntVar(&o.Load.Rate, "rate", 0, "open loop: requests per second (default: the scenario's)")
	f.IntVar(&o.Load.Connections, "connections", 0, "closed loop: connections sending back to back, instead of a rate")
	f.StringVar(&o.Stages, "stages", "", "open loop's rates over time instead of --rate, e.g. 30s:500,60s:500-5000,30s:5000")
	f.StringVar(&o.Think, "think", "", "closed loop's pause between an answer and the next request: 100ms, or exp:100ms")
	f.StringVar((*string)(&o.Load.Arrival), "arrival", "", "open loop's arrival process: uniform or poisson (default: the scenario's, else uniform)")
	f.StringVar((*string)(&o.Load.Protocol), "protocol", "", "http1, https, h2 or h2c (default: the scenario's, else http1; https for an https:// --url)")
	f.IntVar(&o.Load.H2Streams, "h2-streams", 0, "h2 and h2c: requests each connection carries at once (default: the scenario's, else 1)")
	f.BoolVar(&o.Load.TLSResumption, "tls-resumption", false, "https and h2: resume TLS sessions on new connections (default: the scenario's, else off)")
	f.IntVar(&o.Load.Trials, "trials", 0, "trials per target, each in a fresh container (default: the scenario's)")
	f.Int64Var(&o.Seed, "seed", 0, "seed of the targets' shuffled order; every row records it (default: a new one)")
	f.StringVar(&o.CPUs, "cpus", "", "targets' cpuset, e.g. 1 or 2-3; the generator gets the others")
	f.StringVar(&o.Memory, "memory", "", "targets' memory limit, e.g. 1g (default: the scenario's)")
	addDBFlags(f, &o.DB, &o.DBCPUs, &o.DBPool)
	f.BoolVar(&o.Signals, "signals", true, "read each target's runtime signals (GC, threads, event loop, pools) over its measured phases, on a port of their own")
	f.StringVar(&o.Out, "out", "results", "folder for the results CSV")
	f.StringVar(&o.History, "history", "", "also add each row to this history `STORE` (a file or postgres:// URL)")
	f.BoolVar(&o.Calibration, "calibration", true, "measure a reference server of known latency before and after the cells")
	f.BoolVar(&o.KeepDisturbed, "keep-disturbed", false, "keep a cell other work disturbed as first measured, marked, not measured again (smoke runs on a shared host)")
	f.StringVar(&o.Resume, "resume", "", "finish an interrupted run: the CSV it was writing")
	addCABundleFlag(f, &o.CABundle)
	f.StringVar(&o.DockerHost, "docker-host", "", "the Docker `ENGINE` the targets run on: tcp://, ssh:// or a context's name")
	addOutputFlags(f, o)
	f.StringVar(&o.URL, "url", "", "load this running service on loopback instead of a scenario")
	f.StringVar(&o.Method, "method", "GET", "--url: HTTP method")
	f.StringVar(&o.BodyFile, "body-file", "", "--url: request body")
	f.StringVar(&o.CA, "ca", "", "--url over TLS: PEM file of the CA that signed the service's certificate")
	f.StringArrayVar(&o.Headers, "header", nil, "--url: request header K:V (repeatable)")
	f.StringArrayVar(&o.Contains, "contains", nil, "--url: a successful body must contain this (repeatable)")
	f.DurationVar(&o.Load.ExpectedLatency, "expected-latency", loadspec.Defaults.ExpectedLatency, "--url: expected latency, sizes the in-flight bound")
	f.DurationVar(&o.Load.Timeout, "timeout", loadspec.Defaults.Timeout, "per-request timeout (scenario runs: the scenario's)")
	f.StringVar(&o.Name, "name", "", "--url: the target's name (default: its host:port)")
	f.StringVar(&o.Baseline, "baseline", "", "a paired run: a checkout of the baseline, measured beside this one")
	f.StringVar(&o.BaselineURL, "baseline-url", "", "a paired --url run: the baseline service on loopback")
	f.IntVar(&o.AA, "aa", 0, "a paired run: A/A rounds, the baseline against itself")
	f.StringVar(&o.FailOn, "fail-on", "", "a paired run: gated metrics and limits, e.g. 'p99:+10%'")
	f.BoolVar(&o.AllowInconclusive, "allow-inconclusive", false, "a paired run: exit 0, not 4, when undecided")
	f.StringVar(&o.Until, "until", "", "a paired run: rounds until intervals are this narrow, e.g. 'p99:±3%'")
	f.IntVar(&o.MaxTrials, "max-trials", 30, "--until: the most rounds")
	f.IntVar(&o.Generators, "generators", 1, "generator shards sharing each cell's load")
	f.StringArrayVar(&o.GeneratorHosts, "generator-host", nil, "a Docker `ENGINE` that runs generator shards (repeatable)")
	f.StringVar(&o.Kube, "kube", "", "run the targets and generator shards on the Kubernetes cluster of this kubeconfig `CONTEXT` (docs/scale.md)")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "--kube: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.Namespace, "namespace", "", "--kube: an existing namespace to work in (default: a new one, removed at the end)")
	f.StringVar(&o.ImageLoader, "image-loader", "", "--kube: a `COMMAND` that loads a local image into the nodes, given its name (e.g. 'kind load docker-image'); default: the nodes pull the images")
	f.StringVar(&o.Registry, "registry", "", "--kube: push the images under this `PREFIX` for the nodes to pull, e.g. registry.example/team/ (credentials: docker login's)")
	f.BoolVar(&o.FindMax, "find-max", false, "search each target's highest rate meeting --slo")
	f.StringVar(&o.SLO, "slo", run.DefaultSLO, "--find-max: what every step must meet")
	f.DurationVar(&o.Step, "step", run.DefaultStep, "--find-max: how long each rate is held")
	f.StringVar(&o.Resolution, "resolution", run.DefaultResolution, "--find-max: precision of the maximum, 10% or 200 (rps)")
	f.BoolVar(&o.Profile, "profile", false, "--find-max: once a search has ended, a CPU profile of its target at the maximum (perf), in a container of its own; a flame graph in the report")
	f.StringVar(&o.LatencyAt, "latency-at", "", "--find-max: once the maximum is found, a step at each of these percentages of it, e.g. 50%,75%,90% (default: none)")
	return cmd
}

// invokedAs is cmd's path as the shell that started it would run it again: bin/iotbench run when
// that is how iotbench was started (make run), else iotbench run.
func invokedAs(cmd *cobra.Command) string {
	root := cmd.Root().Name()
	if prog := os.Args[0]; filepath.Base(prog) == root && prog != root {
		return shellWord(prog) + strings.TrimPrefix(cmd.CommandPath(), root)
	}
	return cmd.CommandPath()
}

// addCABundleFlag adds --ca-bundle, shared by the commands that build images.
func addCABundleFlag(f *pflag.FlagSet, v *string) {
	def := run.DefaultCABundle
	if env, ok := os.LookupEnv("IOTBENCH_CA_BUNDLE"); ok {
		def = env
	}
	f.StringVar(v, "ca-bundle", def, "PEM bundle image builds trust; empty: none [$IOTBENCH_CA_BUNDLE]")
}

// addDBFlags adds the database flags of run and verify.
func addDBFlags(f *pflag.FlagSet, db, cpus *string, pool *[]int) {
	f.StringVar(db, "db", "", "targets' store: embedded or postgres (default: the scenario's)")
	f.StringVar(cpus, "db-cpus", "", "--db postgres: the server's cpuset (default: the target's)")
	f.IntSliceVar(pool, "db-pool", nil, "connection-pool sizes, the scenario run once each, e.g. 5,10,20")
}

func runRun(ctx context.Context, o *RunOptions) error {
	setup, err := o.setup()
	if err != nil {
		return err
	}
	// Progress: a status line on a terminal, plain lines elsewhere, nothing with --quiet.
	setup.Log = o.Streams.ErrOut
	switch {
	case o.Quiet:
		setup.Progress = io.Discard
	case o.Streams.ErrWidth != nil && o.Streams.ErrTerminal != nil:
		setup.Terminal = &run.Terminal{W: o.Streams.ErrTerminal, Width: o.Streams.ErrWidth}
	}
	if o.History != "" {
		store, err := history.Open(ctx, o.History)
		if err != nil {
			return err
		}
		defer store.Close()
		setup.History = &history.Recorder{Store: store}
	}
	runs := run.New(o.Effects)
	defer runs.Close()
	out, err := runs.Execute(ctx, setup)
	if out != nil && len(out.Rows) > 0 {
		if werr := o.writeOutcome(out); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if out.Paired != nil {
		return writeVerdicts(o.verdictStreams(), *out.Paired, o.verdictFormat(), out.Gate)
	}
	return out.Err()
}

// setup checks the flags and turns them into the run's setup.
func (o *RunOptions) setup() (run.Setup, error) {
	if err := o.checkOutputFlags(); err != nil {
		return run.Setup{}, err
	}
	if err := o.validate(); err != nil {
		return run.Setup{}, err
	}
	s := run.Setup{Engine: o.DockerHost, CABundle: o.CABundle, Generators: o.generatorCount(), GeneratorHosts: o.GeneratorHosts,
		Out: o.Out, Resume: o.Resume, SkipCalibration: !o.Calibration, KeepDisturbed: o.KeepDisturbed}
	if o.set("seed") {
		s.Seed = &o.Seed
	}
	if o.Kube != "" {
		s.Kube = &kube.Options{Context: o.Kube, Kubeconfig: o.Kubeconfig, Namespace: o.Namespace, Loader: o.ImageLoader, Registry: o.Registry}
	}
	if o.Resume != "" && o.set("out") {
		return s, usagef("--resume appends to its file: drop --out")
	}
	var err error
	if s.FindMax, err = o.findMax(); err != nil {
		return s, err
	}
	if s.Gate, err = o.gate(s.FindMax != nil); err != nil {
		return s, err
	}
	spec, err := o.loadSpec()
	if err != nil {
		return s, err
	}
	if err := spec.Check(); err != nil {
		return s, run.PlanError(err)
	}
	if o.URL != "" {
		s.Service, err = o.service(spec)
		return s, err
	}
	if o.set("name") {
		return s, usagef("--name names a --url run's target; a scenario's targets have their names")
	}
	s.Scenario = &run.Scenario{File: o.File, Name: o.Scenario, Overrides: o.overrides(spec), Baseline: o.Baseline, AA: o.AA}
	return s, nil
}

// loadSpec is the load settings the flags give, marked as given: the others are their
// defaults, which the scenario's (or a --url run's defaults) replace.
func (o *RunOptions) loadSpec() (loadspec.Spec, error) {
	spec := o.Load
	spec.Given = nil
	for _, k := range loadspec.Keys {
		if o.set(k.Flag()) {
			spec.Give(k)
		}
	}
	for k, text := range map[loadspec.Key]string{loadspec.Stages: o.Stages, loadspec.Think: o.Think} {
		if spec.Gives(k) {
			if err := spec.Set(k, text); err != nil {
				return spec, run.PlanError(err)
			}
		}
	}
	return spec, nil
}

// overrides are the scenario's settings the flags replace: only those the user gave.
func (o *RunOptions) overrides(spec loadspec.Spec) plan.Overrides {
	return plan.Overrides{Targets: o.Targets, Load: spec, CPUs: o.CPUs, Memory: o.Memory, DB: o.DB, DBCPUs: o.DBCPUs, DBPool: o.DBPool, NoSignals: !o.Signals}
}

// pairedAdHocRounds are a paired --url run's rounds unless --trials says: a scenario gives its
// own trials, a run of one side of --url does one.
const pairedAdHocRounds = 10

// service is the --url run's service, and its baseline's.
func (o *RunOptions) service(spec loadspec.Spec) (*run.Service, error) {
	for _, scenarioOnly := range []string{"scenario", "targets", "cpus", "memory", "file", "db", "db-cpus", "db-pool", "signals"} {
		if o.set(scenarioOnly) {
			return nil, usagef("--%s belongs to scenario runs; --url loads a running service as it is", scenarioOnly)
		}
	}
	if !spec.Gives(loadspec.Rate) && !spec.Gives(loadspec.Connections) && !spec.Gives(loadspec.Stages) {
		return nil, usagef("--url needs --rate (open loop), --stages (open loop, rates over time) or --connections (closed loop)")
	}
	if o.BaselineURL != "" && !spec.Gives(loadspec.Trials) {
		spec.Trials = pairedAdHocRounds
		spec.Give(loadspec.Trials)
	}
	svc := &run.Service{URL: o.URL, Name: o.Name, Method: strings.ToUpper(o.Method), Header: http.Header{}, Contains: o.Contains,
		Load: spec, BaselineURL: o.BaselineURL, AA: o.AA, CA: o.CA}
	for _, h := range o.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, usagef("--header %q: write it as Name:value", h)
		}
		svc.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if o.BodyFile != "" {
		var err error
		if svc.Body, err = os.ReadFile(o.BodyFile); err != nil {
			return nil, usagef("--body-file: %v", err)
		}
	}
	return svc, nil
}

// gate checks the paired-run flags: nil for a run of one side.
func (o *RunOptions) gate(findMax bool) (*run.Gate, error) {
	if o.Baseline == "" && o.BaselineURL == "" {
		for _, name := range []string{"aa", "fail-on", "allow-inconclusive", "until", "max-trials"} {
			if o.set(name) {
				return nil, usagef("--%s belongs to a paired run (--baseline DIR, or --baseline-url with --url)", name)
			}
		}
		return nil, nil
	}
	switch {
	case o.BaselineURL != "" && o.URL == "":
		return nil, usagef("--baseline-url pairs with --url: give the candidate service's --url too (for scenario runs, --baseline DIR)")
	case o.Baseline != "" && o.URL != "":
		return nil, usagef("--baseline DIR is a checkout of a scenario run's targets; beside --url, give --baseline-url")
	case o.AA < 0:
		return nil, usagef("--aa %d: give a number of A/A rounds, 0 or more", o.AA)
	}
	return newGate(o.FailOn, o.Until, o.MaxTrials, run.DefaultAlpha, o.AllowInconclusive, findMax)
}

// findMax reads the --find-max flags; nil when the run measures at one rate.
func (o *RunOptions) findMax() (*run.FindMax, error) {
	if !o.FindMax {
		for _, name := range []string{"slo", "step", "resolution", "latency-at", "profile"} {
			if o.set(name) {
				return nil, usagef("--%s belongs to --find-max", name)
			}
		}
		return nil, nil
	}
	if o.Load.Connections > 0 {
		return nil, usagef("--find-max searches an open-loop rate: drop --connections (--rate sets where the search starts)")
	}
	m, err := run.NewFindMax(o.SLO, o.Step, o.Resolution, o.LatencyAt)
	if err != nil {
		return nil, err
	}
	if o.Profile {
		switch {
		case o.URL != "":
			return nil, usagef("--profile samples a target iotbench started, in its container: a --url service is not one")
		case o.DockerHost != "":
			return nil, usagef("--profile samples the targets from this machine with perf: drop --docker-host")
		}
		if _, err := exec.LookPath("perf"); err != nil {
			return nil, usagef("--profile: %v", profile.ErrNoPerf)
		}
		m.Profile = true
	}
	return m, nil
}
