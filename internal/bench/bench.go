// Package bench executes a plan: it builds the images, then for each cell starts a fresh target,
// verifies it, loads it, records the row and removes the target, whatever happens.
package bench

import (
	"cmp"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/profile"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/iotbench/iotbench/internal/units"
	"github.com/iotbench/iotbench/internal/verify"
)

// Meta is what every row records about the machine and iotbench.
type Meta struct {
	Version, Commit, HostCPU, Kernel, DockerVersion string
}

// Runner runs plans.
type Runner struct {
	Lifecycle container.Lifecycle
	// Log receives progress: one line per step, a line every few seconds during load.
	Log io.Writer
	// Record is called with each row as soon as its cell is done.
	Record func(results.Row) error
	// Detail, when set, is called with each measured phase's timeline and latency histogram,
	// before its row is recorded (detail.go).
	Detail func(results.Row, Detail) error
	// Unmeasured, when set, is called with the seconds of a load no row measures, as the warm-up
	// of a cell of its own: a search's ramp (timeline.RampKey).
	Unmeasured func(timeline.Cell) error
	// Profiled, when set, is called with each profile a search takes at its maximum
	// (MaxSearch.Profile).
	Profiled func(profile.Record) error
	// Status, when set, hears where the run is (status.go).
	Status Status
	Meta   Meta
	// ProgressEvery is how often load progress is printed; 0 means 5 s.
	ProgressEvery time.Duration
	// Seed shuffles the order of the targets within each round of trials (see ordered); every
	// row records it, so that the order can be replayed.
	Seed int64
	// LogDir receives the last LogLines lines of the target's log for every failed or invalid
	// cell, a file each, named in the row; empty: they are printed instead.
	LogDir string
	// Resumed are the rows an interrupted run of the same plan recorded: their cells are skipped,
	// the order kept (Seed must be theirs). Run refuses rows measured with other settings.
	Resumed []results.Row
	// More is asked, once every planned cell is recorded, whether to add a round to a paired
	// plan (plan.AddRound); nil: never. It gets every row of the run, resumed ones included.
	More func(rows []results.Row) bool
	// WarnUnverified measures a cell whose request fails its check before load, with a warning,
	// instead of recording it verify-failed: for a service the user started, whose errors under
	// load are what they came to measure.
	WarnUnverified bool
	// Load measures a cell's load phase; nil: load.Run, one generator in this process
	// (internal/shard's Runner.Run spreads it over several).
	Load func(context.Context, load.Config) (load.Result, error)
	// Generators is how many generator shards Load spreads each cell over; 0 or 1: one. Every
	// row records it (a setting of the fingerprint).
	Generators int
	// RemoteHost is the address of the engine's host when the targets run on another host:
	// the one address besides loopback their load may go to (load.Request.Remote).
	RemoteHost string
	// ServiceCA, for a service the user started over TLS, is the CA its certificate is signed
	// by, which the generator trusts instead of the run's own.
	ServiceCA *x509.CertPool
	// KeepDisturbed keeps a disturbed cell's (or find-max step's) first measurement, marked
	// disturbed, instead of measuring it again: a shorter run on a shared host, for a smoke test;
	// no figures to quote.
	KeepDisturbed bool

	// disturbedInARow counts the cells just measured whose every attempt was disturbed
	// (chronicAfter).
	disturbedInARow int

	// Downstream starts the service targets call instead of themselves, and says where it runs;
	// nil: in this process (downstream.Start).
	Downstream func() (downstream.Service, string, error)
	// downstream is that service (downstreamFor), while a plan runs.
	downstream downstream.Service
	// certs are the run's certificates, made for the first cell over TLS (serve).
	certs *runCerts
}

// load runs one load phase with the runner's generator(s).
func (r *Runner) load(ctx context.Context, cfg load.Config) (load.Result, error) {
	if r.Load != nil {
		return r.Load(ctx, cfg)
	}
	return load.Run(ctx, cfg)
}

