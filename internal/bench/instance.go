package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/units"
	"github.com/iotbench/iotbench/internal/verify"
)

// instance is one started target of a cell, verified with the cell's request before any load:
// the one lifecycle of runs, find-max searches and payload sweeps. Each measured phase on it
// returns a row; remove ends it whatever happens. A cell on PostgreSQL starts its server first
// (a fresh database), hands its address to the target, and removes it after the target.
type instance struct {
	r   *Runner
	p   *plan.Plan
	c   plan.Cell
	ctr container.Instance
	// db is the cell's database server; nil for the embedded store.
	db container.Database
	// oomKills is the container's count when it started, so that a phase's kills are its own.
	oomKills int64
	// session, when set, keeps the connections of one load phase for the next (a search's,
	// searchRun.use); nil: each phase opens its own.
	session *load.Session
}

// load runs a measured phase: on the instance's connections when it keeps them, else with the
// runner's generator(s).
func (in *instance) load(ctx context.Context, cfg load.Config) (load.Result, error) {
	if in.session != nil {
		return in.session.Run(ctx, cfg)
	}
	return in.r.load(ctx, cfg)
}

// unmeasured runs a load no row records (a warm-up, a climb, a recovery), in this process: on the
// instance's connections when it keeps them.
func (in *instance) unmeasured(ctx context.Context, cfg load.Config) (load.Result, error) {
	if in.session != nil {
		return in.session.Run(ctx, cfg)
	}
	return load.Run(ctx, cfg)
}

// notLoaded is why a cell's target was never loaded: the kind, what went wrong, and what the
// target logged.
type notLoaded struct {
	kind        fault.Kind
	detail, log string
}

// reason is the row's invalid_reason: the kind's word, then what went wrong.
func (nl notLoaded) reason() string { return string(nl.kind) + ": " + nl.detail }

// record makes row a row of a cell never loaded, for nl.
func (nl notLoaded) record(row *results.Row) { row.SetFault(nl.kind, nl.reason()) }

