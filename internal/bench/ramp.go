package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/iotbench/iotbench/internal/verify"
)

// rampDoubling is how long a search's ramp takes to double its rate by default: about 12% more a second,
// finer than the bracket it is read into (maxrate.ReadRamp), and from 100 rps to the limit of
// 50,000 in under a minute when nothing breaks.
const rampDoubling = 6 * time.Second

// rampStages go from start up to limit, doubling every doubling: the same share of the rate
// each second, as the doubling search's steps go.
func rampStages(start, limit int, doubling time.Duration) []load.Stage {
	var stages []load.Stage
	for from := start; from < limit; from = min(2*from, limit) {
		stages = append(stages, load.Stage{Duration: doubling, From: from, To: min(2*from, limit)})
	}
	return stages
}

// rampConfig is base through stages, at their mean rate, ended once its last seconds break slo
// (maxrate.RampBroken) so that an overloaded target is not loaded on; du is the stages' length.
func rampConfig(base load.Config, stages []load.Stage, slo maxrate.SLO) (cfg load.Config, du time.Duration) {
	du = load.StagesDuration(stages)
	cfg = stepConfig(base, int(math.Round(load.StagesRequests(stages)/du.Seconds())), du)
	cfg.Model.Stages = stages
	cfg.EndEarly = func(seconds []timeline.Second) bool {
		tail := seconds[max(0, len(seconds)-maxrate.RampBreak):]
		return maxrate.RampBroken(rampSeconds(tail, stages), slo)
	}
	return cfg, du
}

// climb loads the target from rate from up to rate to, doubling every step, unmeasured: a
// search starting from an earlier search's boundary meets its first rates as warm as a doubling
// search does. Straight from its warm-up at 500 rps, spring-mvc-virtual failed 4000 rps with
// 41–47% errors and its next step at 3500 with 12%; doubling searches of it, reaching 4000 after
// 2000, failed their first step there with 0–3.4%. It says whether the target broke the SLO on
// the way.
func (r *Runner) climb(ctx context.Context, in *instance, c plan.Cell, from, to int, m MaxSearch) (bool, error) {
	stages := rampStages(from, to, m.Step)
	if len(stages) == 0 {
		return false, nil
	}
	cfg, du := rampConfig(c.Load, stages, m.SLO)
	fmt.Fprintf(r.Log, "  climbing from %d to %d rps in %s, unmeasured\n", from, to, du)
	res, err := load.Run(ctx, in.config(cfg))
	return err == nil && res.Duration > 0 && res.Duration < du, err
}

// rampSeconds are a ramp's seconds as the search judges them, each at the ramp's rate in its
// middle. A second that answered nothing while requests waited failed them all.
func rampSeconds(seconds []timeline.Second, stages []load.Stage) []maxrate.Step {
	out := make([]maxrate.Step, len(seconds))
	for i, s := range seconds {
		mid := time.Duration(s.Index)*time.Second + time.Second/2
		st := maxrate.Step{Rate: int(math.Round(load.StagesRate(stages, mid))), P50: s.P50, P99: s.P99, Throughput: float64(s.Successes)}
		switch answered := s.Successes + s.Errors(); {
		case answered > 0:
			st.ErrorRatio = float64(s.Errors()) / float64(answered)
		case s.InFlight > 0:
			st.ErrorRatio = 1
		}
		out[i] = st
	}
	return out
}

// rampSettle bounds the wait after a ramp for the target to answer again.
const rampSettle = 30 * time.Second

// settle waits, at most rampSettle, until the target answers health: a ramp ended past the
// target's capacity leaves work queued (answers the generator gave up on included), which the
// first step would otherwise inherit.
func settle(ctx context.Context, health string) {
	for end := time.Now().Add(rampSettle); time.Now().Before(end) && !answers(ctx, health); {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ramp loads the target of c (its search's trial number in c.Trial) along one ramp from the
// search's start towards its limit, ended as soon as its seconds break m.SLO
// (maxrate.RampBroken) so that an overloaded target is not loaded on; records it as a row of the
// search (its stages as far as it went, its invalid_reason results.RampReason and what was read);
// and returns where the steps should look: the zero Bracket when the ramp says nothing. A target
// that died or did not store its rows ends the search as a step would.
func (r *Runner) ramp(ctx context.Context, p *plan.Plan, c plan.Cell, in *instance, images built, m MaxSearch) (maxrate.Bracket, error) {
	doubling := m.RampDoubling
	if doubling == 0 {
		doubling = rampDoubling
	}
	stages := rampStages(m.Search.Start, m.Search.Limit, doubling)
	if len(stages) == 0 { // the start is the limit: nothing to ramp through
		return maxrate.Bracket{}, nil
	}
	cfg, du := rampConfig(c.Load, stages, m.SLO)
	c.Load = cfg
	row := r.newRow(p, c, images)
	row.SLO = m.SLO.String()
	ph, err := in.measure(ctx, &row, cfg)
	if err != nil {
		return maxrate.Bracket{}, err
	}
	r.detail(&row, ph.res, ph.usage)
	res := ph.res
	if res.Duration > 0 && res.Duration < du { // ended early: the row is what ran
		ran := load.StagesUntil(stages, res.Duration)
		row.Stages, row.Duration = load.FormatStages(ran), res.Duration
		row.RequestedRPS = int(math.Round(load.StagesRequests(ran) / res.Duration.Seconds()))
	}
	fail := func(why error) (maxrate.Bracket, error) {
		if err := r.Record(row); err != nil {
			return maxrate.Bracket{}, err
		}
		return maxrate.Bracket{}, why
	}
	top := stages[len(stages)-1].To
	if ph.cause != "" {
		return fail(fmt.Errorf("%w on the ramp towards %d rps: %s", errTargetDown, top, ph.cause))
	}
	if errors.Is(ph.stored, verify.ErrUnstored) {
		row.InvalidReason = "stored rows: " + ph.stored.Error()
		return fail(fmt.Errorf("%w on the ramp towards %d rps: %v", errTargetFaked, top, ph.stored))
	}
	settle(ctx, in.ctr.URL()+c.Spec.Health)
	seconds := res.Timeline[:min(len(res.Timeline), int(res.Duration/time.Second))]
	b, why := maxrate.ReadRamp(rampSeconds(seconds, stages), m.SLO, m.Search.Limit)
	read := fmt.Sprintf("steps between %d and %d rps", b.Low, b.High)
	if why != "" {
		read = fmt.Sprintf("inconclusive, %s: steps doubling from %d rps", why, m.Search.Start)
	}
	row.Valid, row.InvalidReason = false, results.RampReason+read
	fmt.Fprintf(r.Log, "  ramp from %d rps over %s, doubling every %s: %s\n", m.Search.Start, row.Duration, doubling, read)
	return b, r.Record(row)
}
