package sampling

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
)

// sends counts a schedule of gaps (in units of the mean gap 1/rate) over a phase of du.
func sends(rate int, du time.Duration, gap func() float64) Dispersion {
	c := NewCounts(rate, du)
	mean := float64(time.Second) / float64(rate)
	for t := gap() * mean; t < float64(du); t += gap() * mean {
		c.Add(time.Duration(t))
	}
	return c.Dispersion(du)
}

func TestArrivalCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	even := func() float64 { return 1 }
	jittered := func() float64 { return 0.8 + 0.4*rng.Float64() } // an event loop's jitter about the schedule
	poisson := func() float64 { return rng.ExpFloat64() }
	// Clumps: 40 requests at once, then a gap of 40 (a generator that stalls and catches up).
	n := 0
	clumps := func() float64 {
		n++
		if n%40 == 0 {
			return 40
		}
		return 0
	}
	// Turns of a busy event loop: each releases what fell due since the last, 1 to 30 sends.
	batch := 0
	turns := func() float64 {
		if batch == 0 {
			batch = 1 + rng.IntN(30)
			return float64(batch)
		}
		batch--
		return 0
	}
	// A stall of 20 ms each second, then its sends at once (at 40,000 rps, 800 of them).
	sent := 0
	stalls := func() float64 {
		sent++
		if sent%40000 == 0 {
			return 800
		}
		if sent%40000 < 800 {
			return 0
		}
		return 1
	}
	for _, c := range []struct {
		name, process string
		rate          int
		gap           func() float64
		fits          bool
		words         string
	}{
		{"even sends, uniform asked", "uniform", 1000, even, true, ""},
		{"jittered sends, uniform asked", "uniform", 1000, jittered, true, ""},
		{"poisson sends, uniform asked", "uniform", 1000, poisson, false, "came in clumps"},
		{"poisson sends, poisson asked", "poisson", 1000, poisson, true, ""},
		{"even sends, poisson asked", "poisson", 1000, even, false, "more even than a Poisson process"},
		{"clumps, poisson asked", "poisson", 1000, clumps, false, "burstier than a Poisson process"},
		{"clumps, uniform asked", "uniform", 1000, clumps, false, "came in clumps"},
		// Fast rates: a burstier index than the bar's, in clumps far narrower than the own
		// delay allowed, fits; a stall or a Poisson process shows in wider windows.
		{"an event loop's turns at 40,000 rps, uniform asked", "uniform", 40000, turns, true, ""},
		{"a stall a second at 40,000 rps, uniform asked", "uniform", 40000, stalls, false, "ahead of or behind their pace where the generator may add 1.00 ms"},
		{"poisson sends at 40,000 rps, uniform asked", "uniform", 40000, poisson, false, "came in clumps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := sends(c.rate, 20*time.Second, c.gap)
			if c.rate > 1000 && d.Index() < UniformMaxIndex {
				t.Fatalf("index %.2f in windows of ten requests: the case tests nothing the index alone would not", d.Index())
			}
			got := JudgeArrivals(arrival.Process(c.process), d, time.Millisecond)
			if !got.Judged || got.Fits != c.fits || !strings.Contains(got.String(), c.words) || (c.fits && got.String() != "") {
				t.Errorf("%+v (%q); want judged, fits %v, saying %q", got, got.String(), c.fits, c.words)
			}
		})
	}
	// Poisson's index is 1 at any rate; the counts keep their memory bounded, by wider windows
	// for a long phase, by merging them for sends past the phase asked.
	if c := NewCounts(40000, 10*time.Minute); cap(c.counts) > MaxWindows {
		t.Errorf("%d windows for 10 minutes at 40,000 rps; want at most %d", cap(c.counts), MaxWindows)
	}
	late := NewCounts(1000, time.Second)
	late.Add(time.Hour)
	if len(late.counts) > MaxWindows {
		t.Errorf("%d windows after a send an hour late", len(late.counts))
	}
	for _, rate := range []int{50, 1000, 40000} {
		d := sends(rate, 30*time.Second, poisson)
		// Four standard deviations of the index's sampling spread.
		if idx := d.Index(); math.Abs(idx-1) > 4*math.Sqrt(2/float64(d.Windows-1)) || d.Windows > MaxWindows {
			t.Errorf("%d rps: index %.3f over %d windows; want about 1 over at most %d", rate, idx, d.Windows, MaxWindows)
		}
	}
	// Too few windows, or no process to test against: not judged.
	if c := JudgeArrivals("uniform", sends(10, 2*time.Second, even), time.Millisecond); c.Judged {
		t.Errorf("2 s at 10 rps judged: %+v", c)
	}
	if NewCounts(0, time.Second) != nil || JudgeArrivals("poisson", (*Counts)(nil).Dispersion(time.Second), time.Millisecond).Judged {
		t.Error("a phase without a rate was judged")
	}
}