// start starts c's target and, unless contract-only, checks the cell's request on it. A target
// that does not start or fails its check comes back as notLoaded; err is only cancellation.
func (r *Runner) start(ctx context.Context, p *plan.Plan, c plan.Cell, images built, checkRequest bool) (*instance, *notLoaded, error) {
	spec := c.Spec
	spec.Image = images.ids[c.Build.Tag()]
	db, nl, err := r.startDatabase(ctx, c, images)
	if db == nil && (err != nil || nl != nil) {
		return nil, nl, err
	}
	downstreamURL, err := r.downstreamFor(c)
	if err != nil {
		if db != nil {
			r.removeDatabase(ctx, c, db)
		}
		return nil, &notLoaded{fault.StartFailed, err.Error(), ""}, nil
	}
	if db != nil || downstreamURL != "" {
		spec.Env = maps.Clone(spec.Env)
		if spec.Env == nil {
			spec.Env = map[string]string{}
		}
	}
	if db != nil {
		spec.Env["DATABASE_URL"] = db.URL()
	}
	if downstreamURL != "" {
		spec.Env["DOWNSTREAM_URL"] = downstreamURL
	}
	begin := time.Now()
	ctr, err := r.Lifecycle.Start(ctx, spec)
	if err != nil {
		if db != nil {
			r.removeDatabase(ctx, c, db)
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		fmt.Fprintf(r.Log, "  %v\n", err)
		return nil, &notLoaded{fault.StartFailed, firstLine(err.Error()), carriedLog(err)}, nil
	}
	in := &instance{r: r, p: p, c: c, ctr: ctr, db: db, oomKills: -1}
	if f, err := in.fate(ctx); err == nil {
		in.oomKills = f.OOMKills
	}
	fmt.Fprintf(r.Log, "  healthy in %s\n", time.Since(begin).Round(100*time.Millisecond))
	if !checkRequest {
		return in, nil, nil
	}
	cfg := in.config(c.Load)
	r.status().Phase("verify")
	if err := verifyCell(ctx, plan.TargetURL(ctr.URL(), cfg.Request.Protocol), cfg, db); err != nil {
		if ctx.Err() != nil {
			in.remove(ctx)
			return nil, nil, ctx.Err()
		}
		if r.WarnUnverified {
			fmt.Fprintf(r.Log, "  warning: the request fails its check before load (%v); measuring anyway\n", err)
			return in, nil, nil
		}
		detail := err.Error()
		if cause, _ := in.cause(ctx, time.Time{}); cause != "" {
			detail = cause + "; " + detail
		}
		nl := &notLoaded{fault.VerifyFailed, detail, ctr.Logs(context.WithoutCancel(ctx), LogLines)}
		in.remove(ctx)
		return nil, nl, nil
	}
	return in, nil, nil
}

// removeDatabase removes c's database server when its target is not started.
func (r *Runner) removeDatabase(ctx context.Context, c plan.Cell, db container.Database) {
	if err := db.Remove(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(r.Log, "  removing the database server of %s: %v\n", c.Target, err)
	}
}

// config is cfg aimed at the instance.
func (in *instance) config(cfg load.Config) load.Config {
	base := plan.TargetURL(in.ctr.URL(), cfg.Request.Protocol)
	cfg.Request.URL, cfg.Request.Remote = base+in.c.Path, in.r.RemoteHost
	aimKinds(&cfg, base, in.r.RemoteHost)
	return cfg
}

// remove removes the container, then its database server's, even when ctx is cancelled (Ctrl-C).
func (in *instance) remove(ctx context.Context) {
	if in.session != nil {
		in.session.Close()
	}
	if err := in.ctr.Remove(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(in.r.Log, "  removing the %s container: %v\n", in.c.Target, err)
	}
	if in.db != nil {
		if err := in.db.Remove(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(in.r.Log, "  removing the database server of %s: %v\n", in.c.Target, err)
		}
	}
}

// startDatabase starts c's database server when it has one: nil, nil, nil for the embedded
// store. A server that does not start comes back as notLoaded; err is only cancellation.
func (r *Runner) startDatabase(ctx context.Context, c plan.Cell, images built) (container.Database, *notLoaded, error) {
	if !c.DB.Server() {
		return nil, nil, nil
	}
	servers, ok := r.Lifecycle.(container.Databases)
	if !ok {
		return nil, &notLoaded{fault.StartFailed, "this engine cannot start a database server (--db " + c.DB.Kind + " needs Docker)", ""}, nil
	}
	spec := c.DB.Spec
	spec.Image = images.ids[c.DB.Build.Tag()]
	begin := time.Now()
	db, err := servers.StartDatabase(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		fmt.Fprintf(r.Log, "  %v\n", err)
		return nil, &notLoaded{fault.StartFailed, firstLine(err.Error()), carriedLog(err)}, nil
	}
	fmt.Fprintf(r.Log, "  database server ready in %s (CPUs %s)\n", time.Since(begin).Round(100*time.Millisecond), spec.CPUSet)
	return db, nil, nil
}

// sameRows holds the rows the target counts (/stats) against those its database server counts:
// a target that ignored DATABASE_URL and stored elsewhere fails it.
func (in *instance) sameRows(ctx context.Context, req load.Request) error {
	hc, err := verify.Client(req, 10*time.Second)
	if err != nil {
		return err
	}
	stats, err := verify.StoredRows(ctx, hc, plan.TargetURL(in.ctr.URL(), req.Protocol))
	if err != nil {
		return err
	}
	n, err := in.db.CountRows(ctx)
	if err != nil {
		return err
	}
	if n != stats {
		return fmt.Errorf("/stats counts %d rows, the database server %d: the target does not store into it", stats, n)
	}
	return nil
}

// phase is what one measured phase on an instance found besides its row.
type phase struct {
	res load.Result
	// stored is the stored-row check's error; nil when it held or the work stores nothing.
	stored error
	// cause is what became of the target when it died or lost a process to its memory limit;
	// stopped says its engine stopped it (a restart of the engine), which is not the target's doing.
	cause   string
	stopped bool
	// disturbed says what other work took of the phase's CPUs; empty when nothing did.
	disturbed string
	// unsteady says which of the phase's figures trended; empty when it was steady or not judged.
	unsteady string
	// usage is the target's resources second by second, for the phase's timeline (Runner.detail).
	usage []resources.SecondUsage
}

// measure runs one load phase, cfg, on the instance and fills row with its figures, the
// target's resources and the stored-row check; an invalid row says first what became of the
// target, and its log is kept. The error is only cancellation. The phase's timeline and
// histograms are the caller's to keep (Runner.detail), once it keeps the row.
func (in *instance) measure(ctx context.Context, row *results.Row, cfg load.Config) (phase, error) {
	var ph phase
	cfg = in.config(cfg)
	m := observe(row, in.ctr, in.c.Spec, in.p.GeneratorCPUs, in.r.machine())
	m.observeDatabase(in.db, in.c.DB.Spec.CPUSet)
	defer m.discard()
	rows := countRows(in.c.Load.Check.StoresRows, plan.TargetURL(in.ctr.URL(), cfg.Request.Protocol), cfg.Request, in.db)
	calls := countCalls(in.c.Load.Check.CallsDownstream, in.r.downstream)
	var measuredFrom time.Time
	var compiledBefore int64 // the JIT's compilation time as the measured phase began
	jit := in.watchJIT(ctx)
	if jit != nil && cfg.WarmupAuto {
		cfg.Settled = jit.Settled
	}
	cfg.Measuring = func() {
		measuredFrom = time.Now()
		rows.start(ctx)
		calls.start()
		m.start()
		if jit != nil {
			compiledBefore = jit.latest()
			jit.cancel() // not asked during the measured phase: its requests would be load
		}
	}
	row.StartedAt = time.Now().Add(cfg.Warmup)
	res, err := in.load(ctx, cfg)
	calls.end()
	m.helperCPU = calls.cpu()
	if jit != nil {
		jit.stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ph, ctx.Err()
		}
		invalidate(row, fault.LoadFailed, "load failed: "+err.Error())
	} else {
		ph.res = res
		if !measuredFrom.IsZero() {
			row.StartedAt = measuredFrom // a warm-up until steady lasts what it lasts
		}
		m.record(row, res)
		if !ramps(cfg.Model.Stages) { // a ramp is not meant to be steady
			ph.unsteady = judgeSteady(row, res.Timeline)
			judgeSampling(row, res)
		}
		ph.disturbed = m.disturbed
		if cfg.WarmupAuto && res.Warmed >= cfg.Warmup {
			warn(row, "the "+warmedText(res.Warmed, cfg.Warmup)+": measured as it stood; a longer one (warmup: auto:DURATION) may settle")
		}
		if jit != nil && !measuredFrom.IsZero() {
			row.JITBusy, row.JITJudged = jit.compiledDuring(ctx, compiledBefore)
			if w := row.WarmingWarning(); w != "" {
				warn(row, w)
			}
		}
		// The warm-up's requests in flight at the boundary may store their rows after it.
		stored, failed := storing(cfg, res)
		if ph.stored = rows.check(ctx, stored, failed+res.WarmupInFlight); ph.stored != nil {
			invalidate(row, fault.Unstored, "stored rows: "+ph.stored.Error())
		}
		if err := calls.check(calling(cfg, res)); err != nil {
			invalidate(row, fault.Downstream, "downstream: "+err.Error())
		}
		warn(row, calls.lateness(load.LagAllowed(res.Latency.P99, res.ExpectedLatency)))
		row.DBRowsStored = rows.inDatabase()
	}
	ph.cause, ph.stopped = in.cause(ctx, measuredFrom)
	if err == nil {
		m.warn(row, ph.cause)
	}
	if ph.cause != "" {
		// The cause goes first: it explains the errors and ratios that follow.
		if row.Valid {
			row.SetFault(fault.TargetDied, ph.cause)
		} else {
			row.SetFault(fault.TargetDied, ph.cause+"; "+row.InvalidReason)
		}
	}
	if !row.Valid {
		in.r.keepLog(row, in.ctr.Logs(context.WithoutCancel(ctx), LogLines))
	}
	cutStages(&ph.res, in.c.Load)
	ph.usage = m.perSecond
	return ph, nil
}

