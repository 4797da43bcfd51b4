package sampling

import (
	"fmt"
	"math"
)

// Autocorrelation is the lag-1 autocorrelation of xs: how much each value tells of the next one
// (0 for independent samples, towards 1 when a slow drift or a long pause spans several); NaN
// with fewer than 3 values or none varying.
func Autocorrelation(xs []float64) float64 {
	n := len(xs)
	if n < 3 {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	var num, den float64
	for i, x := range xs {
		den += (x - mean) * (x - mean)
		if i > 0 {
			num += (x - mean) * (xs[i-1] - mean)
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// EffectiveN is how many independent samples n samples with lag-1 autocorrelation r are worth:
// n(1−r)/(1+r), the variance of their mean being that of so many independent ones (an AR(1)
// process). A negative r (alternating samples) is not counted as more than n; r unknown is n.
func EffectiveN(n int, r float64) float64 {
	if math.IsNaN(r) || r <= 0 {
		return float64(n)
	}
	return max(float64(n)*(1-r)/(1+r), 1)
}

// Interval is the mean of samples with its 95% interval, whose half-width counts the effective
// number of samples, not their number.
type Interval struct {
	N          int
	R          float64 // lag-1 autocorrelation (NaN: unknown)
	EffectiveN float64
	Mean       float64
	// HalfWidth is the 95% interval's half-width; Naive the same as if the samples were
	// independent. +Inf when too few samples are worth anything.
	HalfWidth, Naive float64
}

// MeanInterval is the mean of xs with its 95% interval, widened where successive samples are
// correlated: Student's t over EffectiveN − 1 degrees of freedom, with the standard error
// s/√EffectiveN.
func MeanInterval(xs []float64) Interval {
	n := len(xs)
	iv := Interval{N: n, R: Autocorrelation(xs), Mean: math.NaN(), HalfWidth: math.Inf(1), Naive: math.Inf(1)}
	if n == 0 {
		return iv
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
	}
	iv.Mean = sum / float64(n)
	for _, x := range xs {
		sq += (x - iv.Mean) * (x - iv.Mean)
	}
	iv.EffectiveN = EffectiveN(n, iv.R)
	if n < 2 {
		return iv
	}
	sd := math.Sqrt(sq / float64(n-1))
	iv.Naive = tQuantile(float64(n-1)) * sd / math.Sqrt(float64(n))
	if iv.EffectiveN >= 2 {
		iv.HalfWidth = tQuantile(iv.EffectiveN-1) * sd / math.Sqrt(iv.EffectiveN)
	}
	return iv
}

// tQuantile is Student's t 0.975 quantile at df degrees of freedom (Cornish–Fisher expansion
// about the normal's 1.96: within 1% from 2 degrees of freedom on).
func tQuantile(df float64) float64 {
	const z = 1.959964
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z + (z3+z)/(4*df) + (5*z5+16*z3+3*z)/(96*df*df) + (3*z7+19*z5+17*z3-15*z)/(384*df*df*df)
}

// CorrelatedR is the lag-1 autocorrelation above which the seconds are called correlated: they
// are then worth half their number or fewer (EffectiveN ≤ n/2 from r = 1/3 on).
const CorrelatedR = 1.0 / 3

// correlatedZ is the one-sided 1% point of the normal: independent samples' r spreads about 0
// by 1/√n, so over a short phase (20 s: 19 seconds) r must also reach 2.33/√n (0.53) for the
// correlation to be more than chance.
const correlatedZ = 2.326

// Independence is what the independence check found of a phase's per-second series.
type Independence struct {
	// Figure names the series judged: the one of the phase's per-second figures (p50, p99)
	// whose seconds were the most correlated.
	Figure string
	Interval
}

// Correlated says the seconds are worth half their number or fewer, and that this is no chance
// of a short phase: r over CorrelatedR and significantly above 0.
func (in Independence) Correlated() bool {
	return !math.IsNaN(in.R) && in.R > CorrelatedR && in.R > correlatedZ/math.Sqrt(float64(in.N))
}

// JudgeIndependence judges the per-second series by figure name, and keeps the most correlated
// (figures in the order given; NaN where a series cannot be judged).
func JudgeIndependence(figures []string, series [][]float64) Independence {
	var worst Independence
	worst.R = math.NaN()
	for i, xs := range series {
		iv := MeanInterval(xs)
		if math.IsNaN(iv.R) {
			continue
		}
		if math.IsNaN(worst.R) || iv.R > worst.R {
			worst = Independence{Figure: figures[i], Interval: iv}
		}
	}
	return worst
}

// String says in words what correlated seconds mean for the cell's figures; empty when they
// are not correlated.
func (in Independence) String() string {
	if !in.Correlated() {
		return ""
	}
	known := fmt.Sprintf("is known to ±%.2g%% (95%%)", 100*in.HalfWidth/math.Abs(in.Mean))
	if math.IsInf(in.HalfWidth, 0) || math.IsNaN(in.HalfWidth) {
		known = "has no bounded 95% interval" // too few independent seconds for one
	}
	return fmt.Sprintf("seconds not independent: the per-second %s follows the second before it (lag-1 r %.2f), so the %d seconds are worth about %.0f independent ones: the phase's %s %s, not the ±%.2g%% its seconds suggest; a pause or drift longer than a second is in it, which more trials average out and a longer phase barely does",
		in.Figure, in.R, in.N, in.EffectiveN, in.Figure, known, 100*in.Naive/math.Abs(in.Mean))
}
