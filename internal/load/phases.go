package load

import (
	"context"
	"time"

	"github.com/iotbench/iotbench/internal/timeline"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// phases paces one continuous load: the warm-up's pacer until the boundary, then the measured
// phase's, counted from the boundary, for du. The load does not pause at the boundary: what is
// in flight stays in flight, and the measured phase's first request is the first released after
// it. Open loop: request i is due when the warm-up's schedule says, or, from the boundary on, the
// boundary plus when the measured phase's schedule says of its own request i - first.
type phases struct {
	warm, measure       vegeta.Pacer
	warmDue, measureDue schedule      // open loop; nil in closed loop
	at                  time.Duration // the boundary, from the start; negative while warming up
	first               uint64        // the requests released before the boundary
	du                  time.Duration
	promised            uint64 // 1 + the measured request the pacer last said a wait for
}

var _ vegeta.Pacer = (*phases)(nil)

// begin puts the boundary at at, after first requests.
func (p *phases) begin(at time.Duration, first uint64) { p.at, p.first = at, first }

// Pace implements vegeta.Pacer. The warm-up never ends by itself (its runner moves the
// boundary); the measured phase ends after du, with its last request due within du. As vegeta's
// attacker: a request the pacer was asked about within du is sent when it is due, even after du;
// one the generator comes to only after du, late, is not.
func (p *phases) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.at < 0 {
		wait, _ := p.warm.Pace(elapsed, hits)
		return wait, false
	}
	e, i := elapsed-p.at, hits-p.first
	if e > p.du && p.promised != i+1 {
		return 0, true
	}
	wait, end := p.measure.Pace(e, i)
	if end || p.measureDue != nil && p.measureDue.due(i) > p.du {
		return 0, true
	}
	if wait > 0 {
		p.promised = i + 1
	}
	return wait, false
}

// Rate implements vegeta.Pacer.
func (p *phases) Rate(elapsed time.Duration) float64 {
	if p.at < 0 {
		return p.warm.Rate(elapsed)
	}
	return p.measure.Rate(elapsed - p.at)
}

// due implements schedule (open loop only).
func (p *phases) due(i uint64) time.Duration {
	if p.at < 0 || i < p.first {
		return p.warmDue.due(i)
	}
	return p.at + p.measureDue.due(i-p.first)
}

// runner is one measurement: a warm-up and a measured phase on the same connections under one
// load, split at a point in time, the boundary. A request belongs to the phase it was due in
// (open loop) or released in (closed loop): the warm-up's requests still in flight at the
// boundary are answered during the measured phase, and counted in the warm-up; what the phase
// received (its throughput and bytes) is counted by when answers came, whoever sent them.
type runner struct {
	cfg      Config
	pace     *phases
	users    *thinker // closed loop with think time
	schedule schedule // open loop: pace, as a schedule; nil in closed loop
	began    time.Time

	warm, measure *tally
	own           *ownDelay
	stats         *connStats // the measured phase's connections and first bytes
	// A mix's (kinds.go): each phase's, picking the kind of each request it releases; main
	// is the measured phase's schedule before its streams were merged in. nil: one request.
	warmMix, measureMix *mix
	main                schedule
	boundary            time.Time // zero while warming up
	started             bool      // the measured phase has begun (at boundary)
	end                 time.Time // the measured phase's: boundary + Duration
	warmSeconds         []timeline.Second
	inFlight            int64 // at the boundary
	wrk                 *WrkFigures
	// The measured phase's seconds asked about, and when to ask next (cfg.EndEarly).
	measureSeconds []timeline.Second
	nextAsk        time.Time
	endedEarly     bool

	a          *attacker
	nextReport time.Duration
}

