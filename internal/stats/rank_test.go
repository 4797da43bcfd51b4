package stats

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRanks(t *testing.T) {
	cases := []struct{ xs, want []float64 }{
		{[]float64{3, 1, 3, 2}, []float64{3.5, 1, 3.5, 2}},
		{[]float64{5, 5, 5}, []float64{2, 2, 2}},
		{[]float64{10, 20, 30}, []float64{1, 2, 3}},
		{nil, []float64{}},
	}
	for _, c := range cases {
		in := slices.Clone(c.xs)
		if got := Ranks(c.xs); !slices.Equal(got, c.want) || !slices.Equal(in, c.xs) {
			t.Errorf("Ranks(%v) = %v, want %v (input unchanged)", in, got, c.want)
		}
	}
}

// The permutation test of the difference of means between the first and the second half: a
// clean step of 5 against 5 is as extreme as 2 of the C(10, 5) = 252 orders, so about 0.8% of
// random orders reach it (p near 1/125 with 1999 orders); values with no step reach p = 1; and
// alpha stops the count early.
func TestPermutationP(t *testing.T) {
	halves := func(xs []float64) float64 {
		a, b := 0.0, 0.0
		for i, x := range xs {
			if i < len(xs)/2 {
				a += x
			} else {
				b += x
			}
		}
		return max(b-a, a-b)
	}
	step := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	rng := rand.New(rand.NewPCG(1, 2))
	p := PermutationP(step, halves(step), halves, 1999, 1, rng)
	if p < 0.004 || p > 0.014 {
		t.Errorf("step: p = %v, want about 2/252 = 0.0079", p)
	}
	if !slices.Equal(step, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("values changed: %v", step)
	}
	flat := []float64{1, 10, 2, 9, 3, 8, 4, 7, 5, 6}
	if p := PermutationP(flat, halves(flat), halves, 499, 1, rng); p < 0.5 {
		t.Errorf("no step: p = %v, want large", p)
	}
	if p := PermutationP(flat, halves(flat), halves, 499, 0.01, rng); p != 1 {
		t.Errorf("no step at alpha 0.01: p = %v, want 1 (stopped early)", p)
	}
	if p := PermutationP(step, 1e9, halves, 99, 0.05, rng); p != 0.01 {
		t.Errorf("nothing reaches the observed: p = %v, want 1/100", p)
	}
}