// downstreamFor is the DOWNSTREAM_URL c's target is given, "" for none, starting iotbench's
// downstream service for the first target given it (stopDownstream closes it). A cell whose work
// calls it (load.Check.CallsDownstream) is given it; so is any target of ours serving a protocol
// other than clear HTTP/1.1 and not told another: its default downstream is itself in clear
// HTTP/1.1 (docs/contract.md), which its port then does not answer, so /enterprise would fail
// where a scenario does not declare the call. Not on another host's engine, which cannot reach
// this machine's loopback.
func (r *Runner) downstreamFor(c plan.Cell) (string, error) {
	// The spec's is what verify asks for; a run's cells serve their request's.
	served := cmp.Or(c.Spec.Protocol, c.Load.Request.Protocol).Or()
	ownTarget := c.Spec.Service == "" && r.RemoteHost == "" && c.Spec.Env["DOWNSTREAM_URL"] == ""
	if !c.Load.Check.CallsDownstream && (served == protocol.HTTP1 || !ownTarget) {
		return "", nil
	}
	if r.downstream == nil {
		s, where, err := r.startDownstream()
		if err != nil {
			return "", fmt.Errorf("starting the downstream service: %w", err)
		}
		r.downstream = s
		fmt.Fprintf(r.Log, "  downstream service at %s (%s a call, %s), given to the targets as DOWNSTREAM_URL\n", s.URL(), downstream.Delay, where)
	}
	return r.downstream.URL(), nil
}

func (r *Runner) startDownstream() (downstream.Service, string, error) {
	if r.Downstream != nil {
		return r.Downstream()
	}
	s, err := downstream.Start(downstream.Delay)
	return s, "in this process", err
}

// stopDownstream closes the downstream service, if it was started.
func (r *Runner) stopDownstream() {
	if r.downstream != nil {
		r.downstream.Close()
		r.downstream = nil
	}
}

// maxStartFailures is how often a target may fail to start before the run skips its other
// cells: each failure costs its startup timeout.
const maxStartFailures = 2

