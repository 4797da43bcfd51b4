package load

import (
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

// The pacer's timing is measured by a benchmark that prints figures, not held to a bound by a
// test: go test -run - -bench SendLag ./internal/load

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
