package stats

import (
	"math/rand/v2"
	"slices"
	"sort"
)

// Ranks are xs' ranks, 1 for the smallest, ties sharing their mean rank: a statistic on ranks is
// not moved by one wild value, as tail latencies have. xs is not modified.
func Ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		mean := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			r[idx[k]] = mean
		}
		i = j
	}
	return r
}

// PermutationP is a permutation test's p-value: of permutations random orders of values (each
// shuffling the last), the share whose statistic is at least observed, counting the observed
// order itself: (1 + exceeding)/(permutations + 1), so never under 1/(permutations + 1). It
// returns 1 as soon as the p-value can no longer be at most alpha, which spares the rest of the
// orders when nothing is there. values is not modified; rng makes it repeatable.
func PermutationP(values []float64, observed float64, statistic func([]float64) float64, permutations int, alpha float64, rng *rand.Rand) float64 {
	limit := int(alpha * float64(permutations+1))
	perm := slices.Clone(values)
	exceed := 0
	for range permutations {
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		if statistic(perm) >= observed {
			exceed++
			if exceed+1 > limit {
				return 1
			}
		}
	}
	return float64(exceed+1) / float64(permutations+1)
}
