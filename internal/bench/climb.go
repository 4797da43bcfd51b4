package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/timeline"
)

// climbStages go from start up to limit, doubling every doubling: the same share of the rate
// each second, as the doubling search's steps go.
func climbStages(start, limit int, doubling time.Duration) []load.Stage {
	var stages []load.Stage
	for from := start; from < limit; from = min(2*from, limit) {
		stages = append(stages, load.Stage{Duration: doubling, From: from, To: min(2*from, limit)})
	}
	return stages
}

// climb loads the target from rate from up to rate to, doubling every step, unmeasured: a
// search starting from an earlier search's boundary meets its first rates as warm as a doubling
// search does. Straight from its warm-up at 500 rps, spring-mvc-virtual failed 4000 rps with
// 41–47% errors and its next step at 3500 with 12%; doubling searches of it, reaching 4000 after
// 2000, failed their first step there with 0–3.4%. The climb ends once its last seconds break
// the SLO (maxrate.RampBroken), so that a target holding less than it did is not loaded on; it
// says whether that happened.
func (r *Runner) climb(ctx context.Context, in *instance, c plan.Cell, from, to int, m MaxSearch) (bool, error) {
	if from >= to {
		return false, nil
	}
	stages := climbStages(from, to, m.Step)
	fmt.Fprintf(r.Log, "  climbing from %d to %d rps in %s, unmeasured\n", from, to, load.StagesDuration(stages))
	seconds, took, err := r.climbing(ctx, in, c, stages, m.SLO, timeline.Key{})
	broke := maxrate.RampBroken(seconds, m.SLO)
	if broke {
		fmt.Fprintf(r.Log, "  the climb ended after %s (at %d rps), its last %d seconds over the SLO: the target holds less than the boundary's met rate now\n",
			took.Round(time.Second), seconds[len(seconds)-1].Rate, maxrate.RampBreak)
	}
	return broke, err
}

// ramp brackets the boundary for a search that has none: a climb like an even search's, from
// rate from towards the limit, doubling every m.Ramp, until the SLO breaks
// (maxrate.RampBracket): a few seconds of rising load instead of a doubling's steps. Zero, said
// in the log, when it did not bracket it (cut short unbroken); the search then doubles. A bracket's failing seconds
// end the ramp: it leaves the target with work queued. warming says the target's JIT compiled
// for rampJITShare or more of the seconds that broke the ramp: a JVM warming up for rates it had
// not met, whose break says little of its boundary.
func (r *Runner) ramp(ctx context.Context, in *instance, c plan.Cell, m MaxSearch, from int, key timeline.Key) (b maxrate.Bracket, warming bool, err error) {
	to := m.Search.Limit
	stages := climbStages(from, to, m.Ramp)
	fmt.Fprintf(r.Log, "  ramping from %d rps towards %d, doubling every %s, unmeasured, until %d seconds in a row miss the SLO\n", from, to, m.Ramp, maxrate.RampBreak)
	jit := in.watchJIT(ctx)
	if jit != nil {
		defer jit.stop()
	}
	began := time.Now()
	seconds, took, err := r.climbing(ctx, in, c, stages, m.SLO, key)
	if err != nil {
		return maxrate.Bracket{}, false, err
	}
	b = maxrate.RampBracket(seconds, m.SLO, took >= load.StagesDuration(stages))
	if b == (maxrate.Bracket{}) {
		fmt.Fprintf(r.Log, "  the ramp bracketed nothing in %s (up to %d rps): steps double from %d rps\n", took.Round(time.Second), to, from)
		return b, false, nil
	}
	last := seconds[len(seconds)-1]
	if m.SLO.Judge(&last); last.Failed == "" {
		fmt.Fprintf(r.Log, "  the ramp met the SLO to its end, %d rps, after %s: steps search between %d and %d rps\n", b.High, took.Round(time.Second), b.Low, b.High)
		return b, false, nil
	}
	failing := maxrate.FailingEnd(seconds, m.SLO)
	fmt.Fprintf(r.Log, "  the ramp broke at %d rps after %s (%s): ", b.High, took.Round(time.Second), brokenBy(failing))
	if jit != nil {
		first := len(seconds) - len(failing)
		share, ok := jit.busySince(ctx, began.Add(time.Duration(first)*time.Second))
		if warming = ok && share >= rampJITShare; warming {
			fmt.Fprintf(r.Log, "the target's JIT compiled for %.0f%% of those seconds, warming up for rates it had not met\n", 100*share)
			return b, true, nil
		}
	}
	fmt.Fprintf(r.Log, "steps search between %d and %d rps\n", b.Low, b.High)
	return b, false, nil
}

// rampJITShare is the share of a broken ramp's failing seconds over which a JIT that compiled
// was warming up (ramp). spring-mvc-virtual's, settled at 500 rps (under 5% of the time, the
// warm-up's rule), compiled for 44–68% of the seconds that broke its first ramp (12 searches),
// and for 10–34% of those that broke a second one (the 4 of 11 that printed it), overloaded as
// they were: the second ramp's bracket is used either way (mostRamps).
const rampJITShare = 0.25

// brokenBy says how the failing seconds at the end of a broken ramp (maxrate.FailingEnd, judged)
// failed.
func brokenBy(failing []maxrate.Step) string {
	var failed []string
	for _, s := range failing {
		failed = append(failed, fmt.Sprintf("%d rps: %s", s.Rate, s.Failed))
	}
	return strings.Join(failed, "; ")
}

// climbing loads the target through stages, unmeasured, until its last seconds break slo, and
// returns how long it took and its seconds as the search judges them: all of them, the last ones
// too, which the climb ran before they could be judged. A key names the cell its seconds are
// kept as (Runner.Unmeasured); zero: not kept.
func (r *Runner) climbing(ctx context.Context, in *instance, c plan.Cell, stages []load.Stage, slo maxrate.SLO, key timeline.Key) (seconds []maxrate.Step, took time.Duration, err error) {
	if len(stages) == 0 {
		return nil, 0, nil
	}
	du := load.StagesDuration(stages)
	cfg := stepConfig(c.Load, int(math.Round(load.StagesRequests(stages)/du.Seconds())), du)
	cfg.Model.Stages = stages
	var judged []maxrate.Step
	cfg.EndEarly = func(closed []timeline.Second) bool {
		judged = append(judged, climbSeconds(closed[len(judged):], stages)...)
		return maxrate.RampBroken(judged, slo)
	}
	res, err := in.unmeasured(ctx, in.config(cfg))
	if err != nil {
		return nil, 0, err
	}
	if r.Unmeasured != nil && key != (timeline.Key{}) {
		if err := r.Unmeasured(timeline.Cell{Key: key, Warmup: res.Timeline}); err != nil {
			fmt.Fprintf(r.Log, "  the seconds of %s not kept: %v\n", key, err)
		}
	}
	// The seconds of the climb, not those after it while its last requests were answered.
	whole := min(len(res.Timeline), int(res.Duration/time.Second))
	return climbSeconds(res.Timeline[:whole], stages), res.Duration, nil
}

// climbSeconds are a climb's seconds as the search judges them, each at the climb's rate in its
// middle. A second that answered nothing while requests waited failed them all.
func climbSeconds(seconds []timeline.Second, stages []load.Stage) []maxrate.Step {
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
