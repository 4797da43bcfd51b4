package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/iotbench/iotbench/internal/verify"
)

// MaxSearch is how `run --find-max` searches each target.
type MaxSearch struct {
	SLO    maxrate.SLO
	Search maxrate.Config
	// Step is how long each rate is held; the SLO must hold over the whole step.
	Step time.Duration
	// StepWarmup is held at each step's rate, unmeasured, before the step: a runtime meeting a
	// higher rate for the first time grows its thread pools and heap and compiles new paths, a
	// transient that is not its sustained behaviour (spring-mvc-platform's first 5 s at 2000 rps
	// after 1000 had a p99 of 158–344 ms; the next steps at 2000 met 100 ms, and searches that
	// met it went on to 3500), and the connections a higher rate needs open in it (at 12,000
	// rps, 600 opened in a step's first 50 ms were over 1% of a 4 s step's requests, enough to
	// set its p99). A step right after one that met the SLO at its rate has none when the search's
	// loads share their connections (searchRun.use): the target has been at that rate for a
	// whole step, and the two steps are one load but for the last answers' wait between them.
	StepWarmup time.Duration
	// Ramp, when set, is how often the ramp that brackets a search without a bracket doubles its
	// rate (Runner.ramp); zero: the search doubles by steps from the first rate.
	Ramp time.Duration
	// Profile samples each search's target at its maximum once the search has ended, in a
	// container of its own (profile.go): the steps that decide are never profiled.
	Profile bool
}

