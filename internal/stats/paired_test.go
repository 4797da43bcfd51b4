package stats

import (
	"math"
	"testing"
)

// The reference values below were computed independently of this package, with SciPy 1.17
// (scipy.stats.wilcoxon, false_discovery_control) and, where SciPy has no exact answer (ties, the
// Hodges–Lehmann interval), by enumerating all 2ⁿ sign assignments in Python. The tests do not
// run Python.

// rExample is the paired example of R's wilcox.test help page (Hollander & Wolfe 1973, p. 29:
// depression scale before and after therapy), as differences x − y.
var rExample = []float64{1.83 - 0.878, 0.50 - 0.647, 1.62 - 0.598, 2.48 - 2.05, 1.68 - 1.06, 1.88 - 1.29, 1.55 - 1.06, 3.06 - 3.14, 1.30 - 1.29}

// ties has tied magnitudes and a zero: the exact p-values over the 2¹⁰ signs of the mid-ranks.
var ties = []float64{0.02, -0.01, 0.02, 0.03, 0.01, -0.02, 0.03, 0.02, 0.04, 0.01, 0.0}

// bigTies is 500 differences with many ties: beyond the exact limit, the normal approximation
// with tie and continuity corrections (SciPy's method="approx", correction=True).
func bigTies() []float64 {
	d := make([]float64, 500)
	for i := range d {
		d[i] = float64((i+1)*37%101-48) / 1000
	}
	return d
}

func TestSignedRankAgainstReferences(t *testing.T) {
	cases := []struct {
		name                    string
		d                       []float64
		shift                   float64
		n                       int
		wPlus                   float64
		less, greater, twoSided float64
	}{
		{"R example (SciPy exact)", rExample, 0, 9, 40, 0.986328125, 0.01953125, 0.0390625},
		{"ties and a zero (enumerated)", ties, 0, 10, 47.5, 0.98828125, 0.0234375, 0.046875},
		{"ties shifted below all (enumerated)", ties, -0.05, 11, 66, 1, 1.0 / 2048, 2.0 / 2048},
		{"500 with ties (SciPy approx)", bigTies(), 0, 495, 66256.5, 0.9372127368575477, 0.06282603810075879, 0.12565207620151758},
		{"all zero", []float64{0, 0, 0}, 0, 0, 0, 1, 1, 1},
		{"one positive", []float64{0.3}, 0, 1, 1, 1, 0.5, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SignedRankTest(c.d, c.shift)
			if got.N != c.n || got.WPlus != c.wPlus || !close(got.Less, c.less) || !close(got.Greater, c.greater) || !close(got.TwoSided, c.twoSided) {
				t.Errorf("got %+v\nwant n %d W+ %v less %v greater %v two-sided %v", got, c.n, c.wPlus, c.less, c.greater, c.twoSided)
			}
		})
	}
}

// close compares p-values to 1e-9 relative (exact ones) or 1e-6 absolute (SciPy's approximation
// goes through its own normal CDF).
func close(a, b float64) bool { return math.Abs(a-b) <= math.Max(1e-6, 1e-9*math.Abs(b)) }

func TestShiftIntervalAgainstEnumeration(t *testing.T) {
	cases := []struct {
		name             string
		d                []float64
		confidence       float64
		estimate, lo, hi float64
		actual           float64
		finite           bool
	}{
		{"R example 90%", rExample, 0.90, 0.46, 0.175, 0.726, 0.90234375, true},
		{"R example 95%", rExample, 0.95, 0.46, 0.01, 0.786, 0.9609375, true},
		// Four rounds: 1 − 2/16 = 0.875 < 0.90, so no finite 90% interval.
		{"four rounds", []float64{0.1, 0.2, 0.3, 0.4}, 0.90, 0.25, math.Inf(-1), math.Inf(1), 1, false},
		// Five: [min, max] of the Walsh averages covers 1 − 2/32 = 0.9375.
		{"five rounds", []float64{0.1, 0.2, 0.3, 0.4, 0.5}, 0.90, 0.3, 0.1, 0.5, 0.9375, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ShiftInterval(c.d, c.confidence)
			if !near(got.Estimate, c.estimate) || got.Finite() != c.finite || !near(got.Confidence, c.actual) ||
				(c.finite && (!near(got.Lo, c.lo) || !near(got.Hi, c.hi))) || (!c.finite && (!math.IsInf(got.Lo, -1) || !math.IsInf(got.Hi, 1))) {
				t.Errorf("got %+v, want estimate %v [%v, %v] at %v", got, c.estimate, c.lo, c.hi, c.actual)
			}
		})
	}
}

// The most extreme signs give the smallest p: 4 rounds all worse is 1/16 one-sided, as the test
// itself says.
func TestSignedRankMinP(t *testing.T) {
	for n, want := range map[int]float64{0: 1, 1: 0.5, 4: 0.0625, 5: 0.03125} {
		if got := SignedRankMinP(n); got != want {
			t.Errorf("SignedRankMinP(%d) = %v, want %v", n, got, want)
		}
	}
	if got := SignedRankTest([]float64{0.1, 0.2, 0.3, 0.4}, 0).Greater; math.Abs(got-SignedRankMinP(4)) > 1e-12 {
		t.Errorf("4 positive differences: p %v, want %v", got, SignedRankMinP(4))
	}
}

func TestEquivalence(t *testing.T) {
	cases := []struct {
		name         string
		d            []float64
		lower, upper float64
		p            float64
	}{
		// Every difference inside ±0.05: each one-sided test sees 11 of 11 on its side.
		{"inside the margin", ties, -0.05, 0.05, 1.0 / 2048},
		// The margin ±0.01 cuts through the data (centred near 0.015): clearly above −0.01
		// (p 0.0029), not below +0.01 (p 0.707, enumerated).
		{"past the margin", ties, -0.01, 0.01, 0.70703125},
		{"one round", []float64{0}, -0.05, 0.05, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Equivalence(c.d, c.lower, c.upper); !close(got, c.p) {
				t.Errorf("p %v, want %v", got, c.p)
			}
		})
	}
}

func TestAdjustBH(t *testing.T) {
	cases := []struct {
		name string
		ps   []float64
		want []float64
	}{
		// SciPy's false_discovery_control(ps, method="bh").
		{"SciPy", []float64{0.01, 0.04, 0.03, 0.005, 0.20, 0.049}, []float64{0.03, 0.0588, 0.0588, 0.03, 0.2, 0.0588}},
		{"one", []float64{0.03}, []float64{0.03}},
		{"none", nil, []float64{}},
		{"capped at 1", []float64{0.9, 0.8}, []float64{0.9, 0.9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := AdjustBH(c.ps)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if !near(got[i], c.want[i]) {
					t.Errorf("got %v, want %v", got, c.want)
					break
				}
			}
		})
	}
}
