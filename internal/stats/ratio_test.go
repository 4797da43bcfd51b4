package stats

import (
	"math"
	"testing"
)

func TestUCDF(t *testing.T) {
	cases := []struct {
		n, m int
		u    int
		want float64
	}{
		{2, 2, 0, 1.0 / 6},  // 1 of C(4,2) = 6 orders
		{3, 3, 0, 1.0 / 20}, // 1 of 20
		{4, 4, 0, 1.0 / 70},
		{4, 4, 1, 2.0 / 70},
		{6, 6, 0, 1.0 / 924},
		{3, 5, 15, 1},
	}
	for _, c := range cases {
		if got := uCDF(c.n, c.m)[c.u]; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(U ≤ %d) with %d and %d values = %v, want %v", c.u, c.n, c.m, got, c.want)
		}
	}
}

func TestRatioInterval(t *testing.T) {
	cases := []struct {
		name   string
		a, b   []float64
		finite bool
		lo, hi float64
	}{
		// 2 against 2 and 3 against 3: no order of the trials reaches p < 0.05, so no interval.
		{"two a side", []float64{200, 210}, []float64{100, 101}, false, 0, math.Inf(1)},
		{"three a side", []float64{200, 205, 210}, []float64{100, 101, 102}, false, 0, math.Inf(1)},
		// 4 against 4: P(U ≤ 0) = 1/70 ≤ 0.025 < 2/70: the interval is the extreme pair ratios.
		{"four a side", []float64{200, 202, 204, 206}, []float64{100, 100, 100, 103}, true, 200.0 / 103, 206.0 / 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := RatioInterval(c.a, c.b, Confidence)
			if r.Finite() != c.finite || math.Abs(r.Lo-c.lo) > 1e-9 || (c.finite && math.Abs(r.Hi-c.hi) > 1e-9) {
				t.Errorf("got [%v, %v] finite %v, want [%v, %v]", r.Lo, r.Hi, r.Finite(), c.lo, c.hi)
			}
			if r.Estimate < 1.9 || r.Estimate > 2.1 {
				t.Errorf("estimate %v, want about 2", r.Estimate)
			}
		})
	}
	// Six a side at 95%: the interval holds the true factor of two samples drawn around it.
	a := []float64{310, 290, 305, 300, 295, 302}
	b := []float64{100, 98, 103, 101, 99, 97}
	r := RatioInterval(a, b, Confidence)
	if !r.Finite() || r.Lo > 3 || r.Hi < 3 || r.Confidence < Confidence {
		t.Errorf("6 a side: [%v, %v] at %v, want a finite interval around 3 at ≥ 95%%", r.Lo, r.Hi, r.Confidence)
	}
}
