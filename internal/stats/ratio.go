package stats

import (
	"math"
	"slices"
)

// Ratio is how many times one sample's values are another's: the Hodges–Lehmann estimate of
// the ratio (the median of every a/b over the pairs) with the confidence interval that inverts
// the two-sided Mann–Whitney test: a factor r lies in the interval exactly when the test at
// 1 − Confidence cannot tell a from r·b. Below TrialsToDiffer values a side no interval exists at
// 95%: Lo and Hi are then 0 and +Inf.
type Ratio struct {
	N1, N2     int
	Estimate   float64
	Lo, Hi     float64
	Confidence float64 // the interval's actual level, at least the one asked (1 when unbounded)
}

// Finite reports whether the interval is bounded on both sides.
func (r Ratio) Finite() bool { return r.Lo > 0 && !math.IsInf(r.Hi, 0) }

// RatioInterval estimates a/b from two samples of positive values at confidence. It panics on
// an empty sample; a value at or below zero is taken as the smallest positive float.
func RatioInterval(a, b []float64, confidence float64) Ratio {
	if len(a) == 0 || len(b) == 0 {
		panic("stats.RatioInterval of no values")
	}
	logs := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Log(math.Max(x, math.SmallestNonzeroFloat64))
		}
		return out
	}
	la, lb := logs(a), logs(b)
	d := make([]float64, 0, len(la)*len(lb))
	for _, x := range la {
		for _, y := range lb {
			d = append(d, x-y)
		}
	}
	slices.Sort(d)
	r := Ratio{N1: len(a), N2: len(b), Estimate: math.Exp(median(d)), Lo: 0, Hi: math.Inf(1), Confidence: 1}
	// k is the largest count with P(U ≤ k−1) ≤ (1 − confidence)/2: the interval is then
	// [d(k), d(nm+1−k)] (1-based), at level 1 − 2·P(U ≤ k−1).
	cdf := uCDF(len(a), len(b))
	tail := (1 - confidence) / 2
	k := 0
	for c := 1; c <= len(d)/2; c++ {
		if cdf[c-1] > tail {
			break
		}
		k = c
		r.Confidence = 1 - 2*cdf[c-1]
	}
	if k > 0 {
		r.Lo, r.Hi = math.Exp(d[k-1]), math.Exp(d[len(d)-k])
	}
	return r
}

// uCDF is P(U ≤ u) for u = 0…n·m under the null hypothesis of the Mann–Whitney test with n and m
// values, exact: the count of the C(n+m, n) equally likely orders with u pairs inverted.
func uCDF(n, m int) []float64 {
	// ways[j][u] is the count for j values on one side and m on the other, built up in j.
	prev := make([][]float64, m+1) // prev[i]: counts with j−1 and i values
	for i := range prev {
		prev[i] = []float64{1}
	}
	for j := 1; j <= n; j++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1}
		for i := 1; i <= m; i++ {
			// f(j, i, u) = f(j−1, i, u−i) + f(j, i−1, u): the largest value is on one side or the other.
			size := j*i + 1
			row := make([]float64, size)
			for u, c := range prev[i] {
				if u+i < size {
					row[u+i] += c
				}
			}
			for u, c := range cur[i-1] {
				row[u] += c
			}
			cur[i] = row
		}
		prev = cur
	}
	counts := prev[m]
	total := 0.0
	for _, c := range counts {
		total += c
	}
	out := make([]float64, len(counts))
	acc := 0.0
	for u, c := range counts {
		acc += c
		out[u] = acc / total
	}
	return out
}