func newRunner(cfg Config) *runner {
	r := &runner{cfg: cfg, pace: &phases{at: -1, du: cfg.Duration, measure: vegeta.ConstantPacer{}, warm: vegeta.ConstantPacer{}}}
	warm := warmup(cfg)
	if cfg.Model.Mode() == Open {
		r.main = newSchedule(cfg.Model, cfg.Model.Seed)
		r.measureMix = newMix(cfg, r.main, cfg.Model.Seed)
		r.pace.measureDue = r.main
		if r.measureMix != nil && r.measureMix.streams != nil {
			r.pace.measureDue = r.measureMix
		}
		r.pace.measure = r.pace.measureDue
		if warm.Warmup > 0 {
			// Its own draws: the measured phase's arrivals do not depend on whether there was a warm-up.
			warmSeed := cfg.Model.Seed ^ warmupSeed
			r.pace.warmDue = newSchedule(warm.Model, warmSeed)
			if r.warmMix = newMix(warm, r.pace.warmDue, warmSeed); r.warmMix != nil && r.warmMix.streams != nil {
				r.pace.warmDue = r.warmMix
			}
			r.pace.warm = r.pace.warmDue
		}
		r.schedule = r.pace
	} else if cfg.Model.Think.Mean > 0 {
		r.users = newThinker(cfg.Model.Think, cfg.Model.Connections, cfg.Model.Seed, time.Time{}, neverEnds)
		r.pace.warm, r.pace.measure = r.users, r.users
	}
	if cfg.Model.Mode() == Closed {
		// One turn of the shares across both phases: the boundary does not restart it.
		r.measureMix = newMix(cfg, nil, cfg.Model.Seed)
		r.warmMix = r.measureMix
	}
	r.cfg.Warmup = warm.Warmup
	if cfg.Compat == Wrk {
		r.wrk = &WrkFigures{}
	}
	return r
}

// neverEnds is a thinker's phase while warming up: the boundary, not the thinker, ends it.
const neverEnds = time.Duration(1<<63 - 1)

// run opens a closed loop's connections, then loads from the warm-up to the measured phase's end.
func (r *runner) run(ctx context.Context, a *attacker) (Result, error) {
	cfg := r.cfg
	tgt := vegeta.Target{Method: cfg.Request.Method, URL: cfg.Request.URL, Body: cfg.Request.Body, Header: cfg.Request.Header}
	targeter := func(t *vegeta.Target) error {
		*t = tgt
		return nil
	}
	if r.measureMix != nil {
		if err := a.useKinds(kindRequests(cfg.Kinds), r.kind); err != nil {
			return Result{}, err
		}
		defer func() { a.pick = nil }()
	}
	a.reserveFDs(cfg.InFlightLimit())
	// A new connection per request opens each with its request: its handshake is what is measured.
	if cfg.Model.Mode() == Closed && !cfg.Request.NewConnection {
		if err := a.predial(ctx, targeter, cfg.Model.Connections); err != nil {
			return Result{}, err
		}
	}
	r.a = a
	defer func() { a.stats = nil }()
	// Made before the clock starts: a histogram takes time to make.
	ceiling := 2*cfg.Timeout + cfg.Duration
	r.own = newOwnDelay(time.Time{}, r.schedule, ceiling)
	if cfg.Warmup > 0 {
		r.warm = newTally(cfg, cfg.Warmup, r.schedule, time.Time{})
		r.warm.seconds = timeline.NewRecorder(time.Time{}, cfg.Warmup, ceiling)
		r.warm.seconds.InFlight = func() (int64, bool) { return r.secondInFlight(0) }
		defer r.warm.seconds.Finish(nil) // ends its goroutine when the attack fails; done already otherwise
	}
	r.prepare()
	defer r.measure.seconds.Finish(nil)
	for _, k := range r.measure.kinds {
		defer k.seconds.Finish(nil)
	}
	r.began = time.Now()
	r.own.began = r.began
	r.own.second.StartAt(r.began)
	if r.warm != nil {
		r.warm.startAt(r.began)
		r.warm.seconds.StartAt(r.began)
	}
	if r.users != nil {
		r.users.began = r.began
	}
	h := hooks{own: r.own, each: r.each, tick: r.tick}
	if len(cfg.Model.Stages) > 0 && cfg.Model.Mode() == Open {
		h.limitAt = r.limitAt
	}
	if r.wrk != nil {
		h.late = r.late
	}
	limit := cfg.InFlightLimit()
	if cfg.Model.Mode() == Closed {
		limit *= max(cfg.Request.Streams, 1) // each connection's streams in flight
	}
	err := a.attack(ctx, targeter, r.pace, r.began, limit, h)
	if err != nil {
		return Result{}, err
	}
	return r.result(), nil
}

func (r *runner) inFlightNow() int64 { return r.a.started - r.a.completed }

// secondInFlight is, as timeline k (0 the warm-up's, 1 the measured phase's) closes a second, the
// most requests in flight during it, and whether every slot was taken. Read when an answer
// closes it, the count then would miss a full bound by that answer's slot.
func (r *runner) secondInFlight(k int) (int64, bool) {
	now := r.inFlightNow()
	most, full := max(r.a.secondPeak[k], now), r.a.secondFull[k]
	r.a.secondPeak[k], r.a.secondFull[k] = now, false
	return most, full
}

