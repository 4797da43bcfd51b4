package stats

import (
	"math"
	"slices"
	"sort"
)

// Paired runs measure a baseline and a candidate in the same rounds, back to back, so that what
// drifts between rounds (the machine, its neighbours) hits both alike. What is tested is the
// per-round difference; the Wilcoxon signed-rank test assumes only that each difference is
// symmetric about the true change, not that it is normal.

// SignedRank is the Wilcoxon signed-rank test of paired differences d against a shift: are the
// d − shift centred on zero? Zeros are dropped (Wilcoxon's convention); tied magnitudes share
// their mean rank, and the p-values are exact over the 2ⁿ equally likely signs of those ranks
// (for n above exactMax, the normal approximation with the tie correction).
type SignedRank struct {
	N int // differences left once zeros are dropped
	// WPlus is the sum of the ranks of the positive differences.
	WPlus float64
	// Less and Greater are the one-sided p-values of "d − shift tends below 0" and "above 0";
	// TwoSided is twice the smaller, at most 1. With no difference left all three are 1.
	Less, Greater, TwoSided float64
}

// SignedRankMinP is the smallest one-sided p-value of the signed-rank test over n pairs: every
// difference on one side, 1 of the 2ⁿ equally likely signs (the two-sided one is twice it). With
// n pairs whose SignedRankMinP is not under alpha, no test of them reaches alpha, whatever was
// measured.
func SignedRankMinP(n int) float64 { return math.Pow(2, -float64(n)) }

// exactMax bounds the exact distribution's cost (n² sums × n steps).
const exactMax = 400

// SignedRankTest tests d − shift against 0.
func SignedRankTest(d []float64, shift float64) SignedRank {
	x := make([]float64, 0, len(d))
	for _, v := range d {
		if v-shift != 0 {
			x = append(x, v-shift)
		}
	}
	n := len(x)
	if n == 0 {
		return SignedRank{Less: 1, Greater: 1, TwoSided: 1}
	}
	ranks2 := doubledRanks(x) // integer: twice the mid-ranks
	w2 := 0
	for i, v := range x {
		if v > 0 {
			w2 += ranks2[i]
		}
	}
	res := SignedRank{N: n, WPlus: float64(w2) / 2}
	if n <= exactMax {
		dist := signDistribution(ranks2)
		for s, p := range dist {
			if s <= w2 {
				res.Less += p
			}
			if s >= w2 {
				res.Greater += p
			}
		}
	} else {
		// E[W+] = Σr/2, Var[W+] = Σr²/4: each rank's sign a fair coin.
		var sum, sq float64
		for _, r := range ranks2 {
			sum += float64(r) / 2
			sq += float64(r) * float64(r) / 4
		}
		z := func(w float64) float64 { return (w - sum/2) / math.Sqrt(sq/4) }
		// A continuity correction of half a step of W+.
		res.Less = normalCDF(z(res.WPlus + 0.5))
		res.Greater = 1 - normalCDF(z(res.WPlus-0.5))
	}
	res.Less, res.Greater = math.Min(res.Less, 1), math.Min(res.Greater, 1)
	res.TwoSided = math.Min(1, 2*math.Min(res.Less, res.Greater))
	return res
}

// doubledRanks ranks |x| from 1, ties sharing their mean rank, each rank doubled so that a mean
// of two ranks stays whole.
func doubledRanks(x []float64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) < math.Abs(x[idx[b]]) })
	out := make([]int, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && math.Abs(x[idx[j]]) == math.Abs(x[idx[i]]) {
			j++
		}
		// Ranks i+1 … j share their mean (i+1+j)/2; doubled: i+1+j.
		for k := i; k < j; k++ {
			out[idx[k]] = i + 1 + j
		}
		i = j
	}
	return out
}

// signDistribution is the distribution of the sum of the ranks given a positive sign, each sign
// a fair coin: P[s] for every doubled sum s.
func signDistribution(ranks2 []int) []float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	dist := make([]float64, total+1)
	dist[0] = 1
	top := 0
	for _, r := range ranks2 {
		for s := top; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+r] += dist[s] / 2
				dist[s] /= 2
			}
		}
		top += r
	}
	return dist
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// Shift is the Hodges–Lehmann estimate of the centre of paired differences (the median of the
// Walsh averages (dᵢ + dⱼ)/2, i ≤ j) with its confidence interval from the signed-rank test: the
// interval holds the shifts that the two-sided test at 1 − Confidence would not reject.
type Shift struct {
	N          int
	Estimate   float64
	Lo, Hi     float64 // ±Inf when n is too small for the confidence asked
	Confidence float64 // the interval's actual level, at least the one asked
}

// Finite reports whether the interval is finite.
func (s Shift) Finite() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// ShiftInterval estimates the centre of d with a confidence interval of at least confidence.
// It panics on an empty d: callers estimate rounds they have.
func ShiftInterval(d []float64, confidence float64) Shift {
	n := len(d)
	if n == 0 {
		panic("stats.ShiftInterval of no values")
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	m := len(walsh)
	s := Shift{N: n, Estimate: median(walsh), Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: 1}
	// c is the largest count with P(W+ ≤ c-1) ≤ (1-confidence)/2 under the null without ties:
	// the interval [walsh(c), walsh(m+1-c)] (1-based) then covers with 1 - 2·P(W+ ≤ c-1).
	ranks2 := make([]int, n)
	for i := range ranks2 {
		ranks2[i] = 2 * (i + 1)
	}
	var cdf []float64
	if n <= exactMax {
		dist := signDistribution(ranks2)
		cdf = make([]float64, 0, m+1) // cdf[w] = P(W+ ≤ w), w in whole ranks
		acc := 0.0
		for w := 0; w <= m; w++ {
			acc += dist[2*w]
			cdf = append(cdf, acc)
		}
	}
	tail := (1 - confidence) / 2
	c := 0
	for k := 1; k <= m/2; k++ {
		var p float64
		if cdf != nil {
			p = cdf[k-1]
		} else {
			mean, sd := float64(m)/2, math.Sqrt(float64(n*(n+1)*(2*n+1))/24)
			p = normalCDF((float64(k-1) + 0.5 - mean) / sd)
		}
		if p > tail {
			break
		}
		c = k
		s.Confidence = 1 - 2*p
	}
	if c > 0 {
		s.Lo, s.Hi = walsh[c-1], walsh[m-c]
	}
	return s
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Equivalence is the two one-sided tests (TOST) of d against the margin (lower, upper): d is
// equivalent when it lies significantly above lower and significantly below upper. P is the
// larger of the two one-sided p-values.
func Equivalence(d []float64, lower, upper float64) float64 {
	above := SignedRankTest(d, lower).Greater
	below := SignedRankTest(d, upper).Less
	return math.Max(above, below)
}

// AdjustBH returns the Benjamini–Hochberg adjusted p-values of ps, in their order: a p-value
// adjusted below alpha is a discovery with the false discovery rate held at alpha over all of
// them, where m tests at alpha each would raise about alpha·m false alarms.
func AdjustBH(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, m)
	next := 1.0
	for k := m - 1; k >= 0; k-- {
		i := idx[k]
		adj := math.Min(next, ps[i]*float64(m)/float64(k+1))
		out[i] = adj
		next = adj
	}
	return out
}

// StdDev is the sample standard deviation of xs; 0 for fewer than two values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