func (in *instance) fate(ctx context.Context) (container.Fate, error) {
	e, ok := in.ctr.(container.Examined)
	if !ok {
		return container.Fate{Running: true, OOMKills: -1}, nil
	}
	return e.Fate(ctx)
}

// cause says in words what happened to the target when it no longer runs or lost a process to
// its memory limit; empty when neither. from is when the phase being explained began (zero: no
// phase), to say how far into it the target ended. stopped: its engine stopped it.
func (in *instance) cause(ctx context.Context, from time.Time) (why string, stopped bool) {
	f, err := in.fate(context.WithoutCancel(ctx))
	if err != nil {
		return "", false
	}
	limit := ""
	if in.c.Spec.Memory > 0 {
		limit = " at its " + memorySize(in.c.Spec.Memory) + " limit"
	}
	when := ""
	if !f.FinishedAt.IsZero() && !from.IsZero() {
		if into := f.FinishedAt.Sub(from); into >= 0 {
			when = fmt.Sprintf(" %.1f s into the measured phase", into.Seconds())
		} else {
			when = fmt.Sprintf(" %.1f s before the measured phase", -into.Seconds())
		}
	}
	killed := f.OOMKills > 0 && f.OOMKills > in.oomKills
	switch {
	case !f.Running && f.EngineRestarted:
		// Before the target's own exit: its code is its answer to being stopped.
		return fmt.Sprintf("the Docker engine restarted%s and stopped the target (exit code %d)", when, f.ExitCode), true
	case !f.Running && (f.OOMKilled || killed):
		return "target OOM-killed" + limit + when, false
	case !f.Running:
		return fmt.Sprintf("target exited with code %d%s", f.ExitCode, when), false
	case killed:
		return fmt.Sprintf("a process of the target was OOM-killed%s (%d kill(s)); the target still runs", limit, f.OOMKills-max(in.oomKills, 0)), false
	}
	return "", false
}

