package load

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
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

// Shares of a uniform schedule interleave into it exactly: share i of n sends the whole's
// requests i, i+n, i+2n…, at the share's rate.
func TestPacerShares(t *testing.T) {
	for _, tc := range []struct{ rate, count int }{{1000, 2}, {15000, 3}, {8, 4}} {
		whole := newPacer(tc.rate, Share{})
		for i := range tc.count {
			share := newPacer(tc.rate/tc.count, Share{Index: i, Count: tc.count})
			if got, want := share.Rate(0), float64(tc.rate/tc.count); got != want {
				t.Errorf("%d rps, share %d of %d: rate %v, want %v", tc.rate, i, tc.count, got, want)
			}
			for k := range uint64(1000) {
				if got, want := share.due(k), whole.due(k*uint64(tc.count)+uint64(i)); got != want {
					t.Fatalf("%d rps, share %d of %d: request %d due at %v, the whole's %d at %v", tc.rate, i, tc.count, k, got, k*uint64(tc.count)+uint64(i), want)
				}
			}
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

// gapStats are the count of requests due within du and the coefficient of variation of the gaps
// between them.
func gapStats(s schedule, du time.Duration) (count int, cv float64) {
	var prev time.Duration
	var sum, sumSq float64
	for i := uint64(0); ; i++ {
		at := s.due(i)
		if at > du {
			break
		}
		gap := (at - prev).Seconds()
		prev = at
		sum += gap
		sumSq += gap * gap
		count++
	}
	mean := sum / float64(count)
	return count, math.Sqrt(sumSq/float64(count)-mean*mean) / mean
}

// The arrival processes' schedules, as the attacker asks for them: Poisson's gaps vary as much
// as they average (an exponential's coefficient of variation is 1) and keep the rate; uniform's
// do not vary. Ten minutes of schedule: Poisson's count is then within 1% by 7 standard
// deviations.
func TestArrivalSchedules(t *testing.T) {
	const rate, du = 1000, 10 * time.Minute
	want := rate * int(du/time.Second)
	cases := []struct {
		name         string
		model        Model
		seed         uint64
		minCV, maxCV float64
	}{
		{"uniform", Model{Rate: rate}, 0, 0, 0.001},
		{"uniform, named", Model{Rate: rate, Arrival: arrival.Uniform}, 0, 0, 0.001},
		{"poisson", Model{Rate: rate, Arrival: arrival.Poisson}, 1, 0.9, 1.1},
		{"poisson, another seed", Model{Rate: rate, Arrival: arrival.Poisson}, 2, 0.9, 1.1},
	}
	for _, c := range cases {
		count, cv := gapStats(newSchedule(c.model, c.seed), du)
		if math.Abs(float64(count-want)) > 0.01*float64(want) {
			t.Errorf("%s: %d requests due in %v at %d rps, want %d within 1%%", c.name, count, du, rate, want)
		}
		if cv < c.minCV || cv > c.maxCV {
			t.Errorf("%s: gaps' coefficient of variation %.3f, want %.1f to %.1f", c.name, cv, c.minCV, c.maxCV)
		}
	}
}

// A seed replays the same arrivals; another seed draws others. The attacker asks about a request
// more than once (Pace, then its due time), which must not draw again.
func TestPoissonScheduleIsSeeded(t *testing.T) {
	draw := func(seed uint64) []time.Duration {
		s := newSchedule(Model{Rate: 500, Arrival: arrival.Poisson}, seed)
		out := make([]time.Duration, 100)
		for i := range out {
			s.Pace(0, uint64(i))
			out[i] = s.due(uint64(i))
			if again := s.due(uint64(i)); again != out[i] {
				t.Fatalf("request %d due at %v, then at %v", i, out[i], again)
			}
		}
		return out
	}
	a, b, other := draw(7), draw(7), draw(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 drew %v, then %v", a[:3], b[:3])
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 drew the same arrivals")
	}
	for i := 1; i < len(a); i++ {
		if a[i] < a[i-1] {
			t.Fatalf("request %d due at %v, before request %d at %v", i, a[i], i-1, a[i-1])
		}
	}
}
