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
	rate  uint64
	alarm *alarm // when set, armed for each request: see startWaking
}

var _ vegeta.Pacer = (*pacer)(nil)

// due is when request i is due, from the start of the attack.
func (p *pacer) due(i uint64) time.Duration {
	n := i + 1
	return time.Duration(n/p.rate)*time.Second + time.Duration(n%p.rate*uint64(time.Second)/p.rate)
}

// Pace implements vegeta.Pacer: how long vegeta sleeps before sending request hits.
func (p *pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	wait := max(p.due(hits)-elapsed, 0)
	if wait > 0 && p.alarm != nil {
		p.alarm.set(wait)
	}
	return wait, false
}

// Rate implements vegeta.Pacer.
func (p *pacer) Rate(time.Duration) float64 { return float64(p.rate) }

// heartbeatPeriod bounds how late an idle generator wakes for a request that is due.
const heartbeatPeriod = 250 * time.Microsecond

// startWaking makes the generator wake when requests are due, whichever way wakes it less often.
// With nothing to run, the Go scheduler waits for the network with a timeout in whole
// milliseconds, so a sleep of 200 µs (vegeta sleeps until each request is due) ends up to a
// millisecond late: against a fast target at a few thousand rps, most of the send lag. A timerfd
// in that same wait ends it on time. Each wake-up from idle costs tens of µs of CPU on a VM (and
// arming a timer is itself a trap to the hypervisor): below 4,000 rps a one-shot alarm set for each
// request wakes less often than a heartbeat every 250 µs; above, the heartbeat does
// (docs/generator.md has both measured). Where no timerfd can be had, the schedule is kept as
// before, only less precisely.
func (p *pacer) startWaking() (stop func()) {
	if time.Duration(uint64(time.Second)/p.rate) < heartbeatPeriod {
		return startHeartbeat(heartbeatPeriod)
	}
	timer, fd, err := newTimerfd("alarm-timerfd", nil)
	if err != nil {
		return func() {}
	}
	// Pace runs on vegeta's one pacing goroutine, which has ended when the attack stops.
	p.alarm = &alarm{fd}
	return func() { p.alarm = nil; timer.Close() }
}

// startHeartbeat wakes the Go scheduler every period until stopped.
func startHeartbeat(period time.Duration) (stop func()) {
	every := unix.NsecToTimespec(int64(period))
	timer, _, err := newTimerfd("heartbeat-timerfd", &unix.ItimerSpec{Value: every, Interval: every})
	if err != nil {
		return func() {}
	}
	return func() { timer.Close() }
}

// alarm wakes the Go scheduler once, when set to.
type alarm struct{ fd int }

func (a *alarm) set(after time.Duration) {
	_ = unix.TimerfdSettime(a.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(int64(after))}, nil)
}

// newTimerfd makes a timerfd, set to spec when given, and reads its expirations until it is
// closed; the descriptor is the file's, valid until then. Non-blocking: os.File registers it with
// the runtime's network poller, so a read parks the goroutine and the poller's wait is what the
// timer ends.
func newTimerfd(name string, spec *unix.ItimerSpec) (*os.File, int, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, 0, err
	}
	if spec != nil {
		if err := unix.TimerfdSettime(fd, 0, spec, nil); err != nil {
			unix.Close(fd)
			return nil, 0, err
		}
	}
	timer := os.NewFile(uintptr(fd), name)
	go func() {
		var expirations [8]byte
		for {
			if _, err := timer.Read(expirations[:]); err != nil {
				return // closed
			}
		}
	}()
	return timer, fd, nil
}
