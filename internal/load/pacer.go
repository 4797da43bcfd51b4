package load

import (
	"os"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
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

// Pace implements vegeta.Pacer: how long vegeta sleeps before sending request hits.
func (p *pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return max(p.due(hits)-elapsed, 0), false
}

// Rate implements vegeta.Pacer.
func (p *pacer) Rate(time.Duration) float64 { return float64(p.rate) }

// heartbeatPeriod bounds how late an idle generator wakes for a request that is due.
const heartbeatPeriod = 250 * time.Microsecond

// startHeartbeat wakes the Go scheduler every period until stopped. With nothing to run, the
// scheduler waits for the network with a timeout in whole milliseconds, so a sleep of 200 µs
// (vegeta sleeps until each request is due) ends up to a millisecond late: against a fast target
// at a few thousand rps, most of the send lag. A periodic timerfd in that same wait ends it within
// a period. It costs at most one wake-up per period: waking for each request instead would cost
// one per request, and a wake-up costs tens of µs of CPU on a VM (docs/generator.md). Where no
// timerfd can be had, the schedule is kept as before, only less precisely.
func startHeartbeat(period time.Duration) (stop func()) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return func() {}
	}
	every := unix.NsecToTimespec(int64(period))
	if err := unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Value: every, Interval: every}, nil); err != nil {
		unix.Close(fd)
		return func() {}
	}
	// Non-blocking: os.File registers it with the runtime's network poller, so a read parks the
	// goroutine and the poller's wait is what the timer ends.
	timer := os.NewFile(uintptr(fd), "heartbeat-timerfd")
	go func() {
		var expirations [8]byte
		for {
			if _, err := timer.Read(expirations[:]); err != nil {
				return // closed
			}
		}
	}()
	return func() { timer.Close() }
}
