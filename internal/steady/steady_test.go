package steady

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/timeline"
)

// phase builds n seconds at rps successes each, p50 and p99 from the functions of the second's
// index; noise adds up to ±frac of each figure, from a fixed seed.
func phase(n int, rps float64, p50, p99 func(i int) time.Duration, errs func(i int) int64, frac float64) []timeline.Second {
	rnd := rand.New(rand.NewPCG(1, 2))
	jitter := func(x float64) float64 { return x * (1 + frac*(2*rnd.Float64()-1)) }
	out := make([]timeline.Second, n+1)
	for i := range out {
		out[i] = timeline.Second{Index: i, Successes: int64(jitter(rps)),
			P50: time.Duration(jitter(float64(p50(i)))), P99: time.Duration(jitter(float64(p99(i)))), Status: errs(i)}
	}
	out[n].Successes = 3 // the last second, cut short by the phase's end
	return out
}

func flat(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }
func none(int) int64                               { return 0 }

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		seconds []timeline.Second
		want    string // the verdict in words; empty: steady
	}{
		{"flat and noisy", phase(30, 1000, flat(2*time.Millisecond), flat(9*time.Millisecond), none, 0.3), ""},
		{"p50 drifts 2.1 ms a second", phase(30, 1000, func(i int) time.Duration { return 5*time.Millisecond + time.Duration(i)*2100*time.Microsecond },
			flat(90*time.Millisecond), none, 0.05),
			"not steady: p50 rose 2.16 ms per second over the measured phase"},
		// Significant with 30 seconds, but 0.1% of the level a second: 3% over the phase.
		{"a slight drift is steady", phase(30, 1000, func(i int) time.Duration { return 10*time.Millisecond + time.Duration(i)*10*time.Microsecond },
			flat(20*time.Millisecond), none, 0.001), ""},
		{"no seconds", phase(20, 1000, flat(time.Millisecond), flat(3*time.Millisecond), none, 0.01)[:0], ""},
		{"errors grow", phase(20, 1000, flat(time.Millisecond), flat(3*time.Millisecond), func(i int) int64 { return int64(5 * i) }, 0.01),
			"not steady: errors rose 0.46 % of requests per second"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.seconds)
			if got := v.String(); c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Errorf("verdict %q, want %q (%+v)", got, c.want, v.Trends)
			}
		})
	}
}

func TestJudgeThroughputFalling(t *testing.T) {
	s := phase(20, 1000, flat(time.Millisecond), flat(3*time.Millisecond), none, 0.02)
	for i := range s[:20] {
		s[i].Successes = int64(1000 - 20*i) // 38% over the phase
	}
	v := Judge(s)
	if v.Steady() || len(v.Trends) != 1 || v.Trends[0].Figure != "throughput" || math.Abs(v.Trends[0].Slope+20) > 1e-9 {
		t.Fatalf("verdict %+v, want throughput falling 20 rps a second", v)
	}
	if got, want := v.String(), "not steady: throughput fell 20 rps per second over the measured phase"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestTooShortIsNotJudged(t *testing.T) {
	s := phase(MinSeconds-1, 1000, func(i int) time.Duration { return time.Duration(i+1) * time.Second }, flat(time.Second), none, 0)
	if v := Judge(s); v.Judged || v.Steady() || v.String() != "" {
		t.Errorf("a %d-second phase: %+v, want not judged", len(s), v)
	}
}

// Published worked example (Hipel & McLeod style): a strictly increasing series of 10 has
// S = 45, Var(S) = 125, z = 44/√125 = 3.9355, p = 8.3e-5.
func TestMannKendallByHand(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := MannKendall(xs); math.Abs(p-8.30e-5) > 0.05e-5 {
		t.Errorf("p = %g, want 8.30e-5", p)
	}
	if p := MannKendall([]float64{3, 3, 3, 3}); p != 1 {
		t.Errorf("constant series: p = %g, want 1", p)
	}
	if s := SenSlope([]float64{0, 2, 4, 100, 8}); s != 2 {
		t.Errorf("Sen slope %g, want 2 despite the outlier", s)
	}
}