// limitAt is the in-flight bound at elapsed from the attack's start: that of the stages' first
// rate while warming up (the warm-up's rate), then as far as they have gone.
func (r *runner) limitAt(elapsed time.Duration) int {
	if r.pace.at < 0 {
		return r.cfg.InFlightLimitAt(0)
	}
	return r.cfg.InFlightLimitAt(elapsed - r.pace.at)
}

// kind picks the kind of the request being released, from the mix of the phase it is due in.
func (r *runner) kind() int {
	if r.pace.at < 0 && r.warmMix != nil {
		return r.warmMix.kind()
	}
	return r.measureMix.kind()
}

// tick moves the boundary when the warm-up is over; it says when to ask again.
func (r *runner) tick(now time.Time, hits uint64) (time.Time, time.Duration) {
	if r.started {
		return now, r.askEndEarly(now)
	}
	elapsed := now.Sub(r.began)
	if r.warm != nil && elapsed < r.cfg.Warmup {
		if !r.cfg.WarmupAuto {
			return now, r.cfg.Warmup - elapsed
		}
		// Each second once its percentiles are taken; judged once a second, not once a turn
		// of the loop.
		taken := r.warm.seconds.Taken()
		if len(r.warmSeconds) >= taken || !r.judge(taken) {
			return now, min(r.cfg.Warmup-elapsed, time.Second/4)
		}
	}
	return r.begin(hits), -1
}

// judge takes the warm-up's first taken seconds, and says whether they are steady and the
// target, asked, says it has settled too.
func (r *runner) judge(taken int) bool {
	for len(r.warmSeconds) < taken {
		r.warmSeconds = append(r.warmSeconds, r.warm.seconds.Second(len(r.warmSeconds)))
	}
	return SteadyWarmup(r.warmSeconds, r.cfg.Duration) && (r.cfg.Settled == nil || r.cfg.Settled())
}

// askEndEarly asks cfg.EndEarly about the measured phase's seconds, each once its percentiles
// are taken, at most every quarter of a second; it says when to ask again, -1: never.
func (r *runner) askEndEarly(now time.Time) time.Duration {
	const every = time.Second / 4
	if r.cfg.EndEarly == nil || r.endedEarly {
		return -1
	}
	if now.Before(r.nextAsk) {
		return r.nextAsk.Sub(now)
	}
	r.nextAsk = now.Add(every)
	taken := r.measure.seconds.Taken()
	if len(r.measureSeconds) >= taken {
		return every
	}
	for len(r.measureSeconds) < taken {
		r.measureSeconds = append(r.measureSeconds, r.measure.seconds.Second(len(r.measureSeconds)))
	}
	if r.cfg.EndEarly(r.measureSeconds) {
		r.endAfter(now)
		return -1
	}
	return every
}

// endAfter ends the measured phase at the end of the second under way at now: the phase lasts
// whole seconds, as its timeline does.
func (r *runner) endAfter(now time.Time) {
	du := now.Sub(r.boundary).Truncate(time.Second) + time.Second
	if du >= r.cfg.Duration {
		return
	}
	r.endedEarly = true
	r.cfg.Duration, r.pace.du, r.end = du, du, r.boundary.Add(du)
	r.a.phaseEnd = r.end
	r.measure.shorten(du)
}

// prepare makes what the measured phase counts into, ahead of it: a histogram takes time to make.
func (r *runner) prepare() {
	cfg := r.cfg
	var measureSchedule schedule
	if r.schedule != nil {
		measureSchedule = r.pace.measureDue
	}
	r.measure = newTally(cfg, cfg.Duration, measureSchedule, time.Time{})
	r.measure.seconds = timeline.NewRecorder(time.Time{}, cfg.Duration, 2*cfg.Timeout+cfg.Duration)
	r.measure.seconds.InFlight = func() (int64, bool) { return r.secondInFlight(1) }
	for _, k := range r.measure.kinds {
		// A mix's requests each their seconds, for their rows' timelines; in flight is counted
		// for the whole alone (0 in theirs).
		k.seconds = timeline.NewRecorder(time.Time{}, cfg.Duration, 2*cfg.Timeout+cfg.Duration)
	}
	r.own.prepareMeasure()
	r.own.measure.schedule = measureSchedule
	r.own.measure.countSends(cfg.Model, cfg.Duration)
	r.stats = newConnStats(2*cfg.Timeout + cfg.Duration)
}