// Run measures every cell of p and returns the rows. It stops early only when ctx is cancelled
// or a row cannot be recorded; a cell that fails is recorded as invalid and the run goes on.
func (r *Runner) Run(ctx context.Context, p *plan.Plan) ([]results.Row, error) {
	images, err := r.build(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.stopDownstream()
	defer r.dropCerts()
	done, err := r.resumed(p, images)
	if err != nil {
		return nil, err
	}
	if len(done) > 0 {
		fmt.Fprintf(r.Log, "resuming: %d of %d cell(s) already recorded\n", len(done), len(p.Cells))
	}
	var rows []results.Row
	startFailures := map[string]int{}
	for {
		for i, c := range ordered(p.Cells, r.Seed) {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
			k := keyOf(c)
			if done[k] {
				continue
			}
			done[k] = true
			fmt.Fprintf(r.Log, "[%d/%d] %s · %s%s · %s %d\n", i+1, len(p.Cells), c.Scenario, c.Target, variantText(c.Variant), roundWord(p), c.Trial)
			r.status().Cell(i+1, len(p.Cells), c)
			row, ph, err := r.undisturbed(ctx, p, c, images, startFailures)
			if err != nil {
				return rows, err
			}
			res := ph.res
			r.detail(&row, res, ph.usage)
			// A cell of stages has a row for each stage after its own, a mix one for each request.
			for _, row := range slices.Concat([]results.Row{row}, stageRows(row, c, res), kindRows(row, c, res)) {
				if err := r.Record(row); err != nil {
					return rows, fmt.Errorf("recording %s trial %d: %w", c.Target, c.Trial, err)
				}
				rows = append(rows, row)
			}
			r.status().Done(row)
			if row.Valid {
				fmt.Fprintf(r.Log, "  %.0f rps ok, success %.2f%%, p50 %s p99 %s, generator delay p99 %s\n", row.ThroughputRPS, 100*row.SuccessRatio, units.Millis(row.LatencyP50), units.Millis(row.LatencyP99), units.Millis(row.GeneratorDelayP99))
			} else {
				fmt.Fprintf(r.Log, "  INVALID: %s\n", row.InvalidReason)
			}
			// An invalid row's disturbance is said too: it is often why the row is invalid.
			for _, w := range strings.Split(row.Warnings, "; ") {
				switch {
				case strings.HasPrefix(w, "not steady: ") && row.Valid:
					fmt.Fprintf(r.Log, "  NOT STEADY (never ranked): %s\n", strings.TrimPrefix(w, "not steady: "))
				case strings.HasPrefix(w, "disturbed: "):
					fmt.Fprintf(r.Log, "  DISTURBED, kept so, marked in its row: %s\n", strings.TrimPrefix(w, "disturbed: "))
				}
			}
		}
		if r.More == nil || !p.Paired || !r.More(append(slices.Clone(r.Resumed), rows...)) {
			break
		}
		fmt.Fprintf(r.Log, "adding round %d\n", p.AddRound())
	}
	return rows, nil
}

// undisturbed measures c, and again while other work took the CPUs of its generator and its
// target (maxDisturbedAttempts in all): a neighbour's burst or the hypervisor's steal is not the
// target's figure. A cell warmed up until steady is measured again in its container, after a new
// warm-up until steady (cell): that trial's container, warm, is what it measures, and a JVM's
// first warm-up can take minutes. Any other is measured again in a new container: its fixed
// warm-up, or its cold start, is part of what it measures. The row kept names the attempts set
// aside and what took their CPU.
func (r *Runner) undisturbed(ctx context.Context, p *plan.Plan, c plan.Cell, images built, startFailures map[string]int) (results.Row, phase, error) {
	a := &attempts{log: r.Log, most: r.mostAttempts()}
	for {
		row, ph, err := r.cell(ctx, p, c, images, startFailures, a)
		if err != nil || a.done || !a.again(row, ph, "in a new container") {
			a.keep(&row)
			if err == nil && row.Loaded() {
				r.disturbance(&row, ph.disturbed != "")
			}
			return row, ph, err
		}
	}
}

// chronicAfter is how many cells in a row, every attempt of each disturbed, make a disturbance
// the host's own (a hypervisor that steals whenever the run uses its CPUs, a build beside the
// run) rather than a passing neighbour's: measuring again then only repeats it, at twice or three
// times the run's length. From there on a disturbed cell is kept as first measured, marked, until
// a cell is measured undisturbed.
const chronicAfter = 2

// disturbance counts the cells in a row whose kept measurement, row, was disturbed (every attempt
// of it was), says when that makes the disturbance chronic and when it ends, and names in row a
// measurement kept first because of it.
func (r *Runner) disturbance(row *results.Row, disturbed bool) {
	if r.KeepDisturbed {
		return
	}
	if !disturbed {
		if r.disturbedInARow >= chronicAfter {
			fmt.Fprintln(r.Log, "  measured undisturbed: a disturbed cell is measured again from here on")
		}
		r.disturbedInARow = 0
		return
	}
	if r.disturbedInARow >= chronicAfter {
		// Not the word the row's own disturbance is read by.
		warn(row, fmt.Sprintf("measured once: the host was never quiet through the %d cells before it, in any attempt", r.disturbedInARow))
	}
	r.disturbedInARow++
	if r.disturbedInARow == chronicAfter {
		fmt.Fprintf(r.Log, "  DISTURBED in every attempt of %d cells in a row: the disturbance is this host's, not a passing neighbour's; from here on a disturbed cell is kept as first measured, marked, until a cell is measured undisturbed\n", chronicAfter)
	}
}

// mostAttempts is how often a disturbed cell, or a step failed while disturbed, is measured.
func (r *Runner) mostAttempts() int {
	if r.KeepDisturbed || r.disturbedInARow >= chronicAfter {
		return 1
	}
	return maxDisturbedAttempts
}

// attempts are a cell's measurements while disturbed, set aside.
type attempts struct {
	log      io.Writer
	most     int // Runner.mostAttempts
	n        int
	setAside []string
	done     bool // the last measurement is the one kept
}

// again says whether the cell, just measured as row, is to be measured again (where, as the log
// says), and sets the attempt aside when it is.
func (a *attempts) again(row results.Row, ph phase, where string) bool {
	a.n++
	if ph.disturbed == "" || a.n >= a.most {
		a.done = true
		return false
	}
	// The words of a row's own disturbance ("disturbed: …") are left out: the row kept is read
	// as disturbed only when it was.
	why := strings.ReplaceAll(ph.disturbed, "disturbed: ", "")
	a.setAside = append(a.setAside, fmt.Sprintf("attempt %d set aside (%.0f rps; %s)", a.n, row.ThroughputRPS, strings.ReplaceAll(why, "; ", ", ")))
	fmt.Fprintf(a.log, "  DISTURBED, measured again %s (attempt %d of %d): %s\n", where, a.n+1, a.most, why)
	return true
}

// keep names, in the row kept, the attempts set aside.
func (a *attempts) keep(row *results.Row) {
	if len(a.setAside) > 0 {
		warn(row, "measured again: "+strings.Join(a.setAside, ", "))
	}
}

// warmedText says how long a warm-up until steady of at most most lasted, and whether it settled.
func warmedText(warmed, most time.Duration) string {
	if warmed >= most {
		return fmt.Sprintf("warm-up ran to its most (%s) and never settled", most)
	}
	return fmt.Sprintf("warmed up in %s", warmed.Round(time.Second))
}

// cellKey identifies a cell, as its row does.
type cellKey struct {
	scenario, target, variant string
	trial                     int
}

func keyOf(c plan.Cell) cellKey { return cellKey{c.Scenario, c.Target, c.Variant, c.Trial} }

func rowKey(r results.Row) cellKey { return cellKey{r.Scenario, r.Target, r.Variant, r.Trial} }

// variantText names a paired cell's side in progress lines.
func variantText(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

// roundWord is what a cell's number counts: a paired run's rounds, or trials.
func roundWord(p *plan.Plan) string {
	if p.Paired {
		return "round"
	}
	return "trial"
}

// ResumeError says why recorded rows cannot be resumed by this plan.
type ResumeError struct{ Msg string }

func (e *ResumeError) Error() string { return e.Msg }

// resumed checks r.Resumed against p: every row must be a cell of p, recorded once, with the
// run's seed, and measured with the settings p would measure it with now. It returns the cells
// recorded.
func (r *Runner) resumed(p *plan.Plan, images built) (map[cellKey]bool, error) {
	// Rounds an adaptive paired run added are planned again.
	for p.Paired && r.More != nil && slices.ContainsFunc(r.Resumed, func(row results.Row) bool {
		return row.Variant != results.VariantAA1 && row.Variant != results.VariantAA2 && row.Trial > p.Rounds()
	}) {
		p.AddRound()
	}
	cells := map[cellKey]plan.Cell{}
	for _, c := range p.Cells {
		cells[keyOf(c)] = c
	}
	done := map[cellKey]bool{}
	for _, row := range r.Resumed {
		if row.Part() {
			continue // recorded with its cell's row
		}
		k := rowKey(row)
		c, ok := cells[k]
		switch {
		case !ok:
			return nil, &ResumeError{fmt.Sprintf("the results hold %s · %s%s · trial %d, which this run does not plan: the scenario, targets, trials or baseline differ", row.Scenario, row.Target, variantText(row.Variant), row.Trial)}
		case done[k]:
			return nil, &ResumeError{fmt.Sprintf("the results hold %s · %s%s · trial %d twice", row.Scenario, row.Target, variantText(row.Variant), row.Trial)}
		case row.Seed != r.Seed:
			return nil, &ResumeError{fmt.Sprintf("the results were ordered by seed %d, this run by %d", row.Seed, r.Seed)}
		}
		done[k] = true
		now := r.newRow(p, c, images)
		if !row.Loaded() || images.failure(c) != nil {
			// an image that did not build has no id to compare
			now.ImageID, now.DBImageID = row.ImageID, row.DBImageID
		}
		for i, f := range row.FingerprintFields() {
			if g := now.FingerprintFields()[i]; g.Value != f.Value {
				return nil, &ResumeError{fmt.Sprintf("%s · %s · trial %d was measured with %s %s; this run would use %s", row.Scenario, row.Target, row.Trial, f.Name, f.Value, g.Value)}
			}
		}
	}
	return done, nil
}

// built is the outcome of a plan's builds: an image id, or why the build failed, by tag.
type built struct {
	ids    map[string]string
	failed map[string]string
}

// failure is why c cannot run: its target's image, or its database server's, did not build;
// empty when both built.
func (b built) failure(c plan.Cell) *notLoaded {
	if detail := b.failed[c.Build.Tag()]; detail != "" {
		return &notLoaded{kind: fault.BuildFailed, detail: detail}
	}
	if c.DB.Server() {
		if detail := b.failed[c.DB.Build.Tag()]; detail != "" {
			return &notLoaded{kind: fault.BuildFailed, detail: "the database server: " + detail}
		}
	}
	return nil
}

// buildsAtOnce is how many images build side by side. A build spends much of its time on one
// core (javac, the sqlite3 addon's compiler) or waiting on a registry (Maven, npm), so two builds
// overlap well even on two cores.
const buildsAtOnce = 2

// build builds p's images, buildsAtOnce at a time. The first image of each build context is built
// before the others of that context, which share its first layers (the JVM's and Node's
// toolchains): the classic builder reuses a layer only once a build has finished it. A build that
// fails is reported and its targets' cells become build-failed rows; the other targets are
// measured. The error is only cancellation.
func (r *Runner) build(ctx context.Context, p *plan.Plan) (built, error) {
	b := built{ids: map[string]string{}, failed: map[string]string{}}
	var firsts []int
	rest := map[int][]int{} // by a context's first image, the context's others
	first := map[string]int{}
	for i, spec := range p.Builds {
		if f, ok := first[spec.Context]; ok {
			rest[f] = append(rest[f], i)
			continue
		}
		first[spec.Context] = i
		firsts = append(firsts, i)
	}
	jobs := make(chan int, len(p.Builds))
	var pending sync.WaitGroup // images queued and not yet done
	pending.Add(len(firsts))
	for _, i := range firsts {
		jobs <- i
	}
	go func() {
		pending.Wait()
		close(jobs)
	}()
	log := &lineLocked{w: r.Log}
	var mu sync.Mutex // b
	var workers sync.WaitGroup
	for range min(buildsAtOnce, len(p.Builds)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := range jobs {
				if ctx.Err() == nil {
					spec := p.Builds[i]
					name := fmt.Sprintf("build %d/%d", i+1, len(p.Builds))
					fmt.Fprintf(log, "%s: %s from %s\n", name, spec.Tag(), spec.Context)
					r.status().Phase(name + " " + spec.Tag())
					begin := time.Now()
					id, err := r.Lifecycle.Build(ctx, spec, &stepLines{w: log, prefix: name + ": "})
					mu.Lock()
					switch {
					case ctx.Err() != nil:
					case err != nil:
						fmt.Fprintf(log, "%s: FAILED: %v\n", name, err)
						b.failed[spec.Tag()] = oneLine(err.Error(), 5)
					default:
						b.ids[spec.Tag()] = id
						fmt.Fprintf(log, "%s: done in %s\n", name, time.Since(begin).Round(100*time.Millisecond))
					}
					mu.Unlock()
					pending.Add(len(rest[i]))
					for _, j := range rest[i] {
						jobs <- j
					}
				}
				pending.Done()
			}
		}()
	}
	workers.Wait()
	return b, ctx.Err()
}

// lineLocked passes each Write whole to w, so that builds side by side do not cut into each
// other's lines.
type lineLocked struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLocked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Skip records each cell of p that r.Resumed does not hold as skipped, for why (a run this host
// is too small for), without building or starting anything. The rows are built as every
// other row is, so they carry the run's settings.
func (r *Runner) Skip(p *plan.Plan, why string) ([]results.Row, error) {
	done := map[cellKey]bool{}
	for _, row := range r.Resumed {
		done[rowKey(row)] = true
	}
	var rows []results.Row
	for _, c := range p.Cells {
		if done[keyOf(c)] {
			continue
		}
		row := r.newRow(p, c, built{})
		notLoaded{kind: fault.Skipped, detail: why}.record(&row)
		if err := r.Record(row); err != nil {
			return rows, fmt.Errorf("recording %s trial %d: %w", c.Target, c.Trial, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// newRow is c's row before any measurement: its settings and where it runs.
func (r *Runner) newRow(p *plan.Plan, c plan.Cell, images built) results.Row {
	row := results.Row{
		Scenario: c.Scenario, Target: c.Target, Trial: c.Trial, Mode: string(c.Load.Model.Mode()),
		RequestedRPS: c.Load.RequestedRate(), Arrival: string(c.Load.Model.ArrivalProcess()), Stages: load.FormatStages(c.Load.Model.Stages), Think: c.Load.Model.Think.String(), Connections: c.Load.InFlightLimit(),
		Streams:  load.FormatKinds(c.Load.Kinds),
		Duration: c.Load.Duration, Warmup: c.Load.Warmup, WarmupAuto: c.Load.WarmupAuto, WarmupTaken: c.Load.Warmup, Timeout: c.Load.Timeout,
		Compat: string(c.Load.Compat),
		CPUSet: c.Spec.CPUSet, Memory: p.Memory, ImageID: images.ids[c.Build.Tag()],
		Version: r.Meta.Version, GitCommit: r.Meta.Commit, HostCPU: r.Meta.HostCPU,
		Kernel: r.Meta.Kernel, DockerVersion: r.Meta.DockerVersion, StartedAt: time.Now(),
		Seed: r.Seed, PayloadSHA: payloadSHA(c), GeneratorCPUSet: cpuset.Format(p.GeneratorCPUs),
		Variant: c.Variant, Generators: max(1, r.Generators),
	}
	req := c.Load.Request
	row.Protocol, row.H2Streams, row.NewConnection = string(req.Protocol.Or()), req.Streams, req.NewConnection
	if req.Protocol.TLS() {
		row.TLSResumption = strconv.FormatBool(req.Resume)
	}
	if c.DB.Kind != "" {
		row.DB, row.DBPoolSize = c.DB.Kind, c.DB.PoolSize
	}
	if c.DB.Server() {
		row.DBCPUSet, row.DBImageID = c.DB.Spec.CPUSet, images.ids[c.DB.Build.Tag()]
	}
	return row
}

// cell measures one cell. Errors are returned only for cancellation; failures become invalid
// rows. startFailures counts, by target, the starts that failed in this run.
func (r *Runner) cell(ctx context.Context, p *plan.Plan, c plan.Cell, images built, startFailures map[string]int, a *attempts) (results.Row, phase, error) {
	row := r.newRow(p, c, images)
	if nl := images.failure(c); nl != nil {
		nl.record(&row)
		return row, phase{}, nil
	}
	if n := startFailures[c.Target]; n >= maxStartFailures {
		notLoaded{kind: fault.Skipped, detail: fmt.Sprintf("%s failed to start %d times in this run", c.Target, n)}.record(&row)
		return row, phase{}, nil
	}
	if nl := r.serve(ctx, &c, images); nl != nil {
		nl.record(&row)
		return row, phase{}, nil
	}
	in, nl, err := r.start(ctx, p, c, images, true)
	if err != nil {
		return row, phase{}, err
	}
	if nl != nil {
		if nl.kind == fault.StartFailed {
			startFailures[c.Target]++
		}
		nl.record(&row)
		r.keepLog(&row, nl.log)
		return row, phase{}, nil
	}
	defer in.remove(ctx)
	fmt.Fprintf(r.Log, "  warm-up %s, then %s measured\n", load.Warmup{Length: c.Load.Warmup, Auto: c.Load.WarmupAuto}, c.Load.Duration)

	cfg := c.Load
	every := r.ProgressEvery
	if every == 0 {
		every = 5 * time.Second
	}
	var last time.Duration
	cfg.Progress = func(pr load.Progress) {
		r.status().Second(pr)
		if pr.Phase == timeline.Measure && pr.Elapsed-last >= every {
			last = pr.Elapsed
			fmt.Fprintf(r.Log, "  %s/%s: %d done, %d failed\n", pr.Elapsed.Truncate(time.Second), pr.Duration, pr.Completed, pr.Failures)
		}
	}
	for {
		ph, err := in.measure(ctx, &row, cfg)
		if err != nil {
			return row, phase{}, err
		}
		if cfg.WarmupAuto && ph.res.Warmed > 0 {
			fmt.Fprintf(r.Log, "  %s\n", warmedText(ph.res.Warmed, cfg.Warmup))
		}
		for kind, n := range ph.res.ErrorKinds {
			fmt.Fprintf(r.Log, "  %d × %s\n", n, kind)
		}
		// A container the target no longer runs in is measured again in a new one (undisturbed).
		if !cfg.WarmupAuto || ph.cause != "" || !a.again(row, ph, "in its container, after a new warm-up until steady") {
			return row, ph, nil
		}
		row = r.newRow(p, c, images)
	}
}

// cutStages cuts res, a measured phase of cfg's stages, into its stages' figures (res.Stages), once for
// the stages' rows and their files. An error leaves them out: the cell's own row says what was
// measured.
func cutStages(res *load.Result, cfg load.Config) {
	if len(cfg.Model.Stages) > 0 && res.Timeline != nil {
		res.Stages, _ = load.StageResults(*res, cfg)
	}
}

// stageRows are the rows of the stages of c, whose row is row and measured phase res: each the
// cell's row with the stage's figures (res.Stages), its scenario <scenario>.stage-<n>. A stage
// is valid when it is and its cell is. None when c has no stages or was not loaded.
func stageRows(row results.Row, c plan.Cell, res load.Result) []results.Row {
	stages := c.Load.Model.Stages
	if len(stages) == 0 || !row.Loaded() || len(res.Stages) != len(stages) {
		return nil
	}
	rows := make([]results.Row, len(stages))
	for k, part := range res.Stages {
		sr := row
		sr.Scenario, sr.Stage, sr.Stages = stageScenario(row.Scenario, k), k+1, stages[k].String()
		sr.RequestedRPS, sr.Duration = part.RequestedRate, part.Duration
		fill(&sr, part) // its connections: its own in-flight bound, as far as the stages had climbed
		blame(&sr)
		if !row.Valid {
			invalidate(&sr, row.Fault, "the cell: "+row.InvalidReason)
		}
		rows[k] = sr
	}
	return rows
}

// stageScenario is the scenario of stage k (from 0) of a cell of scenario.
func stageScenario(scenario string, k int) string { return fmt.Sprintf("%s.stage-%d", scenario, k+1) }

// storedRows counts the rows a target stores over a measured phase, through its /stats and, on a
// database server, in the server itself; nil when the scenario stores none.
type storedRows struct {
	url    string
	hc     *http.Client // nil: plaintext HTTP/1.1
	before int64
	err    error

	db               container.Database // nil: the embedded store
	dbBefore, dbGrew int64
}

// countRows counts the rows of a target at baseURL, asked over req's protocol; nil unless stores.
func countRows(stores bool, baseURL string, req load.Request, db container.Database) *storedRows {
	if !stores {
		return nil
	}
	s := &storedRows{url: baseURL, db: db}
	if req.Protocol.Or() != protocol.HTTP1 {
		s.hc, s.err = verify.Client(req, 10*time.Second)
	}
	return s
}

// start reads /stats (and the server's count) as the measured phase begins; check returns its
// error too.
func (s *storedRows) start(ctx context.Context) error {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	s.before, s.err = verify.StoredRows(ctx, s.hc, s.url)
	if s.err == nil && s.db != nil {
		s.dbBefore, s.err = s.db.CountRows(ctx)
	}
	return s.err
}

// check reads /stats after the measured phase and holds the growth against its writes: at least
// successes, at most successes + failures. On a database server, the rows it counts itself must
// have grown so too.
func (s *storedRows) check(ctx context.Context, successes, failures int64) error {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	after, err := verify.StoredRows(ctx, s.hc, s.url)
	if err != nil {
		return err
	}
	if err := verify.RowsGrew(s.before, after, successes, failures); err != nil {
		return err
	}
	if s.db == nil {
		return nil
	}
	dbAfter, err := s.db.CountRows(ctx)
	if err != nil {
		return err
	}
	s.dbGrew = dbAfter - s.dbBefore
	return verify.CountGrew("the rows the database server counts", s.dbBefore, dbAfter, successes, failures)
}

// inDatabase is how many rows the database server counted more after the phase than before; 0
// without a server.
func (s *storedRows) inDatabase() int64 {
	if s == nil {
		return 0
	}
	return s.dbGrew
}

func fill(row *results.Row, res load.Result) {
	row.Mode = string(res.Mode)
	row.Connections = res.InFlightLimit
	row.PeakInFlight = res.PeakInFlight
	row.AchievedRPS = res.AchievedRate()
	row.ThroughputRPS = res.Throughput()
	row.Requests, row.Successes, row.Errors, row.Timeouts = res.Requests, res.Successes, res.Errors, res.Timeouts
	row.SuccessRatio = res.SuccessRatio()
	row.BytesReceived = res.BytesReceived
	row.StatusCodes = load.FormatCodes(res.Codes)
	l := res.Latency
	row.LatencyMean, row.LatencyP50, row.LatencyP90, row.LatencyP99, row.LatencyP999, row.LatencyMax = l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max
	row.SendLagP99, row.SendLagMax = res.SendLag.P99, res.SendLag.Max
	row.GeneratorDelayP99 = res.OwnDelay.P99
	cs := res.Connections
	row.TLSVersion, row.TLSCipher = cs.TLSVersion, cs.TLSCipher
	row.ConnectionsOpened, row.HandshakesResumed = cs.Opened, cs.Resumed
	row.ConnectMean, row.ConnectP99 = cs.Connect.Mean, cs.Connect.P99
	row.FirstByteP50, row.FirstByteP99 = res.FirstByte.P50, res.FirstByte.P99
	row.GeneratorClockOffset, row.GeneratorClockMeasured = res.ClockOffset, res.ClockMeasured
	row.SetFault(res.FaultKind(), res.InvalidReason)
	row.WarmupTaken = res.Warmed.Round(time.Millisecond) // as the column keeps it
	if w := res.Wrk; w != nil {
		row.WrkRPS, row.WrkTransferPerSecond = w.RequestsPerSecond(res.Duration), w.TransferPerSecond(res.Duration)
		row.WrkTimeouts, row.WrkNon2xx3xx, row.WrkLatencyMean = w.Timeouts, w.Status, w.MeanLatency()
	}
}

// invalidate marks row invalid for k, saying why after any reason it already has; a row invalid
// already keeps its kind: the first fault explains the others.
func invalidate(row *results.Row, k fault.Kind, reason string) {
	if !row.Valid && row.InvalidReason != "" {
		k, reason = row.Fault, row.InvalidReason+"; "+reason
	}
	row.SetFault(k, reason)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// carriedLog is the whole text of an error that carries a target's last log lines after its first
// line (a container's start: "…\nlast lines of its log:\n…"); empty for a one-line error, which
// carries none.
func carriedLog(err error) string {
	if !strings.Contains(strings.TrimSpace(err.Error()), "\n") {
		return ""
	}
	return err.Error()
}

// oneLine folds a multi-line message into one line, its first line and its last n, for a CSV
// field that people read.
func oneLine(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n+1 {
		lines = append(lines[:1], lines[len(lines)-n:]...)
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}

// stepLines passes on the "Step n/m" lines of a classic build that do work, so a long build shows
// progress and a cached one stays quiet.
type stepLines struct {
	w       io.Writer
	prefix  string // which build, when several run side by side
	part    string
	pending string
}

func (s *stepLines) Write(p []byte) (int, error) {
	text := s.part + string(p)
	lines := strings.Split(text, "\n")
	s.part = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "Step "):
			s.pending = l
		case s.pending != "" && strings.Contains(l, "Using cache"):
			s.pending = ""
		case s.pending != "" && strings.HasPrefix(l, " ---> "):
			fmt.Fprintf(s.w, "  %s%s\n", s.prefix, s.pending)
			s.pending = ""
		}
	}
	return len(p), nil
}