// ar1 is n samples of an AR(1) series of lag-1 correlation phi about level, noise sd 1.
func ar1(rng *rand.Rand, n int, phi, level float64) []float64 {
	out := make([]float64, n)
	x := 0.0
	for i := range out {
		x = phi*x + rng.NormFloat64()
		out[i] = level + x
	}
	return out
}

func TestCorrelatedSamplesWidenTheInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	independent := MeanInterval(ar1(rng, 600, 0, 100))
	correlated := MeanInterval(ar1(rng, 600, 0.8, 100))
	if math.Abs(independent.R) > 0.15 || independent.EffectiveN < 400 || independent.HalfWidth > 1.2*independent.Naive {
		t.Errorf("independent samples: %+v; want r near 0, the interval as if independent", independent)
	}
	if correlated.R < 0.6 || correlated.EffectiveN > 100 || correlated.HalfWidth < 2*correlated.Naive {
		t.Errorf("correlated samples: %+v; want r near 0.8, about 67 effective samples, an interval about 3 times wider", correlated)
	}
	if got := EffectiveN(30, 0.5); math.Abs(got-10) > 1e-9 {
		t.Errorf("EffectiveN(30, 0.5) = %v; want 10", got)
	}
	if EffectiveN(30, -0.5) != 30 || EffectiveN(30, math.NaN()) != 30 {
		t.Error("a negative or unknown r counts more or fewer samples than there are")
	}
	// The t quantile: 12.71 at 1 degree of freedom is out of reach of the expansion, 2.228 at 10
	// and 2.042 at 30 are not.
	for df, want := range map[float64]float64{10: 2.228, 30: 2.042, 1000: 1.962} {
		if got := tQuantile(df); math.Abs(got-want)/want > 0.01 {
			t.Errorf("t(0.975, %v) = %.3f; want %.3f", df, got, want)
		}
	}
}

func TestIndependenceCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	flat, paused := ar1(rng, 40, 0, 50), ar1(rng, 40, 0.9, 50)
	in := JudgeIndependence([]string{"p50", "p99"}, [][]float64{flat, paused})
	if in.Figure != "p99" || !in.Correlated() || !strings.Contains(in.String(), "the per-second p99 follows the second before it") {
		t.Errorf("%+v: %q; want p99 correlated, said in words", in, in.String())
	}
	// Seconds worth fewer than two independent ones bound nothing: said so, not "±+Inf%".
	few := Independence{Figure: "p99", Interval: Interval{N: 20, R: 0.85, EffectiveN: 1.6, Mean: 50, HalfWidth: math.Inf(1), Naive: 2}}
	if w := few.String(); !strings.Contains(w, "the phase's p99 has no bounded 95% interval, not the ±4% its seconds suggest") || strings.Contains(w, "Inf") {
		t.Errorf("%q; want the interval said to be unbounded", w)
	}
	in = JudgeIndependence([]string{"p50", "p99"}, [][]float64{flat, ar1(rng, 40, 0, 50)})
	if in.Correlated() || in.String() != "" {
		t.Errorf("independent seconds judged correlated: %+v", in)
	}
	// Over a short phase, an r of 0.4 is within chance of independent seconds (2.33/√11 = 0.70):
	// the interval widens, but no warning.
	short := Independence{Figure: "p99", Interval: Interval{N: 11, R: 0.4}}
	if short.Correlated() || (Independence{Interval: Interval{N: 100, R: 0.4}}).Correlated() == false {
		t.Error("r 0.4 over 11 seconds judged correlated, or over 100 not")
	}
	// Of independent phases of 20 seconds, few are called correlated (1% expected, 5% allowed).
	flagged := 0
	for range 400 {
		if JudgeIndependence([]string{"p50"}, [][]float64{ar1(rng, 19, 0, 50)}).Correlated() {
			flagged++
		}
	}
	if flagged > 20 {
		t.Errorf("%d of 400 independent 19-second phases called correlated", flagged)
	}
	if in := JudgeIndependence([]string{"p50"}, [][]float64{{1, 1, 1, 1}}); !math.IsNaN(in.R) || in.Correlated() {
		t.Errorf("a constant series judged: %+v", in)
	}
}