// FindMax searches each target of p once per trial, each search in a fresh container, for the
// highest open-loop rate meeting m.SLO: the container is verified, warmed up (warmupRate),
// then loaded step by step. A runtime's capacity differs from one start to the next (compilation,
// heap sizing, neighbours), so searches are trials like any other: interleaved across targets in
// the order shuffled by r.Seed. Every step is recorded as a row: requested_rps is its rate, trial
// its number among the target's steps (counting on across its searches); it is valid when it met
// the SLO.
//
// A target's searches go in pairs: an odd search's steps start from the bracket a ramp found
// (m.Ramp), an even search's from the boundary the odd one before it found
// (maxrate.Result.Boundary), voting on both its rates again: the same answer in fewer steps when
// the capacity did not move, and the right one, in more steps, when it did. Odd searches start
// from nothing, so no search's luck reaches past its pair; one search a target (make run) is an
// odd one.
func (r *Runner) FindMax(ctx context.Context, p *plan.Plan, m MaxSearch) ([]maxrate.Outcome, error) {
	images, err := r.build(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.stopDownstream()
	defer r.dropCerts()
	var out []maxrate.Outcome
	steps := map[string]int{}
	boundaries := map[string]maxrate.Bracket{} // the last odd search's, by search name
	cells := ordered(p.Cells, r.Seed)
	for i, c := range cells {
		fmt.Fprintf(r.Log, "[%d/%d] find-max · %s · %s%s · search %d\n", i+1, len(cells), c.Scenario, c.Target, variantText(c.Variant), c.Trial)
		name := c.Scenario + "\x00" + searchName(c)
		this := m
		if c.Trial%2 == 0 {
			this.Search.Bracket = boundaries[name]
		}
		began := time.Now()
		res, err := r.findMax(ctx, p, c, images, this, steps)
		res.Took = time.Since(began)
		if err != nil {
			return out, err
		}
		if c.Trial%2 == 1 {
			boundaries[name] = res.Boundary()
		}
		out = append(out, res)
	}
	return out, nil
}

// searchName names a search's target as the summary does: a paired run's side, a payload size.
func searchName(c plan.Cell) string {
	name := timeline.SideTarget(c.Target, c.Variant)
	if c.Size != "" {
		name += " @ " + c.Size
	}
	return name
}

// findMax runs one search; steps numbers the rows of each target.
func (r *Runner) findMax(ctx context.Context, p *plan.Plan, c plan.Cell, images built, m MaxSearch, steps map[string]int) (maxrate.Outcome, error) {
	// A paired run's sides are searched apart, and named apart as the summary names them.
	out := maxrate.Outcome{Target: searchName(c), Search: c.Trial}
	c.Scenario += results.FindMaxSuffix
	s := &searchRun{r: r, p: p, c: c, images: images, m: m, steps: steps, number: c.Trial, key: c.Scenario + "/" + c.Target}
	if nl := images.failure(s.c); nl != nil {
		return out, s.failed(&out, *nl)
	}
	if nl := r.serve(ctx, &s.c, images); nl != nil {
		return out, s.failed(&out, *nl)
	}
	in, nl, err := r.start(ctx, p, s.c, images, true)
	if err != nil {
		return out, err
	}
	if nl != nil {
		return out, s.failed(&out, *nl)
	}
	s.use(in)
	defer func() {
		if s.in != nil { // the profile's container, once the search's is gone
			s.in.remove(ctx)
		}
	}()
	warmRate, err := s.warmUp(ctx)
	if err != nil {
		return out, err
	}
	s.met = warmRate
	if err := s.approach(ctx, warmRate); err != nil {
		return out, err
	}
	s.met = max(s.met, s.m.Search.Bracket.Low)
	res, err := maxrate.Find(ctx, s.m.Search, s.m.SLO, s.probe)
	out.Result = res
	if errors.Is(err, errTargetDown) || errors.Is(err, errTargetFaked) {
		out.Failed, err = err.Error(), nil
	}
	if err == nil && s.m.Profile && out.Failed == "" && res.Max > 0 {
		err = s.profile(ctx, res.Max)
	}
	return out, err
}

// searchRun is one search of one target under way (Runner.findMax).
type searchRun struct {
	r      *Runner
	p      *plan.Plan
	c      plan.Cell // the search's cell, its scenario named as find-max rows are
	images built
	m      MaxSearch
	in     *instance
	number int // which of the target's searches, from 1
	// steps numbers the rows of each target (by key) across its searches.
	steps map[string]int
	key   string
	// overloaded says the last load may have left work queued in the target.
	overloaded bool
	// deaths counts the containers of the search that died under its load.
	deaths int
	// met is the last rate the target was seen to meet the SLO at (a step's, the bracket's, the
	// warm-up's): a load recovers below it after a failing step (settle).
	met int
	// at is the rate of the last step when it met the SLO and nothing has loaded the target
	// since: a step at that rate goes on from it without a warm-up of its own; 0 otherwise.
	at int
}

// use makes in the search's container. Its warm-up, ramp and steps run on one set of connections
// (load.Session), so that no step's target meets a storm of new connections at its start (at
// 20,000 rps, about a thousand in a step's first 50 ms): with several generators (Runner.Load)
// each step still opens its own.
func (s *searchRun) use(in *instance) {
	s.in = in
	if in != nil && s.r.Load == nil {
		in.session = load.NewSession()
	}
}

// nextStep numbers the search's next row.
func (s *searchRun) nextStep() int {
	s.steps[s.key]++
	return s.steps[s.key]
}

// newRow is a row of the search for a step of cell c.
func (s *searchRun) newRow(c plan.Cell) results.Row {
	row := s.r.newRow(s.p, c, s.images)
	row.SLO, row.Search, row.LatencyAt, row.OneLoad = s.m.SLO.String(), s.number, s.m.Search.LatencyAt.String(), true
	return row
}

// failed records, for a search whose target never ran, a row numbered as a step, so that the
// file says why, and says it in out.
func (s *searchRun) failed(out *maxrate.Outcome, nl notLoaded) error {
	out.Failed = nl.reason()
	return s.recordNotLoaded(nl)
}

// recordNotLoaded records, for a container of the search that never ran, a row numbered as a step.
func (s *searchRun) recordNotLoaded(nl notLoaded) error {
	c := s.c
	c.Trial = s.nextStep()
	row := s.newRow(c)
	nl.record(&row)
	s.r.keepLog(&row, nl.log)
	return s.r.Record(row)
}

// warmUp loads the target unmeasured before the search, when its cell asks for a warm-up, and
// returns the rate it ended at: the first rate without one.
func (s *searchRun) warmUp(ctx context.Context) (int, error) {
	r, l := s.r, s.c.Load
	if l.Warmup <= 0 {
		return s.m.Search.Start, nil
	}
	warmRate := warmupRate(s.m.Search)
	warm := stepConfig(l, warmRate, l.Warmup)
	if l.WarmupAuto { // until steady, then a second measured and dropped
		warm.Warmup, warm.WarmupAuto, warm.Duration = l.Warmup, true, time.Second
		fmt.Fprintf(r.Log, "  warm-up until steady (at most %s) at %d rps\n", l.Warmup, warmRate)
	} else {
		fmt.Fprintf(r.Log, "  warm-up %s at %d rps\n", l.Warmup, warmRate)
	}
	warm = s.in.config(warm)
	var jit *jitWatch
	if l.WarmupAuto {
		if jit = s.in.watchJIT(ctx); jit != nil {
			warm.Settled = jit.Settled
		}
	}
	res, err := s.in.unmeasured(ctx, warm)
	if jit != nil {
		jit.stop()
	}
	if err != nil {
		return warmRate, err
	}
	if l.WarmupAuto {
		fmt.Fprintf(r.Log, "  %s\n", warmedText(res.Warmed, warm.Warmup))
	}
	return warmRate, nil
}

// approach takes the target from the warm-up's rate to the search's bracket: climbing to an
// earlier search's, or up a ramp that finds one (setting s.m.Search.Bracket when it does).
func (s *searchRun) approach(ctx context.Context, from int) error {
	var err error
	if b := s.m.Search.Bracket; b != (maxrate.Bracket{}) {
		fmt.Fprintf(s.r.Log, "  from search %d's boundary: %d rps met, %d failed (each voted on again)\n", s.c.Trial-1, b.Low, b.High)
		s.overloaded, err = s.r.climb(ctx, s.in, s.c, from, b.Low, s.m)
	} else if s.m.Ramp > 0 {
		from := s.m.Search.Start
		for ramps := 1; ; ramps++ {
			var warming bool
			s.m.Search.Bracket, warming, err = s.r.ramp(ctx, s.in, s.c, s.m, from, timeline.RampKey(s.c.Scenario, s.c.Target, s.number, ramps, s.m.Search.Limit))
			s.overloaded = s.m.Search.Bracket != (maxrate.Bracket{})
			if err != nil || !warming {
				return err
			}
			b := s.m.Search.Bracket
			if ramps == mostRamps {
				fmt.Fprintf(s.r.Log, "  its JIT still compiling after %d ramps: steps search between %d and %d rps all the same\n", ramps, b.Low, b.High)
				return nil
			}
			// Again from the recovery's rate, once the load that broke the ramp has cleared.
			s.met = max(s.met, b.Low)
			if err := s.settle(ctx); err != nil {
				return err
			}
			from = max(s.met/2, 1)
		}
	}
	return err
}

// mostRamps bounds the ramps of a search whose target's JIT compiled through the seconds that broke
// them (rampJITShare). Warmed up at 500 rps until its JIT had settled, spring-mvc-virtual's JIT
// compiled again through its ramp's first failing seconds, at 2,750–3,750 rps, where steps then
// met 4,052–4,521; its second ramps, after a recovery, broke at 4,912–6,699.
const mostRamps = 2

// probe is the search's maxrate.Probe: a step, run again while it fails disturbed.
func (s *searchRun) probe(ctx context.Context, rate int) (maxrate.Step, error) {
	for attempt := 1; ; attempt++ {
		st, repeat, err := s.step(ctx, rate, attempt == s.r.mostAttempts())
		if err != nil || !repeat {
			return st, err
		}
	}
}

// step runs one step and records its row; repeat says it failed while other work disturbed its
// CPUs and may be run again (not when last), so that a neighbour's burst is not taken for the
// target's limit.
func (s *searchRun) step(ctx context.Context, rate int, last bool) (st maxrate.Step, repeat bool, err error) {
	if err := s.settle(ctx); err != nil {
		return maxrate.Step{}, false, err
	}
	cfg := stepConfig(s.c.Load, rate, s.m.Step)
	cfg.Warmup = s.m.StepWarmup
	if rate == s.at && s.in.session != nil {
		cfg.Warmup = 0 // the target has been at this rate for a whole step, on these connections
	}
	s.at = 0
	due := float64(rate) * s.m.Step.Seconds()
	cfg.EndEarly = func(closed []timeline.Second) bool {
		var slow, failed int64
		for _, sec := range closed {
			slow += slowAtLeast(sec, s.m.SLO.P99)
			failed += sec.Errors()
		}
		return s.m.SLO.Sealed(slow, failed, due)
	}
	c := s.c
	c.Trial, c.Load = s.nextStep(), cfg
	row := s.newRow(c)
	ph, err := s.in.measure(ctx, &row, cfg)
	if err != nil {
		return maxrate.Step{}, false, err
	}
	s.r.detail(&row, ph.res, ph.usage)
	if why := s.ended(ctx, &row, ph, rate); why != nil {
		if err := s.r.Record(row); err != nil {
			return maxrate.Step{}, false, err
		}
		if ph.cause == "" || ph.stopped || s.deaths >= maxDeaths {
			return maxrate.Step{}, false, why
		}
		// Dead at this rate, the target fails it; in a new container, the search goes on below.
		s.deaths++
		fmt.Fprintf(s.r.Log, "  %6d rps: %s: the rate fails; a new container, warmed up, for the rates below it\n", rate, ph.cause)
		if err := s.restart(ctx); err != nil {
			return maxrate.Step{}, false, err
		}
		return maxrate.Step{Died: ph.cause}, false, nil
	}
	st, repeat = s.judge(&row, ph, rate, last)
	return st, repeat, s.r.Record(row)
}

// slowAtLeast is how many of a second's successes took bound or longer, at the least, by its
// percentiles (maxrate.SLO.Sealed reads it only under a p99 bound).
func slowAtLeast(s timeline.Second, bound time.Duration) int64 {
	switch {
	case s.P50 >= bound:
		return s.Successes / 2
	case s.P99 >= bound:
		return s.Successes / 100
	}
	return 0
}

// mostRecovery bounds a recovery: a target that has not recovered by then is judged as it stands
// by the next step's own checks.
const mostRecovery = 15 * time.Second

// settle lets a target the last load overloaded drain what it queued before the next step, so that
// no step inherits another's backlog and none begins on an idle target: it loads the target,
// unmeasured, at half the last rate it met, until its seconds meet the SLO again
// (maxrate.Recovered). Half, so that what the failing step left in the target clears: at the rate
// just met, a target at its boundary would clear it slowly, if at all. A step that met the SLO
// left nothing queued (at most its last requests, a p99 long), so nothing follows it.
func (s *searchRun) settle(ctx context.Context) error {
	if !s.overloaded {
		return nil
	}
	rate := max(s.met/2, 1)
	cfg := stepConfig(s.c.Load, rate, mostRecovery)
	stages := []load.Stage{{Duration: mostRecovery, From: rate, To: rate}}
	cfg.EndEarly = func(closed []timeline.Second) bool {
		return maxrate.Recovered(climbSeconds(closed, stages), s.m.SLO)
	}
	res, err := s.in.unmeasured(ctx, s.in.config(cfg))
	if err != nil {
		return err
	}
	how := fmt.Sprintf("met the SLO again, %d seconds in a row, after %s", maxrate.RecoverySeconds, res.Duration.Round(time.Second))
	if res.Duration >= mostRecovery {
		how = fmt.Sprintf("still failing the SLO after %s: the next step is judged as it stands", mostRecovery)
	}
	fmt.Fprintf(s.r.Log, "  %6d rps: half the last rate met, unmeasured, after a failing step: %s\n", rate, how)
	s.overloaded = false
	return nil
}

// restart replaces the search's dead container with a new one, warmed up as the first was.
func (s *searchRun) restart(ctx context.Context) error {
	s.in.remove(ctx)
	in, nl, err := s.r.start(ctx, s.p, s.c, s.images, true)
	s.use(in)
	if err != nil {
		return err
	}
	if nl != nil {
		if err := s.recordNotLoaded(*nl); err != nil {
			return err
		}
		return fmt.Errorf("%w: its new container: %s", errTargetDown, nl.reason())
	}
	s.overloaded = false
	_, err = s.warmUp(ctx)
	return err
}

// ended says why a step ends the search, the target dead or faking its work; nil when it does not.
func (s *searchRun) ended(ctx context.Context, row *results.Row, ph phase, rate int) error {
	// The target died (out of memory, typically): every later step would fail the same way.
	if ph.cause != "" {
		return fmt.Errorf("%w at %d rps: %s", errTargetDown, rate, ph.cause)
	}
	// Fewer rows than successes is a target faking its work: the search ends. More rows is
	// work an overloaded step left queued and finished during this one, so it is not held
	// against the step.
	if errors.Is(ph.stored, verify.ErrUnstored) {
		row.SetFault(fault.Unstored, "stored rows: "+ph.stored.Error())
		return fmt.Errorf("%w at %d rps: %v", errTargetFaked, rate, ph.stored)
	}
	if ph.res.Successes == 0 && !answers(ctx, s.in.ctr.URL()+s.c.Spec.Health) {
		// A target iotbench cannot examine (no container) that stopped answering.
		fmt.Fprintf(s.r.Log, "  last lines of the target's log:\n%s\n", s.in.ctr.Logs(context.WithoutCancel(ctx), 20))
		return fmt.Errorf("%w at %d rps (out of memory? its log is above)", errTargetDown, rate)
	}
	return nil
}

// judge turns a measured step into the search's verdict, sets row's fault by it and logs it;
// repeat as for step.
func (s *searchRun) judge(row *results.Row, ph phase, rate int, last bool) (st maxrate.Step, repeat bool) {
	st, generatorLate := toStep(ph.res, rate, ph.res.Duration, s.m.SLO, row.GeneratorCPUPercent/100)
	st.Rate = rate
	s.m.SLO.Judge(&st)
	// A rate sustained only while a figure climbs or falls is not sustained.
	if st.Failed == "" && ph.unsteady != "" {
		st.Failed = ph.unsteady
	}
	repeat = ph.disturbed != "" && (st.Failed != "" || st.GeneratorLimited) && !last
	switch {
	case repeat:
		row.SetFault(fault.Repeated, "repeated: failed while disturbed (see warnings)")
	case st.GeneratorLimited:
		row.SetFault(fault.GeneratorLimited, "generator-limited: "+generatorLate)
	case st.Failed != "" && ph.res.Duration < s.m.Step:
		row.SetFault(fault.SLONotMet, fmt.Sprintf("slo not met: %s (decided after %s of %s: the rest could not have met it)", st.Failed, ph.res.Duration, s.m.Step))
	case st.Failed != "":
		row.SetFault(fault.SLONotMet, "slo not met: "+st.Failed)
	default:
		row.SetFault(fault.None, "")
	}
	s.overloaded = !row.Valid
	if row.Valid {
		s.met, s.at = rate, rate
	}
	verdict := "meets the SLO"
	if !row.Valid {
		verdict = row.InvalidReason
	}
	if repeat {
		verdict = "failed while " + ph.disturbed + ": run again"
	}
	fmt.Fprintf(s.r.Log, "  %6d rps: p50 %s p99 %s, %.3f%% errors: %s\n", rate, st.P50.Round(100*time.Microsecond), st.P99.Round(100*time.Microsecond), 100*st.ErrorRatio, verdict)
	return st, repeat
}

// maxDeaths bounds the containers a search replaces after its target died under its load: each
// death bounds the search from above, and a target that dies at every rate tried ends it.
const maxDeaths = 3

// maxDisturbedAttempts bounds how often a disturbed cell, or a step failed while disturbed, is
// measured: a machine busy with other work for that long is reported as it is, in the warnings.
const maxDisturbedAttempts = 3

var (
	errTargetDown  = errors.New("the target stopped answering its health check")
	errTargetFaked = errors.New("stored-row check failed")
)

// answers reports whether url answers 200 within a couple of seconds.
func answers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := healthBody(ctx, &http.Client{CheckRedirect: load.NoRedirects}, url)
	return err == nil
}

