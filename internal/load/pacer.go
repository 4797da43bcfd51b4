package load

import (
	"os"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// pacer is the open loop's schedule: request i (from 0) is due (i+1)/rate seconds after the start,
// computed from the start every time, so that it never drifts, and exactly, so that the engine
// charges each request from the moment it was really due.
//
// It also sleeps more precisely than vegeta's time.Sleep: when the Go scheduler has nothing to
// run, it waits for the network with a timeout in whole milliseconds, so a sleep of 200 µs ends up
// to a millisecond late, and at a few thousand requests per second that lateness is most of the
// send lag. A wait longer than preciseAbove is done on a timerfd instead, which the scheduler's
// network wait wakes for on time. Shorter waits happen only at rates where answers arrive often
// enough to wake the scheduler anyway, and a timerfd would cost three system calls each.
type pacer struct {
	rate    uint64
	timer   *os.File // a timerfd; nil where one cannot be had, and time.Sleep serves
	timerFD int      // its descriptor: timer.Fd() would switch it to blocking reads
}

const preciseAbove = 100 * time.Microsecond

var _ vegeta.Pacer = (*pacer)(nil)

func newPacer(rate int) *pacer {
	p := &pacer{rate: uint64(rate)}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err == nil {
		// Non-blocking: os.File registers it with the runtime's network poller, so a read parks
		// the goroutine instead of a thread.
		p.timer, p.timerFD = os.NewFile(uintptr(fd), "pacer-timerfd"), fd
	}
	return p
}

// due is when request i is due, from the start of the attack: i+1 intervals of 1/rate s, without
// the rounding of a whole-nanosecond interval accumulating over millions of requests.
func (p *pacer) due(i uint64) time.Duration {
	n := i + 1
	return time.Duration(n/p.rate)*time.Second + time.Duration(n%p.rate*uint64(time.Second)/p.rate)
}

// Pace implements vegeta.Pacer: it returns once request hits is due, or asks vegeta to sleep.
func (p *pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	wait := p.due(hits) - elapsed
	if wait <= 0 {
		return 0, false // behind: send now
	}
	if wait > preciseAbove && p.timer != nil && p.sleep(wait) {
		return 0, false
	}
	return wait, false
}

// Rate implements vegeta.Pacer.
func (p *pacer) Rate(time.Duration) float64 { return float64(p.rate) }

// sleep waits d on the timerfd; false if it could not, and the caller sleeps instead.
func (p *pacer) sleep(d time.Duration) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(p.timerFD, 0, &spec, nil); err != nil {
		return false
	}
	var expirations [8]byte
	_, err := p.timer.Read(expirations[:])
	return err == nil
}

func (p *pacer) close() {
	if p.timer != nil {
		p.timer.Close()
	}
}
