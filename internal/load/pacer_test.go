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

// The heartbeat and the pacer are about timing, which a shared machine makes noisy: they are
// measured by benchmarks that print figures (with and without the heartbeat in one run), not held
// to a bound by a test. go test -run - -bench 'SleepLateness|SendLag' ./internal/load

// BenchmarkSleepLateness: an idle Go program sleeping 300 µs wakes up to a millisecond late (the
// scheduler waits for the network in whole milliseconds; about 800 µs at the median here); with
// the heartbeat, within about a period (about 200 µs); with an alarm set for the end of each
// sleep, on time but at the cost of arming a timer each time.
func BenchmarkSleepLateness(b *testing.B) {
	for _, waking := range []string{"none", "heartbeat", "alarm"} {
		b.Run("waking="+waking, func(b *testing.B) {
			const d = 300 * time.Microsecond
			p := &pacer{rate: uint64(time.Second / d)} // slow enough for the alarm
			switch waking {
			case "heartbeat":
				defer startHeartbeat(heartbeatPeriod)()
			case "alarm":
				defer p.startWaking()()
				if p.alarm == nil {
					b.Skip("no timerfd")
				}
			}
			var late []time.Duration
			for b.Loop() {
				begin := time.Now()
				if p.alarm != nil {
					p.alarm.set(d)
				}
				time.Sleep(d)
				late = append(late, time.Since(begin)-d)
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "µs-late-p50")
			b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), "µs-late-p99")
		})
	}
}

// TestStartWakingChoosesTheFewerWakeUps: an alarm per request below 4,000 rps, a heartbeat above.
func TestStartWakingChoosesTheFewerWakeUps(t *testing.T) {
	for _, c := range []struct {
		rate      uint64
		wantAlarm bool
	}{{100, true}, {4000, true}, {4001, false}, {20000, false}} {
		p := &pacer{rate: c.rate}
		stop := p.startWaking()
		if got := p.alarm != nil; got != c.wantAlarm {
			t.Errorf("%d rps: alarm %v, want %v", c.rate, got, c.wantAlarm)
		}
		stop()
		if p.alarm != nil {
			t.Errorf("%d rps: alarm still set after stop", c.rate)
		}
	}
}

// BenchmarkOpenLoopSendLag: at a rate whose interval is below the scheduler's millisecond,
// requests leave close to when they are due (vegeta's own sleeps leave them about half an
// interval late). Each iteration is one second at 2000 rps against an in-process server.
func BenchmarkOpenLoopSendLag(b *testing.B) {
	url := serve(b, &stub{})
	var p50, p99 time.Duration
	for b.Loop() {
		res, err := Run(b.Context(), config(url, Model{Rate: 2000, ExpectedLatency: time.Millisecond}, time.Second))
		if err != nil {
			b.Fatal(err)
		}
		p50, p99 = max(p50, res.SendLag.P50), max(p99, res.SendLag.P99)
	}
	b.ReportMetric(float64(p50.Microseconds()), "µs-lag-p50")
	b.ReportMetric(float64(p99.Microseconds()), "µs-lag-p99")
}
