// Package arrival names an open loop's arrival processes: how its requests are spread in time at
// a rate. The load engine draws them (its pacers), rows record them (results) and the arrival
// check tests the sends against them (sampling): one registry of their names.
package arrival

import "fmt"

// Process names an arrival process.
type Process string

const (
	// Uniform spaces requests evenly: request i is due (i+1)/rate after the start. The default.
	Uniform Process = "uniform"
	// Poisson draws the gaps between requests from an exponential distribution of mean 1/rate,
	// as independent users arrive: the same mean rate queues more than even spacing does.
	Poisson Process = "poisson"
)

// All are the arrival processes, the default first.
var All = []Process{Uniform, Poisson}

// Check refuses a name that is no arrival process; empty is the default.
func Check(p Process) error {
	switch p {
	case "", Uniform, Poisson:
		return nil
	}
	return fmt.Errorf("unknown arrival process %q: use uniform or poisson", p)
}

// Or is p, or the default (Uniform) when p is empty: an older row, or a closed loop, which no
// process paces.
func (p Process) Or() Process {
	if p == "" {
		return Uniform
	}
	return p
}
