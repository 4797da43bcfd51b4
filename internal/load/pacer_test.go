package load

import (
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestPacerScheduleDoesNotDrift(t *testing.T) {
	cases := []struct {
		rate int
		i    uint64
		want time.Duration
	}{
		{rate: 1000, i: 0, want: time.Millisecond},
		{rate: 15000, i: 14999, want: time.Second}, // 1/15000 s is not a whole number of ns
		{rate: 15000, i: 15000*3600 - 1, want: time.Hour},
		{rate: 7, i: 7*86400 - 1, want: 24 * time.Hour},
		{rate: 3, i: 0, want: 333333333},
	}
	for _, c := range cases {
		p := &pacer{rate: uint64(c.rate)}
		if got := p.due(c.i); got != c.want {
			t.Errorf("rate %d: request %d due at %v, want %v", c.rate, c.i, got, c.want)
		}
	}
}

func TestPacerPace(t *testing.T) {
	p := &pacer{rate: 10000}
	cases := []struct {
		name     string
		elapsed  time.Duration
		hits     uint64
		wantWait time.Duration
	}{
		{"first request, at the start", 0, 0, 100 * time.Microsecond},
		{"on time", 450 * time.Microsecond, 4, 50 * time.Microsecond},
		{"behind: send now", time.Millisecond, 3, 0},
		{"far behind", time.Second, 10, 0},
	}
	for _, c := range cases {
		wait, stop := p.Pace(c.elapsed, c.hits)
		if wait != c.wantWait || stop {
			t.Errorf("%s: Pace(%v, %d) = %v, %v; want %v, false", c.name, c.elapsed, c.hits, wait, stop, c.wantWait)
		}
	}
	var _ vegeta.Pacer = p
}

// TestHeartbeatMakesSleepsPrecise: an idle Go program sleeping 300 µs wakes up to a millisecond
// late (the scheduler waits for the network in whole milliseconds; about 800 µs at the median here);
// with the heartbeat, within about a period (about 200 µs).
func TestHeartbeatMakesSleepsPrecise(t *testing.T) {
	lateness := func() time.Duration {
		const d = 300 * time.Microsecond
		var late []time.Duration
		for range 200 {
			begin := time.Now()
			time.Sleep(d)
			late = append(late, time.Since(begin)-d)
		}
		slices.Sort(late)
		return late[len(late)/2]
	}
	stop := startHeartbeat(heartbeatPeriod)
	with := lateness()
	stop()
	if with > 2*heartbeatPeriod {
		t.Errorf("median lateness of a 300 µs sleep with the heartbeat: %v, want under %v (without: %v)", with, 2*heartbeatPeriod, lateness())
	}
}

// TestOpenLoopSendsOnTime: at a rate whose interval is below the scheduler's millisecond, requests
// leave close to when they are due (vegeta's own sleeps leave them about half an interval late).
func TestOpenLoopSendsOnTime(t *testing.T) {
	url := serve(t, &stub{})
	res, err := Run(t.Context(), config(url, Model{Rate: 2000, ExpectedLatency: time.Millisecond}, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res.AchievedRate() < 0.99*2000 {
		t.Skipf("this machine is too busy to send 2000 rps here (%.0f sent): nothing to say about lag", res.AchievedRate())
	}
	if res.SendLag.P50 > 300*time.Microsecond {
		t.Errorf("median send lag %v at 2000 rps, want under 300 µs (lag %+v)", res.SendLag.P50, res.SendLag)
	}
}