// begin puts the boundary here, after hits requests: the measured phase starts.
func (r *runner) begin(hits uint64) time.Time {
	cfg := r.cfg
	if cfg.Measuring != nil {
		cfg.Measuring()
	}
	now := time.Now()
	r.boundary, r.end = now, now.Add(cfg.Duration)
	r.inFlight = r.inFlightNow()
	r.a.peak, r.a.phaseEnd, r.a.full, r.a.secondPeak[1], r.a.secondFull[1] = r.inFlight, r.end, false, r.inFlight, false
	at := now.Sub(r.began)
	r.pace.begin(at, hits)
	if r.users != nil {
		r.users.rebase(at, cfg.Duration)
	}
	r.measure.startAt(now)
	r.measure.seconds.StartAt(now)
	for _, k := range r.measure.kinds {
		k.seconds.StartAt(now)
	}
	r.own.measureFrom(now)
	r.stats.from = now
	r.a.stats = r.stats
	r.started = true
	r.nextReport = 0
	return now
}

// each counts a request in the phase it belongs to.
func (r *runner) each(res *vegeta.Result, start, received time.Time, kind int) {
	t, phase, du := r.warm, timeline.Warmup, r.cfg.Warmup
	if r.started && !start.Before(r.boundary) {
		t, phase, du = r.measure, timeline.Measure, r.cfg.Duration
	}
	success := t.add(res, start, received, kind)
	if r.within(res) {
		r.measure.received(res, success, kind)
		if r.wrk != nil {
			r.wrk.add(res, r.cfg.Timeout)
		}
	}
	if r.users != nil {
		r.users.answered(res.Timestamp.Add(res.Latency))
	}
	if r.cfg.Progress != nil {
		if el := time.Since(t.began); el >= r.nextReport && (phase == timeline.Measure || !r.started) {
			r.cfg.Progress(Progress{Phase: phase, Elapsed: el, Duration: du, Completed: t.res.Requests, Failures: t.res.Errors, Last: t.seconds.Last()})
			r.nextReport = el.Truncate(time.Second) + time.Second
		}
	}
}

// within says whether res is an answer read within the measured phase.
func (r *runner) within(res *vegeta.Result) bool {
	if res.Code == 0 || r.boundary.IsZero() {
		return false
	}
	done := res.Timestamp.Add(res.Latency)
	return !done.Before(r.boundary) && done.Before(r.end)
}

// late counts the answer of a request past its timeout (hooks.late) in wrk's figures when it was
// read within the measured phase.
func (r *runner) late(res *vegeta.Result) {
	if r.within(res) {
		r.wrk.add(res, r.cfg.Timeout)
	}
}

// result is the measured phase's Result, the warm-up's timeline with it.
func (r *runner) result() Result {
	cfg := r.cfg
	t := r.measure
	res := t.result()
	var dueByKind []int64
	switch {
	case t.open && r.measureMix != nil:
		dueByKind = r.measureMix.scheduled(r.main, res.Requests, cfg.Duration, len(cfg.Kinds), func(at time.Duration, k int) {
			t.seconds.Due(at)
			t.kinds[k].seconds.Due(at)
		})
		res.Scheduled = res.Requests
		for _, n := range dueByKind {
			res.Scheduled += n
		}
	case t.open:
		res.Scheduled = scheduled(r.pace.measureDue, res.Requests, cfg.Duration, t.seconds.Due)
	}
	measureOwn := r.own.measure
	res.OwnDelay = measureOwn.summary()
	res.ServiceMean = measureOwn.serviceMean(res.OwnDelay.Count)
	res.Connections, res.FirstByte = r.stats.result(&r.a.tls)
	res.Sends = measureOwn.sends.Dispersion(cfg.Duration)
	ownPerSecond := measureOwn.perSecond()
	res.Timeline = t.seconds.Finish(ownPerSecond)
	if r.warm != nil {
		res.WarmupTimeline = r.warm.seconds.Finish(r.own.perSecond())
	}
	if r.warm != nil {
		res.Warmed = r.boundary.Sub(r.began)
	}
	res.WarmupInFlight = r.inFlight
	res.PeakInFlight, res.InFlightFull = r.a.peak, r.a.full
	if r.wrk != nil {
		w := *r.wrk
		res.Wrk = &w
	}
	res.SetFault(judge(res))
	if r.measureMix != nil {
		kindResults(&res, cfg, t.kinds, dueByKind)
		for i, k := range t.kinds {
			// The generator's own delay is the whole's, as in each request's result.
			res.Kinds[i].Timeline = k.seconds.Finish(ownPerSecond)
		}
	}
	return res
}
