package load

import (
	"time"

	"github.com/iotbench/iotbench/internal/sampling"
)

// The arrival check's summary of the achieved send times (internal/sampling): the requests
// written in each window of about ten requests of the phase, counted as their answers are
// recorded. One counter increment a request; a few bytes a window, bounded.

// countSends starts counting the phase's sends when it runs at one open-loop rate: a closed
// loop, or stages whose rate changes, have no one arrival process to test against.
func (o *ownDelay) countSends(m Model, du time.Duration) {
	if o.schedule != nil && len(m.Stages) == 0 {
		o.sends = sampling.NewCounts(m.Rate, du)
	}
}

// sent counts a request written at written.
func (o *ownDelay) sent(written time.Time) {
	if o.sends != nil && !written.IsZero() {
		o.sends.Add(written.Sub(o.began))
	}
}
