// Package plan turns a scenario and the command line's overrides into the cells to measure: every
// (target, trial) with the same settings, the images to build once, and the split of CPUs between
// the targets and the load generator.
package plan

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/payload"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/scenario"
)

// Overrides are the command line's changes to a scenario; zero values change nothing.
type Overrides struct {
	Targets []string
	// Load are the command line's load settings: those it gives replace the scenario's.
	Load   loadspec.Spec
	CPUs   string // the targets' cpuset
	Memory string
	// DB is the store (scenario.DBEmbedded or DBPostgres), DBCPUs the database server's cpuset,
	// DBPool the pool sizes to sweep.
	DB     string
	DBCPUs string
	DBPool []int
	// NoSignals leaves the targets' runtime signals unread (docs/contract.md, "Signals").
	NoSignals bool
}

// Cell is one measurement: a fresh container of Target, loaded as Load says.
type Cell struct {
	// Scenario names the cell's rows: the scenario's name, and for a payload sweep
	// "<scenario>.<Size>".
	Scenario string
	// Size is the payload size of a sweep ("1k"); empty when the scenario sweeps none.
	Size   string
	Target string
	Trial  int
	// Variant is the side of a paired run the cell measures (results.VariantBase, …); empty in
	// a run of one side.
	Variant string
	// Round orders the rounds of a paired run, A/A rounds among the others; 0 in a run of one
	// side, whose rounds are its trials.
	Round int
	Build container.BuildSpec
	Spec  container.Spec // Image is set once the build is done
	// Path is appended to the started target's URL to make Load.Request.URL; in a mix each
	// kind's URL is its path, aimed the same way.
	Path string
	// Load.Check is the whole of what a good answer is: the engine applies its Contains,
	// verification before load and the bench the rest.
	Load load.Config
	// DB is where the target stores its rows.
	DB Database
}

// Database is how a cell's target stores its rows: its own embedded database, or a PostgreSQL
// server started before it (and removed after it), whose address its environment gets.
type Database struct {
	Kind     string // scenario.DBEmbedded or scenario.DBPostgres
	PoolSize int    // the target's connection pool (DB_POOL_SIZE)
	// The server's image and container, for DBPostgres only (Spec.Image is set once it is built).
	Build container.BuildSpec
	Spec  container.DBSpec
}

// Server says whether the cell starts a database server.
func (d Database) Server() bool { return d.Kind == scenario.DBPostgres }

// PostgresContext is the build context of the PostgreSQL image, beside the scenario file.
const PostgresContext = "db/postgres"

// DBPortOffset places a target's database server on its port + 10000 (8083 → 18083): like the
// targets', one fixed port per target, so that engineers running different targets never collide.
const DBPortOffset = 10000

// SignalsPortOffset places a target's signals port (docs/contract.md, "Signals") at its port + 20000,
// for the same reason.
const SignalsPortOffset = 20000

// dbStartupTimeout bounds the wait for a fresh server: initdb and the first login take seconds.
const dbStartupTimeout = 60 * time.Second

// Plan is everything one run measures. All cells share every setting but the target.
type Plan struct {
	// Name is the scenario's ("adhoc" for a service iotbench did not start, "verify" for the
	// contract's checks).
	Name          string
	Cells         []Cell
	Builds        []container.BuildSpec // distinct, in first-use order
	TargetCPUs    []int
	GeneratorCPUs []int
	Memory        string
	// Paired says every round measures a baseline and a candidate of each target (Pair).
	Paired bool
	// postgresContext is where the PostgreSQL image is built from.
	postgresContext string
	// noSignals: the targets are given no signals port.
	noSignals bool
}

func postgresContext(f *scenario.File) string {
	return filepath.Join(filepath.Dir(f.Path), PostgresContext)
}

