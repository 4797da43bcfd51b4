package load

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// pacer is the open loop's schedule: request i (from 0) is due (i+1)/rate seconds after the start,
// computed from the start every time, so that it never drifts, and exactly, so that the engine
// charges each request from the moment it was really due (a whole-nanosecond interval, as
// vegeta's ConstantPacer uses, is off by up to 1 ns per request).
type pacer struct {
	rate uint64
}

var _ vegeta.Pacer = (*pacer)(nil)

// due is when request i is due, from the start of the attack.
func (p *pacer) due(i uint64) time.Duration {
	n := i + 1
	return time.Duration(n/p.rate)*time.Second + time.Duration(n%p.rate*uint64(time.Second)/p.rate)
}

// Pace implements vegeta.Pacer: how long until request hits is due.
func (p *pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return max(p.due(hits)-elapsed, 0), false
}

// Rate implements vegeta.Pacer.
func (p *pacer) Rate(time.Duration) float64 { return float64(p.rate) }
