package flame

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Share is a function's part of a profile: the table beside the flame graph.
type Share struct {
	Frame string  // the function's frame, as in the stacks (Label shows it)
	Self  float64 // share of samples with it as the leaf, running its own code: 0..1
	Total float64 // share of samples with it anywhere on the stack, once per stack if recursive: 0..1
}

// Top is the n functions with the largest self share, then the largest total share, then by
// name; every function when n <= 0.
func (p Profile) Top(n int) []Share {
	fns := p.functions()
	top := make([]Share, 0, len(fns))
	for f, c := range fns {
		top = append(top, Share{Frame: f, Self: share(c.self, p.Total), Total: share(c.total, p.Total)})
	}
	slices.SortFunc(top, func(a, b Share) int {
		return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(b.Total, a.Total), strings.Compare(a.Frame, b.Frame))
	})
	if n > 0 && len(top) > n {
		top = top[:n]
	}
	return top
}

// Change is how a function's part of the samples moved from one profile to another.
type Change struct {
	Frame              string  // the function's frame, as in the stacks (Label shows it)
	Old, New           float64 // self share, 0..1: 0 where the function is absent
	OldTotal, NewTotal float64 // total (inclusive) share, 0..1: 0 where the function is absent
}

// Delta is the change of the self share, New − Old.
func (c Change) Delta() float64 { return c.New - c.Old }

// Diff is the n functions whose self share changed most from old to new, either way: ordered by
// the size of the change, then by name; every changed function when n <= 0. A function whose
// self share did not change is left out, so two equal profiles have no changes. Shares, not
// sample counts, are compared: two runs rarely sample for exactly as long.
func Diff(old, new Profile, n int) []Change {
	before, after := old.functions(), new.functions()
	var changes []Change
	add := func(f string) {
		b, a := before[f], after[f]
		c := Change{Frame: f, Old: share(b.self, old.Total), New: share(a.self, new.Total),
			OldTotal: share(b.total, old.Total), NewTotal: share(a.total, new.Total)}
		if c.Old != c.New {
			changes = append(changes, c)
		}
	}
	for f := range before {
		add(f)
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			add(f)
		}
	}
	slices.SortFunc(changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Delta()), math.Abs(a.Delta())), strings.Compare(a.Frame, b.Frame))
	})
	if n > 0 && len(changes) > n {
		changes = changes[:n]
	}
	return changes
}

// samples are a function's samples: as the leaf (self), and anywhere on the stack (total).
type samples struct{ self, total int64 }

// functions counts each frame's self and total samples over p's stacks.
func (p Profile) functions() map[string]samples {
	fns := map[string]samples{}
	seen := map[string]bool{} // the frames of one stack: a recursive function counts once
	for stack, n := range p.Stacks {
		clear(seen)
		rest := stack
		for rest != "" {
			var f string
			f, rest, _ = strings.Cut(rest, ";")
			if seen[f] {
				continue
			}
			seen[f] = true
			c := fns[f]
			c.total += n
			fns[f] = c
		}
		leaf := stack[strings.LastIndexByte(stack, ';')+1:]
		c := fns[leaf]
		c.self += n
		fns[leaf] = c
	}
	return fns
}
