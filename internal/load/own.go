package load

import (
	"time"

	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/sampling"
	"github.com/iotbench/iotbench/internal/timeline"
)

// ownDelay measures the generator's own delay in each answered request, directly rather than as
// a difference against a server measured another way: the time from when the request was due
// (open loop) or released (closed loop) until it was written to the socket, plus the time from
// when the kernel received the answer's last bytes until the generator had read them. The first
// is part of the latency, which ends at that receipt; the rest of the latency is the network's
// and the server's. The second holds the connection and the in-flight slot a while longer. The
// attacker records into it from its one goroutine. A request responsible from the boundary on
// is the measured phase's (measure), one before it the warm-up's.
type ownDelay struct {
	began    time.Time
	schedule schedule // open loop: when each request was due; nil in closed loop
	ceiling  time.Duration

	rec    *latency.Recorder
	second *timeline.PerSecond
	sends  *sampling.Counts // arrivals.go; nil: not counted

	boundary time.Time // zero until the measured phase begins
	measure  *ownDelay

	// service sums each request's time from written until its answer reached the kernel.
	service time.Duration
}

func newOwnDelay(began time.Time, schedule schedule, ceiling time.Duration) *ownDelay {
	return &ownDelay{began: began, schedule: schedule, ceiling: ceiling, rec: latency.NewRecorder(ceiling), second: timeline.NewPerSecond(began, ceiling)}
}

// prepareMeasure makes the measured phase's own delays, started by measureFrom: made ahead,
// so that the measured phase's first requests do not wait for it.
func (o *ownDelay) prepareMeasure() {
	o.measure = &ownDelay{ceiling: o.ceiling, rec: latency.NewRecorder(o.ceiling), second: timeline.NewPerSecond(time.Time{}, o.ceiling)}
}

// measureFrom starts the measured phase's own delays at boundary.
func (o *ownDelay) measureFrom(boundary time.Time) {
	o.boundary = boundary
	o.measure.began = boundary
	o.measure.second.StartAt(boundary)
}

// start is when the generator became responsible for request seq, released at now: its due
// time in open loop, else now. Asked as requests are released, in order (schedule.due's rule).
func (o *ownDelay) start(seq uint64, now time.Time) time.Time {
	if o.schedule == nil {
		return now
	}
	return o.began.Add(o.schedule.due(seq))
}

// record adds a request answered: responsible from start (its phase's), or from when its
// connection became free for it when that was later (the wait for a connection is the target's
// or the connection's, not the generator's), written at written, its answer's last bytes
// received by the kernel at arrival and read by the generator at now.
func (o *ownDelay) record(start, free time.Time, written, arrival, now time.Time) {
	// The phase by start alone: a warm-up request behind a handshake that ended after the
	// boundary is still the warm-up's (the measured phase once counted one request too many).
	if !o.boundary.IsZero() && !start.Before(o.boundary) {
		o = o.measure
	}
	if free.After(start) {
		start = free
	}
	d := max(written.Sub(start), 0) + max(now.Sub(arrival), 0)
	o.service += max(arrival.Sub(written), 0)
	o.sent(written)
	o.rec.Record(d)
	o.second.Add(now, d)
}

// perSecond is the p99 of each second's own delays, by the second the answer was read in.
func (o *ownDelay) perSecond() []time.Duration { return o.second.Finish() }

func (o *ownDelay) summary() latency.Summary { return o.rec.Summary() }

// serviceMean is the mean time from a request written until its answer reached the kernel, over
// the n requests recorded (summary's count).
func (o *ownDelay) serviceMean(n int64) time.Duration {
	if n == 0 {
		return 0
	}
	return o.service / time.Duration(n)
}
