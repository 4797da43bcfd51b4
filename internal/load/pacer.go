package load

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// schedule is an open loop's: when each request is due, from the start of its phase. due is asked
// about requests in order (i, maybe again, then i+1), as the attacker releases them, so that a
// random process draws each gap once, as it goes.
type schedule interface {
	vegeta.Pacer
	due(i uint64) time.Duration
}

// newSchedule is the schedule of m's open loop; seed picks a random process's draws.
func newSchedule(m Model, seed uint64) schedule {
	if len(m.Stages) > 0 {
		return newStagedPacer(m.Stages, m.Arrival, seed, m.Share)
	}
	if m.Arrival == arrival.Poisson {
		return newPoissonPacer(float64(m.Rate), seed)
	}
	return newPacer(m.Rate, m.Share)
}

// pacer is the uniform schedule: request i (from 0) is due (i+1)/rate seconds after the start,
// computed from the start every time, so that it never drifts, and exactly, so that the engine
// charges each request from the moment it was really due (a whole-nanosecond interval, as
// vegeta's ConstantPacer uses, is off by up to 1 ns per request). A shard's share of a schedule
// (Share) is request i·Count+Index of the whole's, at rate·Count.
type pacer struct {
	rate uint64 // the whole schedule's
	// step and lead place a share: request i is the whole's (i·step+lead)-th; 0 and 0 for the whole.
	step, lead uint64
}

var _ schedule = (*pacer)(nil)

// newPacer is the uniform schedule at rate, or a shard's share of the schedule at rate·Count.
func newPacer(rate int, share Share) *pacer {
	if share.Count < 2 {
		return &pacer{rate: uint64(rate)}
	}
	return &pacer{rate: uint64(rate * share.Count), step: uint64(share.Count), lead: uint64(share.Index + 1)}
}

// due is when request i is due, from the start of the attack.
func (p *pacer) due(i uint64) time.Duration {
	n := i + 1
	if p.step > 0 {
		n = i*p.step + p.lead
	}
	return time.Duration(n/p.rate)*time.Second + time.Duration(n%p.rate*uint64(time.Second)/p.rate)
}

// Pace implements vegeta.Pacer: how long until request hits is due.
func (p *pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return max(p.due(hits)-elapsed, 0), false
}

// Rate implements vegeta.Pacer: the share's.
func (p *pacer) Rate(time.Duration) float64 { return float64(p.rate) / float64(max(p.step, 1)) }

// poissonPacer is the Poisson schedule: each request is due an exponentially distributed gap
// (mean 1/rate) after the one before, drawn from a generator seeded by the run, so that the
// same seed sends the same arrivals. The sum is kept in float64 seconds: after a day its
// rounding is below a nanosecond.
type poissonPacer struct {
	rate float64
	rng  *rand.Rand
	next uint64  // the request whose due time at holds
	at   float64 // seconds from the start
}

var _ schedule = (*poissonPacer)(nil)

func newPoissonPacer(rate float64, seed uint64) *poissonPacer {
	p := &poissonPacer{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	p.at = p.rng.ExpFloat64() / rate
	return p
}

// due is when request i is due: the last one drawn, or the one after it.
func (p *poissonPacer) due(i uint64) time.Duration {
	if i == p.next+1 {
		p.at += p.rng.ExpFloat64() / p.rate
		p.next = i
	}
	if i != p.next {
		panic(fmt.Sprintf("load: Poisson schedule asked for request %d after %d", i, p.next))
	}
	return time.Duration(p.at * float64(time.Second))
}

// Pace implements vegeta.Pacer: how long until request hits is due.
func (p *poissonPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return max(p.due(hits)-elapsed, 0), false
}

// Rate implements vegeta.Pacer: the mean rate.
func (p *poissonPacer) Rate(time.Duration) float64 { return p.rate }

// Schedule is when each request of m's measured phase is due, from its start, asked in order
// (request i, then i+1): the arrivals the engine sends, for checks of a model against its
// process (a shard's split, the self-checks) without sending them.
func Schedule(m Model) func(i uint64) time.Duration {
	return newSchedule(m, m.Seed).due
}
