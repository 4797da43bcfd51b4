// Package stats is iotbench's statistics over trials: the median of a figure with its
// order-statistic confidence interval, and the Mann–Whitney U test between two sets of trials,
// both from golang.org/x/perf/benchmath (what benchstat uses): no distribution is assumed,
// because trial-to-trial noise of a server on a shared machine is not normal. Beside them: the
// paired tests (signed-rank, Hodges–Lehmann, equivalence, Benjamini–Hochberg: paired.go), ranks
// and the permutation test (rank.go), and the normal quantile with the sample-size planning that
// rests on it (normal.go). compare and history take their statistics from here.
package stats

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every confidence interval iotbench reports.
const Confidence = 0.95

// DefaultAlpha is the significance level of comparisons unless the user sets another.
const DefaultAlpha = 0.05

// MinTrialsForCI is the fewest trials whose 95% interval on the median is finite: with n trials
// the widest interval, [min, max], misses the median with probability 2/2ⁿ, which is at most 5%
// from n = 6 on (2/64 = 3.1%; with 5 trials 2/32 = 6.25%).
const MinTrialsForCI = 6

// TrialsToDiffer is the fewest trials per side with which the two-sided Mann–Whitney test can
// reach p < alpha at all. At 0.05 it is 4: with 4 against 4 the smallest p is 2/70 = 0.029; with
// 3 against 3 it is 2/20 = 0.1, so nothing could ever be called different.
func TrialsToDiffer(alpha float64) int {
	n := 1
	for minP(n) >= alpha && n < 1000 {
		n++
	}
	return n
}

// Summary is the median of a sample with its confidence interval.
type Summary struct {
	N          int
	Median     float64
	Lo, Hi     float64 // ±Inf when there are too few values for the confidence asked
	Confidence float64 // the interval's actual level, at least Confidence
}

// Finite reports whether the interval is finite.
func (s Summary) Finite() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// Spread is the interval's larger distance from the median, relative to the median: 0.03 means the
// median is known within ±3%. It is +Inf for an infinite interval or a zero median with a
// non-zero interval.
func (s Summary) Spread() float64 {
	if !s.Finite() {
		return math.Inf(1)
	}
	if s.Median == 0 {
		if s.Lo == 0 && s.Hi == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Max(s.Hi-s.Median, s.Median-s.Lo) / math.Abs(s.Median)
}

// PlusMinus is the interval as text: "±2.1%", "±15%", or "±∞".
func (s Summary) PlusMinus() string {
	sp := s.Spread()
	switch {
	case math.IsInf(sp, 0):
		return "±∞"
	case sp < 0.1:
		return fmt.Sprintf("±%.1f%%", 100*sp)
	}
	return fmt.Sprintf("±%.0f%%", 100*sp)
}

// Summarize returns the median of values and its 95% order-statistic confidence interval.
// values is not modified. It panics on an empty sample: callers summarize trials they have.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		panic("stats.Summarize of no values")
	}
	sample := benchmath.NewSample(append([]float64(nil), values...), &benchmath.DefaultThresholds)
	s := benchmath.AssumeNothing.Summary(sample, Confidence)
	return Summary{N: len(values), Median: s.Center, Lo: s.Lo, Hi: s.Hi, Confidence: s.Confidence}
}

// Comparison is the outcome of a Mann–Whitney U test between an old and a new sample.
type Comparison struct {
	P      float64 // two-sided p-value of "both come from the same distribution"
	N1, N2 int
	Alpha  float64
}

// Significant reports whether the difference is significant at Alpha.
func (c Comparison) Significant() bool { return c.P < c.Alpha }

// CanDiffer reports whether the sample sizes allow any significance at Alpha at all.
func (c Comparison) CanDiffer() bool { return MinP(c.N1, c.N2) < c.Alpha }

// minP is the smallest two-sided p-value of the U test with n values on each side.
func minP(n int) float64 { return MinP(n, n) }

// MinP is the smallest two-sided p-value of the U test with n1 and n2 values: the samples
// entirely apart, 2 of the C(n1+n2, n1) equally likely orders; 1 when a side is empty. Sizes
// whose MinP is not under alpha can never differ significantly, whatever was measured.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/math.Round(math.Exp(lchoose(n1+n2, n1))))
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Compare runs the two-sided Mann–Whitney U test of old against new at alpha. Identical samples
// (every value equal) give P = 1.
func Compare(old, new []float64, alpha float64) Comparison {
	th := benchmath.Thresholds{CompareAlpha: alpha}
	a := benchmath.NewSample(append([]float64(nil), old...), &th)
	b := benchmath.NewSample(append([]float64(nil), new...), &th)
	// benchmath's own warnings (too few samples, all values equal, with P = 1) are not passed
	// on: callers say in their own words what too few trials mean.
	c := benchmath.AssumeNothing.Compare(a, b)
	return Comparison{P: c.P, N1: len(old), N2: len(new), Alpha: alpha}
}