// keepLog writes a failed cell's target log to a file beside the results and names it in the row;
// without a folder for them, its last lines are printed. An empty log (a service iotbench did not
// start, an error that carries none) is neither written nor named.
func (r *Runner) keepLog(row *results.Row, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if r.LogDir != "" {
		name := fmt.Sprintf("%s.%s.%d.log", sanitize(row.Scenario), sanitize(row.Target), row.Trial)
		if row.Variant != "" {
			name = fmt.Sprintf("%s.%s.%s.%d.log", sanitize(row.Scenario), sanitize(row.Target), sanitize(row.Variant), row.Trial)
		}
		err := os.MkdirAll(r.LogDir, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(r.LogDir, name), []byte(text+"\n"), 0o644)
		}
		if err == nil {
			row.LogFile = filepath.Join(filepath.Base(r.LogDir), name)
			fmt.Fprintf(r.Log, "  the target's last log lines: %s\n", filepath.Join(r.LogDir, name))
			return
		}
		fmt.Fprintf(r.Log, "  keeping the target's log: %v\n", err)
	}
	fmt.Fprintf(r.Log, "  last lines of the target's log:\n%s\n", lastN(text, 20))
}

// LogLines is how many of a failed target's last log lines are kept beside the results.
const LogLines = 200

func lastN(text string, n int) string {
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sanitize keeps a name usable in a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// memorySize writes a limit in bytes as people write it: 1 GiB, 512 MiB.
func memorySize(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d bytes", b)
}

// verifyCell sends the cell's request a few times before any load and checks the answers as
// expected; when the work stores rows, /stats must have grown by one per request.
func verifyCell(ctx context.Context, baseURL string, cfg load.Config, db container.Database) error {
	if len(cfg.Kinds) > 0 {
		return verifyKinds(ctx, baseURL, cfg, db)
	}
	rows := countRows(cfg.Check.StoresRows, baseURL, cfg.Request, db)
	if err := rows.start(ctx); err != nil {
		return err
	}
	if err := verify.Request(ctx, cfg.Request, cfg.Check, cfg.Timeout); err != nil {
		return err
	}
	return rows.check(ctx, verify.Tries, 0)
}

// downstreamCalls tallies the downstream service over a measured phase; nil when the cell's work
// makes no calls or no service runs.
type downstreamCalls struct {
	s      downstream.Service
	before downstream.Tally
	// phase is what the service did over the phase (its calls and CPU since start, its
	// overruns), once ended; err why it could not be told.
	phase downstream.Tally
	err   error
}

func countCalls(calls bool, s downstream.Service) *downstreamCalls {
	if !calls || s == nil {
		return nil
	}
	return &downstreamCalls{s: s}
}

func (d *downstreamCalls) start() {
	if d != nil {
		d.before, d.err = d.s.Tally()
	}
}

// end takes the tally as the phase ends.
func (d *downstreamCalls) end() {
	if d == nil || d.err != nil {
		return
	}
	now, err := d.s.Tally()
	if err != nil {
		d.err = err
		return
	}
	d.phase = downstream.Tally{Calls: now.Calls - d.before.Calls, CPU: now.CPU - d.before.CPU, Late: now.Late}
}

// cpu is the CPU time the service's own process spent over the phase (zero in this process).
func (d *downstreamCalls) cpu() time.Duration {
	if d == nil {
		return 0
	}
	return d.phase.CPU
}

// check holds the calls against the successes: each success answered "downstream":true, so it
// made a call during the phase. More calls are not held against it (requests of the warm-up still
// in flight, failed requests).
func (d *downstreamCalls) check(successes int64) error {
	switch {
	case d == nil:
		return nil
	case d.err != nil:
		return fmt.Errorf("its calls could not be counted: %w", d.err)
	case d.phase.Calls < successes:
		return fmt.Errorf("%d calls for %d successes: answers claim calls the target did not make", d.phase.Calls, successes)
	}
	return nil
}

// lateness is the warning for a service whose waits overran, at p99, by more than allowed (the
// bar a generator's own delay is held to: its overrun is in the target's latency as well); empty
// when within it.
func (d *downstreamCalls) lateness(allowed time.Duration) string {
	if d == nil || d.phase.Late.Count == 0 || d.phase.Late.P99 <= allowed {
		return ""
	}
	return fmt.Sprintf("the downstream service answered late: its %s wait overran by %s at p99 (over %d calls; %s allowed), which the target's latency holds",
		units.Millis(downstream.Delay), units.Millis(d.phase.Late.P99), d.phase.Late.Count, units.Millis(allowed))
}

// machine is where the generator's and the targets' CPUs are watched for others' work: the
// lifecycle's host when it names one (a test's quiet machine), else this one.
func (r *Runner) machine() resources.Host {
	if m, ok := r.Lifecycle.(interface{ Machine() resources.Host }); ok {
		return m.Machine()
	}
	return resources.ThisHost
}
