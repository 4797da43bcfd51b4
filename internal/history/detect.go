package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/iotbench/iotbench/internal/stats"
)

// Detection is how change points are searched.
type Detection struct {
	// Alpha: a split is a change point when its permutation p-value is at most Alpha.
	Alpha float64
	// Permutations drawn per test; the smallest p-value is 1/(Permutations+1).
	Permutations int
	// Window: the series is searched in windows of this many points, each overlapping the
	// previous by half, so a long history costs time in proportion to its length.
	Window int
	// MinPoints on each side of a change point.
	MinPoints int
}

// DefaultDetection: 1% significance, windows of 50 points, five points on each side.
var DefaultDetection = Detection{Alpha: 0.01, Permutations: 499, Window: 50, MinPoints: 5}

// Split is a change point of a series of values: the new level starts at Index.
type Split struct {
	Index int
	// P is the permutation p-value of the split in the segment it was found in.
	P float64
}

// Detect finds the change points of xs, ordered by index: E-Divisive means on ranks, applied
// recursively (a significant split is searched again on each side) inside overlapping windows,
// each split tested against random permutations of its segment. seed makes it repeatable.
func (d Detection) Detect(xs []float64, seed uint64) []Split {
	n := len(xs)
	w := max(d.Window, 2*d.MinPoints)
	rng := rand.New(rand.NewPCG(seed, 0x1f0c))
	var found []Split
	for lo := 0; ; lo += w / 2 {
		hi := min(lo+w, n)
		lo = max(0, hi-w) // the last window ends at the newest point
		d.bisect(xs, lo, hi, rng, &found)
		if hi == n {
			break
		}
	}
	return d.confirm(xs, merge(found, d.MinPoints), w, rng)
}

// confirm tests each split again between its neighbours (at most half a window each side), as a
// window's edge may have cut a shift short or shown one twice; the least significant split that
// fails is dropped, and the rest tested again, until every split passes.
func (d Detection) confirm(xs []float64, splits []Split, w int, rng *rand.Rand) []Split {
	for {
		weakest, weakestP := -1, d.Alpha
		for i := range splits {
			lo, hi := 0, len(xs)
			if i > 0 {
				lo = splits[i-1].Index
			}
			if i+1 < len(splits) {
				hi = splits[i+1].Index
			}
			at := splits[i].Index
			lo, hi = max(lo, at-w/2), min(hi, at+w/2)
			p := d.pValue(stats.Ranks(xs[lo:hi]), at-lo, rng)
			splits[i].P = p
			if p > weakestP {
				weakest, weakestP = i, p
			}
		}
		if weakest < 0 {
			return splits
		}
		splits = slices.Delete(splits, weakest, weakest+1)
	}
}

// pValue is how often a random order of r splits as well as r does at index at (1 when a side
// has fewer than MinPoints); it stops counting once the split cannot be significant.
func (d Detection) pValue(r []float64, at int, rng *rand.Rand) float64 {
	m := d.MinPoints
	if at < m || len(r)-at < m {
		return 1
	}
	best := func(perm []float64) float64 { _, q := bestSplit(perm, m); return q }
	return stats.PermutationP(r, statAt(r, at), best, d.Permutations, d.Alpha, rng)
}

// statAt is the E-Divisive means statistic of r split at t.
func statAt(r []float64, t int) float64 {
	n := len(r)
	left, total := 0.0, 0.0
	for i, x := range r {
		total += x
		if i < t {
			left += x
		}
	}
	diff := left/float64(t) - (total-left)/float64(n-t)
	return float64(t*(n-t)) / float64(n) * diff * diff
}

// merge keeps, of splits closer than minPoints (one shift seen from two windows), the most
// significant.
func merge(found []Split, minPoints int) []Split {
	sort.Slice(found, func(i, j int) bool {
		return found[i].P < found[j].P || found[i].P == found[j].P && found[i].Index < found[j].Index
	})
	var kept []Split
	for _, s := range found {
		if !slices.ContainsFunc(kept, func(k Split) bool { return abs(k.Index-s.Index) < minPoints }) {
			kept = append(kept, s)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Index < kept[j].Index })
	return kept
}

func abs(i int) int { return max(i, -i) }

// bisect finds the best split of xs[lo:hi], and when it is significant records it and searches
// both sides.
func (d Detection) bisect(xs []float64, lo, hi int, rng *rand.Rand, found *[]Split) {
	m := d.MinPoints
	if hi-lo < 2*m {
		return
	}
	r := stats.Ranks(xs[lo:hi])
	at, _ := bestSplit(r, m)
	if at < 0 {
		return
	}
	// The p-value: how often a random order of the same values splits as well.
	p := d.pValue(r, at, rng)
	if p > d.Alpha {
		return
	}
	*found = append(*found, Split{Index: lo + at, P: p})
	d.bisect(xs, lo, lo+at, rng, found)
	d.bisect(xs, lo+at, hi, rng, found)
}

// bestSplit is the split of r with m or more values each side that maximizes the E-Divisive
// means statistic τ(n−τ)/n · (mean before − mean after)², and the statistic; -1 when r is
// constant.
func bestSplit(r []float64, m int) (int, float64) {
	n := len(r)
	total := 0.0
	for _, x := range r {
		total += x
	}
	best, bestQ := -1, 0.0
	left := 0.0
	for i := 0; i < n-m; i++ {
		left += r[i]
		t := i + 1
		if t < m {
			continue
		}
		diff := left/float64(t) - (total-left)/float64(n-t)
		q := float64(t*(n-t)) / float64(n) * diff * diff
		if q > bestQ {
			best, bestQ = t, q
		}
	}
	return best, bestQ
}

// level is the median of xs and its 95% interval (order statistics).
func levelOf(xs []float64) Level {
	s := sortedCopy(xs)
	n := len(s)
	if n == 0 {
		return Level{}
	}
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	// The normal approximation to the binomial: ranks n/2 ± z(0.975)·√n/2.
	h := stats.NormalQuantile(0.975) * math.Sqrt(float64(n)) / 2
	lo, hi := int(math.Floor(float64(n)/2-h)), int(math.Ceil(float64(n)/2+h))
	l := Level{N: n, Median: med, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if lo >= 0 && hi < n {
		l.Lo, l.Hi = s[lo], s[hi]
	}
	return l
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Level is a series' level between two change points: the median of its points and its 95%
// interval (±Inf with too few points to say).
type Level struct {
	N              int
	Median, Lo, Hi float64
}