// healthBody asks url (a target's health endpoint) with client and returns the body of its 200
// answer.
func healthBody(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<16))
}

// warmupRate is the rate a search warms up at: its first rate, or, for an even search, half its
// bracket's met rate when that is higher. The even search climbs from there to its bracket in one
// doubling, as a ramping search's last doubling reaches its boundary, rather than from the first
// rate in as many as it takes (20 s of fastify's 55-s preamble, 500 to 9587 rps), and is warmed
// where its steps will load it. Rounded up, so that one doubling reaches the bracket.
func warmupRate(c maxrate.Config) int {
	return max(c.Start, (c.Bracket.Low+1)/2)
}

// stepConfig is base at an open-loop rate for du, with no warm-up of its own.
func stepConfig(base load.Config, rate int, du time.Duration) load.Config {
	cfg := base
	cfg.Model = load.Model{Rate: rate, ExpectedLatency: base.Model.ExpectedLatency}
	cfg.Warmup, cfg.WarmupAuto, cfg.Duration = 0, false, du
	cfg.Measuring, cfg.Progress = nil, nil
	return cfg
}

// toStep turns a measured step into what the search judges. Requests the generator could not send
// because every in-flight slot was taken count as errors: users arrived and were not served. A step
// the generator could not send on time, with slots free, is the generator's limit, not the
// target's; its lateness matters against the SLO's own bound, and so is one whose slots the
// generator filled itself, short of CPU. generatorBusy is the share of its CPUs the generator
// used. generatorLate says how it fell short.
func toStep(res load.Result, rate int, du time.Duration, slo maxrate.SLO, generatorBusy float64) (s maxrate.Step, generatorLate string) {
	s = maxrate.Step{P50: res.Latency.P50, P99: res.Latency.P99, Throughput: res.Throughput()}
	if res.Requests > 0 {
		s.ErrorRatio = float64(res.Errors) / float64(res.Requests)
	}
	due := float64(rate) * du.Seconds()
	slotsBusy := res.SlotsFull()
	if slotsBusy && due > 0 {
		if unanswered := 1 - float64(res.Successes)/due; unanswered > s.ErrorRatio {
			s.ErrorRatio, s.Unanswered = unanswered, true
		}
	}
	bound := slo.P99
	if bound == 0 {
		bound = res.Latency.P99
	}
	lagAllowed := load.LagAllowed(bound, res.ExpectedLatency)
	// A target that fails the SLO on its own account fails it whatever the generator did: a
	// request's time in the target is its latency less the generator's own delay, so p99 less the
	// largest such delay bounds the target's own p99 from below, and a generator sending late or
	// too little only lightens the load. An overloaded target makes the generator open
	// connections and fall behind (3500 rps against spring-mvc: p50 214 ms, send lag p99 6.5 ms):
	// that step is the target's, not the generator's limit.
	targetFailed := slo.P99 > 0 && res.Latency.P99-res.OwnDelay.Max >= slo.P99 ||
		slo.MaxErrors >= 0 && s.ErrorRatio >= slo.MaxErrors
	// A generator with CPU to spare whose requests waited was held up by the target (connections
	// it was slow to take): at 2625 rps against an overloaded spring-mvc-virtual, send lag p99 was
	// 22.9 ms with the generator at 48% of its CPU. Its own shortage shows at 80% and more
	// (docs/generator.md), so lateness counts as the generator's above a margin under that.
	generatorShort := generatorBusy >= load.ShortOfCPU
	switch {
	case slotsBusy && generatorShort && res.Fault == fault.GeneratorBehind:
		// The slots were full of the generator's making (load.judge: the target held few of
		// them), so the latency they add is not the target's either.
		generatorLate = res.InvalidReason
	case slotsBusy, targetFailed, !generatorShort:
	case res.AchievedRate() < load.MinAchievedRatio*float64(rate):
		generatorLate = fmt.Sprintf("sent %.0f of %d rps with in-flight slots free", res.AchievedRate(), rate)
	case res.OwnDelay.P99 > lagAllowed:
		generatorLate = fmt.Sprintf("its own p99 delay %s above %s, 10%% of the latency bound", res.OwnDelay.P99.Round(10*time.Microsecond), lagAllowed)
	}
	s.GeneratorLimited = generatorLate != ""
	return s, generatorLate
}
