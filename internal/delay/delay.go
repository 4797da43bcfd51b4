// Package delay waits a given time precisely, as a server whose delay is a measurement's truth
// must (the reference servers, the downstream service).
package delay

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Wait waits d, or until ctx is done (its error). Not on a Go timer: the runtime sleeps in
// epoll_wait, whose timeout counts whole milliseconds, so a timer falling due between two
// wake-ups fires up to 1 ms late (golang/go#53824), more often the rarer the server's other
// events: on this project's host the calibration's 2 ms reference at 500 requests a second
// answered a quarter of them after 3.0–3.1 ms, which the calibration charged to the generator.
// A timerfd is a file the runtime's poller waits on: the kernel's timer ends the wait, to within
// its wake-up.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 { // a timerfd given zero is disarmed, and would never be read
		return ctx.Err()
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("a timer for the delay: %w", err)
	}
	timer := os.NewFile(uintptr(fd), "timerfd") // non-blocking: read through the poller
	defer timer.Close()
	if err := unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}, nil); err != nil {
		return fmt.Errorf("arming the delay's timer: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { timer.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var expirations [8]byte
	if _, err := timer.Read(expirations[:]); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("waiting for the delay's timer: %w", err)
	}
	return nil
}
