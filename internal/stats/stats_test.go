package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// The example of R's wilcox.test help page (Hollander & Wolfe 1973, p. 69: permeability
// constants of the human chorioamnion): W = 35, one-sided p = 0.1272, so two-sided p = 0.2544,
// the exact p from all C(15, 5) = 3003 equally likely orders.
func TestMannWhitneyPublishedExample(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	c := Compare(x, y, 0.05)
	if !near(c.P, 0.2544) || c.N1 != 10 || c.N2 != 5 || c.Significant() {
		t.Errorf("Compare = %+v, want p 0.2544 (n 10+5), not significant", c)
	}
	if c := Compare(y, x, 0.05); !near(c.P, 0.2544) {
		t.Errorf("reversed: p %v, want the same two-sided 0.2544", c.P)
	}
}

func TestMannWhitneyExtremes(t *testing.T) {
	cases := []struct {
		name        string
		old, new    []float64
		wantP       float64
		significant bool
		canDiffer   bool
	}{
		// Five against five entirely apart: 2 of C(10, 5) = 252 orders.
		{"5+5 apart", []float64{20.1, 20.2, 20.3, 20.4, 20.5}, []float64{30.1, 30.2, 30.3, 30.4, 30.5}, 2.0 / 252, true, true},
		// Three against three entirely apart: 2 of 20, never below 0.05.
		{"3+3 apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1, false, false},
		{"all equal", []float64{7, 7, 7, 7, 7}, []float64{7, 7, 7, 7, 7}, 1, false, true},
		{"one each", []float64{1}, []float64{2}, 1, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(c.old, c.new, 0.05)
			if !near(got.P, c.wantP) || got.Significant() != c.significant || got.CanDiffer() != c.canDiffer {
				t.Errorf("p %v significant %v canDiffer %v; want %v %v %v", got.P, got.Significant(), got.CanDiffer(), c.wantP, c.significant, c.canDiffer)
			}
		})
	}
}

// Intervals worked out by hand from the binomial distribution of how many trials fall below the
// median: with n values the interval [x(k), x(n+1-k)] misses with probability 2·P(B ≤ k-1).
func TestMedianIntervalByHand(t *testing.T) {
	ten := []float64{12, 3, 9, 5, 11, 1, 7, 8, 2, 10} // sorted: 1 2 3 5 7 8 9 10 11 12
	cases := []struct {
		name           string
		values         []float64
		median, lo, hi float64
		confidence     float64
	}{
		// n = 6: [x(1), x(6)], 1 - 2/64.
		{"six", []float64{4, 6, 1, 3, 2, 5}, 3.5, 1, 6, 1 - 2.0/64},
		// n = 10: P(B ≤ 1) = 11/1024 (< 2.5%), P(B ≤ 2) = 56/1024 (> 2.5%): [x(2), x(9)], 1 - 22/1024.
		{"ten", ten, 7.5, 2, 11, 1 - 22.0/1024},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(c.values)
			if s.Median != c.median || s.Lo != c.lo || s.Hi != c.hi || !near(s.Confidence, c.confidence) || !s.Finite() {
				t.Errorf("Summarize = %+v, want median %v in [%v, %v] at %v", s, c.median, c.lo, c.hi, c.confidence)
			}
		})
	}
	if ten[0] != 12 {
		t.Error("Summarize sorted its argument in place")
	}
}

func TestTooFewTrialsGiveAnInfiniteInterval(t *testing.T) {
	for n := 1; n < MinTrialsForCI; n++ {
		values := make([]float64, n)
		for i := range values {
			values[i] = float64(10 + i)
		}
		if s := Summarize(values); s.Finite() || !math.IsInf(s.Spread(), 1) {
			t.Errorf("%d trials: %+v is finite; 95%% needs %d", n, s, MinTrialsForCI)
		}
	}
}

func TestSpread(t *testing.T) {
	cases := []struct {
		s    Summary
		want float64
	}{
		{Summary{Median: 100, Lo: 97, Hi: 101}, 0.03},
		{Summary{Median: 100, Lo: 99, Hi: 110}, 0.10},
		{Summary{Median: 0, Lo: 0, Hi: 0}, 0},
		{Summary{Median: 0, Lo: 0, Hi: 1}, math.Inf(1)},
	}
	for _, c := range cases {
		if got := c.s.Spread(); !near(got, c.want) && got != c.want {
			t.Errorf("%+v.Spread() = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestTrialsToDiffer(t *testing.T) {
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.1: 4, 0.11: 3} {
		if got := TrialsToDiffer(alpha); got != want {
			t.Errorf("TrialsToDiffer(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestMinP(t *testing.T) {
	for n, want := range map[int]float64{1: 1, 3: 0.1, 4: 2.0 / 70, 5: 2.0 / 252} {
		if got := minP(n); !near(got, want) {
			t.Errorf("minP(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestMinPOfUnequalSides(t *testing.T) {
	cases := []struct {
		n1, n2 int
		want   float64
	}{
		{0, 5, 1}, {5, 0, 1}, {1, 1, 1}, {3, 3, 0.1},
		{3, 10, 2.0 / 286}, // C(13, 3) = 286: three against ten can differ at 0.05
		{2, 5, 2.0 / 21},   // C(7, 2) = 21: two against five cannot
		{5, 4, 2.0 / 126},
	}
	for _, c := range cases {
		if got := MinP(c.n1, c.n2); !near(got, c.want) {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
		if got, want := (Comparison{N1: c.n1, N2: c.n2, Alpha: 0.05}).CanDiffer(), c.want < 0.05; got != want {
			t.Errorf("CanDiffer of %d+%d at 0.05 = %v, want %v", c.n1, c.n2, got, want)
		}
	}
}