// Make plans scenario name of f. allowed is the CPUs this process may use.
func Make(f *scenario.File, name string, o Overrides, allowed []int) (*Plan, error) {
	s := f.Scenarios[name]
	if s == nil {
		return nil, fmt.Errorf("no scenario %q in %s (known: %s)", name, f.Path, strings.Join(f.ScenarioOrder, ", "))
	}
	targets, err := scenarioTargets(f, s, o)
	if err != nil {
		return nil, err
	}
	spec, err := scenarioLoad(s, o)
	if err != nil {
		return nil, err
	}
	settings, memory, targetCPUs, generatorCPUs, err := resources(f, s.Settings, fmt.Sprintf("scenario %q", s.Name), o, allowed)
	if err != nil {
		return nil, err
	}
	db, pools, err := database(f, settings, fmt.Sprintf("scenario %q", s.Name), o, targetCPUs, allowed)
	if err != nil {
		return nil, err
	}
	shared, err := cellLoad(s, spec)
	if err != nil {
		return nil, err
	}

	p := &Plan{Name: s.Name, TargetCPUs: targetCPUs, GeneratorCPUs: generatorCPUs, Memory: settings.Memory, postgresContext: postgresContext(f), noSignals: o.NoSignals}
	// A payload sweep is planned once per size, each size a scenario of its own rows.
	sizes := s.Request.Sizes
	if len(sizes) == 0 {
		sizes = []scenario.PayloadSize{{}}
	}
	for _, size := range sizes {
		req, name, err := sizedRequest(f, s, shared.Request, size)
		if err != nil {
			return nil, err
		}
		for _, pool := range pools {
			rows := Cell{Scenario: name, Size: size.Label, Path: s.Request.Path, Load: shared}
			rows.Load.Request = req
			if pool.named {
				rows.Scenario += fmt.Sprintf(".pool-%d", pool.size)
			}
			if err := p.addTrials(f, targets, spec.Trials, rows, db, pool.size, memory); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// scenarioTargets are the targets to measure: the command line's, each a target of f, else the
// scenario's.
func scenarioTargets(f *scenario.File, s *scenario.Scenario, o Overrides) ([]string, error) {
	if len(o.Targets) == 0 {
		return s.Targets, nil
	}
	for _, t := range o.Targets {
		if f.Targets[t] == nil {
			return nil, &OverrideError{"targets", t, fmt.Errorf("not a target of %s (known: %s)", f.Path, strings.Join(f.TargetOrder, ", "))}
		}
	}
	return o.Targets, nil
}

// scenarioLoad is the scenario's load with the command line's settings laid over it; a timeout
// the command line gives is checked against the scenario's latencies.
func scenarioLoad(s *scenario.Scenario, o Overrides) (loadspec.Spec, error) {
	return o.Load.Over(s.LoadSpec(), s.Check.MinLatency)
}

// cellLoad is the load every cell of the scenario shares: its request (for a mix, its kinds)
// loaded as spec says. A payload sweep changes the request's body and each trial the model's seed.
func cellLoad(s *scenario.Scenario, spec loadspec.Spec) (load.Config, error) {
	req, err := request(s)
	if err != nil {
		return load.Config{}, err
	}
	kinds, check, err := mix(s, spec.Model())
	if err != nil {
		return load.Config{}, err
	}
	return spec.Config(req, check, kinds, 0), nil
}

// sizedRequest is req for one size of a payload sweep, its body padded to the size, and the
// scenario name of the size's rows; req and the scenario's name as they are for the zero size
// (no sweep).
func sizedRequest(f *scenario.File, s *scenario.Scenario, req load.Request, size scenario.PayloadSize) (load.Request, string, error) {
	if size.Label == "" {
		return req, s.Name, nil
	}
	// Checked when the file was read; an error here is a changed body file.
	body, err := payload.Pad(req.Body, s.Request.PadField, size.Bytes)
	if err != nil {
		return req, "", fmt.Errorf("%s: scenario %s: request.body_sizes %s: %v", f.Path, s.Name, size.Label, err)
	}
	req.Body = body
	return req, s.Name + "." + size.Label, nil
}

// addTrials adds the cells of one scenario's rows (rows names them and holds their load): each
// trial of each target, with the target's container and store (db, of pool connections).
func (p *Plan) addTrials(f *scenario.File, targets []string, trials int, rows Cell, db dbSettings, pool int, memory int64) error {
	// Trials are the outer loop: the targets take turns, so drift in the machine spreads evenly.
	for trial := 1; trial <= trials; trial++ {
		for _, t := range targets {
			b, spec, err := p.addTarget(f.Targets[t], memory)
			if err != nil {
				return err
			}
			cellDB, err := p.addDatabase(db, pool, f.Targets[t], &spec, memory)
			if err != nil {
				return err
			}
			c := rows
			c.Target, c.Trial, c.Build, c.Spec, c.DB = t, trial, b, spec, cellDB
			c.Load = loadspec.Trial(rows.Load, trial)
			p.Cells = append(p.Cells, c)
		}
	}
	return nil
}

// mix is s's requests as the load engine's kinds, checked against model (the command line may
// have made it a closed loop), and the cell's check: the scenario's, or for a mix what the bench
// holds of the whole (whether any request stores rows or calls downstream). Nil kinds for a
// scenario of one request.
func mix(s *scenario.Scenario, model load.Model) ([]load.Kind, load.Check, error) {
	if !s.Mixed() {
		return nil, s.Check, nil
	}
	kinds, err := s.Kinds()
	if err != nil {
		return nil, load.Check{}, err
	}
	if err := load.CheckKinds(kinds, model); err != nil {
		return nil, load.Check{}, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	var check load.Check
	for _, k := range kinds {
		check.StoresRows = check.StoresRows || k.Check.StoresRows
		check.CallsDownstream = check.CallsDownstream || k.Check.CallsDownstream
	}
	return kinds, check, nil
}

// poolSize is one size of a pool sweep; named when the scenario or the command line swept sizes,
// so that its rows are a scenario of their own.
type poolSize struct {
	size  int
	named bool
}

// dbSettings are a plan's resolved database settings.
type dbSettings struct {
	kind string
	cpus []int
}

// database resolves the store, the server's CPUs (the targets' unless set) and the pool sizes of
// settings (of f, at where) and the command line.
func database(f *scenario.File, settings scenario.Settings, where string, o Overrides, targetCPUs, allowed []int) (dbSettings, []poolSize, error) {
	// A command-line value is named by its flag (db-cpus), a file's at its key's line (db_cpus).
	refused := func(key, override, value string, err error) error {
		if override != "" {
			return &OverrideError{Setting: strings.ReplaceAll(key, "_", "-"), Value: override, Err: err}
		}
		return settingError(f, settings, where, key, "", value, err)
	}
	db := dbSettings{kind: cmp.Or(o.DB, settings.DB, scenario.DBEmbedded), cpus: targetCPUs}
	if err := scenario.CheckDB(db.kind); err != nil {
		return db, nil, refused("db", o.DB, db.kind, err)
	}
	if asked := cmp.Or(o.DBCPUs, settings.DBCPUs); asked != "" {
		cpus, err := cpuset.Parse(asked, cpuset.MaxCPUs)
		if err == nil {
			for _, c := range cpus {
				if !slices.Contains(allowed, c) {
					err = fmt.Errorf("CPU %d is not available here (available: %s)", c, cpuset.Format(allowed))
					break
				}
			}
		}
		if err != nil {
			return db, nil, refused("db_cpus", o.DBCPUs, asked, err)
		}
		db.cpus = cpus
	}
	sizes := settings.DBPool
	if len(o.DBPool) > 0 {
		sizes = o.DBPool
	}
	if err := scenario.CheckPoolSizes(sizes); err != nil {
		var override string
		if len(o.DBPool) > 0 {
			override = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(o.DBPool)), ","), "[]")
		}
		return db, nil, refused("db_pool", override, "", err)
	}
	if len(sizes) == 0 {
		return db, []poolSize{{size: scenario.DefaultPoolSize}}, nil
	}
	pools := make([]poolSize, len(sizes))
	for i, n := range sizes {
		pools[i] = poolSize{n, true}
	}
	return db, pools, nil
}

// addDatabase gives the target of spec its store: the pool size in its environment and, for a
// server, the server's image among the builds and its container beside the target's port.
func (p *Plan) addDatabase(db dbSettings, pool int, t *scenario.Target, spec *container.Spec, memory int64) (Database, error) {
	env := maps.Clone(spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["DB_POOL_SIZE"] = strconv.Itoa(pool)
	spec.Env = env
	d := Database{Kind: db.kind, PoolSize: pool}
	if !d.Server() {
		return d, nil
	}
	port := t.Port + DBPortOffset
	if port > 65535 {
		return d, fmt.Errorf("target %s: its database would listen on port %d (its port + %d), beyond 65535: give the target a port below %d", t.Name, port, DBPortOffset, 65536-DBPortOffset)
	}
	d.Build = container.BuildSpec{Context: p.postgresContext}
	if !slices.ContainsFunc(p.Builds, func(x container.BuildSpec) bool { return x.Tag() == d.Build.Tag() }) {
		p.Builds = append(p.Builds, d.Build)
	}
	d.Spec = container.DBSpec{Target: t.Name, Port: port, CPUSet: cpuset.Format(db.cpus), Memory: memory, StartupTimeout: dbStartupTimeout}
	return d, nil
}

// addTarget records t's image among the builds and returns it with t's container spec.
func (p *Plan) addTarget(t *scenario.Target, memory int64) (container.BuildSpec, container.Spec, error) {
	b := container.BuildSpec{Context: t.Build, Dockerfile: t.Dockerfile, Args: t.BuildArgs}
	if !slices.ContainsFunc(p.Builds, func(x container.BuildSpec) bool { return x.Tag() == b.Tag() }) {
		p.Builds = append(p.Builds, b)
	}
	spec := container.Spec{
		Target: t.Name, Port: t.Port, Env: t.Env, Command: t.Command, Health: t.Health, StartupTimeout: t.StartupTimeout,
		CPUSet: cpuset.Format(p.TargetCPUs), Memory: memory,
	}
	if !p.noSignals {
		spec.SignalsPort = t.Port + SignalsPortOffset
		if spec.SignalsPort > 65535 {
			return b, spec, fmt.Errorf("target %s: its signals would be served on port %d (its port + %d), beyond 65535: give the target a port below %d, or run with --signals=false", t.Name, spec.SignalsPort, SignalsPortOffset, 65536-SignalsPortOffset)
		}
	}
	return b, spec, nil
}

// Targets plans one start of each named target (every target of f when names is empty) with the
// CPU and memory settings of f's defaults, as `iotbench verify` does. Cells carry no load.
func Targets(f *scenario.File, names []string, o Overrides, allowed []int) (*Plan, error) {
	if len(names) == 0 {
		names = f.TargetOrder
	}
	settings, memory, targetCPUs, generatorCPUs, err := resources(f, f.Defaults, "defaults", o, allowed)
	if err != nil {
		return nil, err
	}
	db, pools, err := database(f, settings, "defaults", o, targetCPUs, allowed)
	if err != nil {
		return nil, err
	}
	p := &Plan{Name: "verify", TargetCPUs: targetCPUs, GeneratorCPUs: generatorCPUs, Memory: settings.Memory, postgresContext: postgresContext(f), noSignals: o.NoSignals}
	for _, name := range names {
		t := f.Targets[name]
		if t == nil {
			return nil, &OverrideError{"targets", name, fmt.Errorf("not a target of %s (known: %s)", f.Path, strings.Join(f.TargetOrder, ", "))}
		}
		b, spec, err := p.addTarget(t, memory)
		if err != nil {
			return nil, err
		}
		cellDB, err := p.addDatabase(db, pools[0].size, t, &spec, memory)
		if err != nil {
			return nil, err
		}
		p.Cells = append(p.Cells, Cell{Scenario: "verify", Target: name, Trial: 1, Build: b, Spec: spec, DB: cellDB})
	}
	return p, nil
}

// resources applies the command line's cpus and memory to settings (of f, at where) and resolves
// them: the memory limit in bytes and the CPUs of the targets and of the generator.
func resources(f *scenario.File, settings scenario.Settings, where string, o Overrides, allowed []int) (scenario.Settings, int64, []int, []int, error) {
	if o.Memory != "" {
		settings.Memory = o.Memory
	}
	if o.CPUs != "" {
		settings.CPUs = o.CPUs
	}
	memory, err := scenario.ParseMemory(settings.Memory)
	if err != nil {
		return settings, 0, nil, nil, settingError(f, settings, where, "memory", o.Memory, settings.Memory, err)
	}
	targetCPUs, generatorCPUs, err := SplitCPUs(allowed, settings.CPUs)
	if err != nil && settings.CPUs != "" {
		err = settingError(f, settings, where, "cpus", o.CPUs, settings.CPUs, err)
	}
	return settings, memory, targetCPUs, generatorCPUs, err
}

func request(s *scenario.Scenario) (load.Request, error) {
	r, err := s.Request.Load()
	if err != nil {
		return r, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return r, nil
}

// SplitCPUs gives the targets their cpuset and the generator the rest of allowed. With no cpuset
// asked for, targets get the last quarter of the CPUs (at least one) and the generator the others:
// on 2 cores, one each; on 8, the target 2 and the generator 6, so that the generator is never
// the bottleneck.
func SplitCPUs(allowed []int, asked string) (targetCPUs, generator []int, err error) {
	allowed = slices.Sorted(slices.Values(allowed))
	if asked == "" {
		if len(allowed) < 2 {
			return nil, nil, fmt.Errorf("iotbench needs at least 2 CPUs, one for the target and one for the load generator; this process may use %v", allowed)
		}
		k := max(1, len(allowed)/4)
		return allowed[len(allowed)-k:], allowed[:len(allowed)-k], nil
	}
	// Bounded by this machine's CPUs before the list is expanded.
	targetCPUs, err = cpuset.Parse(asked, slices.Max(append([]int{0}, allowed...))+1)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range targetCPUs {
		if !slices.Contains(allowed, c) {
			return nil, nil, fmt.Errorf("CPU %d is not available here (available: %s)", c, cpuset.Format(allowed))
		}
	}
	for _, c := range allowed {
		if !slices.Contains(targetCPUs, c) {
			generator = append(generator, c)
		}
	}
	if len(generator) == 0 {
		return nil, nil, fmt.Errorf("leaves no CPU for the load generator (available: %s)", cpuset.Format(allowed))
	}
	return targetCPUs, generator, nil
}

// AdHoc is the request and load of `iotbench run --url`, against a service already running.
type AdHoc struct {
	URL string
	// Name names the cell's target; empty: the URL's host:port.
	Name    string
	Request load.Request // URL ignored
	Check   load.Check
	// Load are the command line's load settings, laid over the defaults (adHocDefaults); its
	// protocol by default as URL's scheme says.
	Load loadspec.Spec
}

// adHocDefaults are a --url run's settings where the command line gives none: the defaults, one
// trial (a run of a service is not a comparison of targets).
func adHocDefaults() loadspec.Spec {
	d := loadspec.Defaults
	d.Trials = 1
	return d
}

// MakeAdHoc plans trials of one request against a running service. The service is not pinned
// by iotbench: its CPUs are whatever it was started with.
func MakeAdHoc(a AdHoc) (*Plan, error) {
	if err := load.RequireLoopback(a.URL, ""); err != nil {
		return nil, err
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, err
	}
	base := adHocDefaults()
	if u.Scheme == "https" {
		base.Protocol = protocol.HTTPS
	}
	if p := a.Load.Protocol; a.Load.Gives(loadspec.Protocol) && protocol.Check(p) == nil && p.Or().Scheme() != u.Scheme {
		return nil, &loadspec.Error{Key: loadspec.Protocol, Value: string(p), Err: fmt.Errorf("speaks to %s:// URLs, and --url is %s", p.Or().Scheme(), a.URL)}
	}
	spec, err := a.Load.Over(base, 0)
	if err != nil {
		return nil, err
	}
	path := u.RequestURI()
	name := u.Host
	if a.Name != "" {
		name = a.Name
	}
	// The name is written into the results file and every report of it: a terminal or a pull
	// request's comment must not receive control codes or markup through it.
	if err := safetext.CheckName(name); err != nil {
		if a.Name == "" {
			return nil, fmt.Errorf("URL %q: its host:port %q cannot name the target: %v; give --name", a.URL, name, err)
		}
		return nil, fmt.Errorf("--name %q: %v", name, err)
	}
	p := &Plan{Name: "adhoc"}
	for trial := 1; trial <= spec.Trials; trial++ {
		p.Cells = append(p.Cells, Cell{
			Scenario: "adhoc", Target: name, Trial: trial, Path: path,
			Spec: container.Spec{Target: name, Service: u.Scheme + "://" + u.Host},
			Load: spec.Config(a.Request, a.Check, nil, trial),
		})
	}
	return p, nil
}
