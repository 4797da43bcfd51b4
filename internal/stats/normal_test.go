package stats

import (
	"math"
	"testing"
)

// Quantiles from any table of the standard normal (R: qnorm).
func TestNormalQuantile(t *testing.T) {
	cases := []struct{ p, want float64 }{
		{0.975, 1.959964}, {0.95, 1.644854}, {0.8, 0.841621}, {0.5, 0}, {0.025, -1.959964}, {0.995, 2.575829},
		{0, math.Inf(-1)}, {1, math.Inf(1)},
	}
	for _, c := range cases {
		if got := NormalQuantile(c.p); !(math.Abs(got-c.want) < 1e-6 || got == c.want) {
			t.Errorf("NormalQuantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

// The planning formulas worked by hand: sd 0.1 over 25 values gives a 95% half-width of
// 1.96·0.1/5 = 0.0392; halving it takes four times the values; at alpha 0.05 and power 0.8 the
// detectable shift is (1.959964 + 0.841621)·0.1/5 = 0.0560317.
func TestSamplePlanning(t *testing.T) {
	if got := HalfWidth(0.1, 25, 0.95); math.Abs(got-0.0391993) > 1e-6 {
		t.Errorf("HalfWidth = %v, want 0.0391993", got)
	}
	cases := []struct {
		n          int
		half, want float64
		size       float64
	}{{25, 0.04, 0.02, 100}, {10, 0.03, 0.03, 10}, {8, 0.01, 0.02, 2}, {5, 0.01, 0, math.Inf(1)}}
	for _, c := range cases {
		if got := SampleSize(c.n, c.half, c.want); got != c.size {
			t.Errorf("SampleSize(%d, %v, %v) = %v, want %v", c.n, c.half, c.want, got, c.size)
		}
	}
	if got := Detectable(0.1, 25, 0.05, 0.8); math.Abs(got-0.0560317) > 1e-6 {
		t.Errorf("Detectable = %v, want 0.0560317", got)
	}
}
