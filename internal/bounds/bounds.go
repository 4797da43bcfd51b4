// Package bounds computes the most requests a second a load's design, or a target's own resources,
// let a target complete: Little's law applied to a run before its figures are read. A closed loop
// of N connections whose every request takes at least S completes at most N ÷ S a second; a pool
// of P threads each held S by a request, at most P ÷ S; C CPUs whose every request costs c of CPU
// time, at most C ÷ c; an open loop, at most the rate it offers. A figure at a bound of the
// design says what the design allowed, not what the target can: its capacity is decided by a
// run whose design bounds it above the target's own (more connections, or a search for the
// maximum rate). The functions are pure and know nothing of runs or files: the experiments'
// verdicts and a run's limits compute their bounds here alike.
package bounds

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind says whose the bound is: the run's design (the load it offers) or the target's own
// resources (its pool, its CPUs).
type Kind int

const (
	// None is no bound: a zero Bound, which every other is below.
	None Kind = iota
	// Design bounds are the load's: connections ÷ service time, an open loop's rate.
	Design
	// Own bounds are the target's: pool ÷ service time, CPUs ÷ CPU per request.
	Own
)

// Bound is a rate no figure of its run can pass, and the arithmetic that gives it.
type Bound struct {
	// Rate is in requests a second; +Inf for None.
	Rate float64
	Kind Kind
	// Why is the arithmetic in words: "256 connections ÷ 50 ms".
	Why string
}

// Unbounded is the bound of nothing known: every real bound is below it.
var Unbounded = Bound{Rate: math.Inf(1)}

// Known reports whether b bounds anything.
func (b Bound) Known() bool { return b.Kind != None && !math.IsInf(b.Rate, 1) }

// String is the bound with its arithmetic: "≤ 5,120 rps (256 connections ÷ 50 ms)".
func (b Bound) String() string {
	if !b.Known() {
		return "no bound"
	}
	return "≤ " + b.Plain()
}

// Plain is the bound's rate with its arithmetic, for "92% of …": "5,120 rps (256 connections ÷ 50 ms)".
func (b Bound) Plain() string {
	if !b.Known() {
		return "no bound"
	}
	return fmt.Sprintf("%s rps (%s)", Rate(b.Rate), b.Why)
}

// Connections is a closed loop's bound: n connections, each with one request at a time that
// takes at least service, complete at most n ÷ service a second. None when either is unknown.
func Connections(n int, service time.Duration) Bound {
	if n <= 0 || service <= 0 {
		return Unbounded
	}
	what := "connections"
	if n == 1 {
		what = "connection"
	}
	return Bound{Rate: float64(n) / service.Seconds(), Kind: Design, Why: fmt.Sprintf("%s %s ÷ %s", Rate(float64(n)), what, Duration(service))}
}

// Offered is an open loop's bound: it completes at most the rate it sends.
func Offered(rate float64) Bound {
	if rate <= 0 {
		return Unbounded
	}
	return Bound{Rate: rate, Kind: Design, Why: fmt.Sprintf("the %s rps the run offers", Rate(rate))}
}

// Pool is a thread pool's bound: size threads, each held at least service by its request,
// complete at most size ÷ service a second, whatever the load offers.
func Pool(size int, service time.Duration) Bound {
	if size <= 0 || service <= 0 {
		return Unbounded
	}
	return Bound{Rate: float64(size) / service.Seconds(), Kind: Own, Why: fmt.Sprintf("%s threads ÷ %s", Rate(float64(size)), Duration(service))}
}

// CPU is the CPUs' bound: cpus, each request costing perRequest of CPU time, complete at most
// cpus ÷ perRequest a second (if the cost per request stays what it was measured at).
func CPU(cpus float64, perRequest time.Duration) Bound {
	if cpus <= 0 || perRequest <= 0 {
		return Unbounded
	}
	what := "CPUs"
	if cpus == 1 {
		what = "CPU"
	}
	return Bound{Rate: cpus / perRequest.Seconds(), Kind: Own, Why: fmt.Sprintf("%s %s ÷ %s of CPU a request", strconv.FormatFloat(cpus, 'f', -1, 64), what, Duration(perRequest))}
}

// Lowest is the tightest of bs: the one a figure meets first. Unbounded when none is known.
func Lowest(bs ...Bound) Bound {
	low := Unbounded
	for _, b := range bs {
		if b.Known() && b.Rate < low.Rate {
			low = b
		}
	}
	return low
}

// Capacity is what one figure of a run says of its target's capacity: at least Measured, at most
// the lowest of Design (the load's bound) and Own (the lowest of the target's own: its pool, its
// CPUs).
type Capacity struct {
	Measured    float64
	Design, Own Bound
}

// Ceiling is the lowest bound of the run: no figure of it passes it.
func (c Capacity) Ceiling() Bound { return Lowest(c.Design, c.Own) }

// Held reports whether the run's design, not the target, bounds the figure: the design's bound
// lies below every bound of the target's own, and these are known (its CPUs' at least), so above
// Measured the target's capacity is unknown, and an order or a factor that needs it cannot show.
// Without the target's own bounds nothing says what held it: false.
func (c Capacity) Held() bool {
	return c.Design.Known() && c.Own.Known() && c.Design.Rate < c.Own.Rate
}

// Factors is the range of of ÷ to a run can show given its two figures and their ceilings: at
// least of's measured over to's ceiling, at most of's ceiling over to's measured. Lo is 0 and Hi
// +Inf where a ceiling is unknown.
func Factors(of, to Capacity) (lo, hi float64) {
	lo, hi = 0, math.Inf(1)
	if c := to.Ceiling(); c.Known() && c.Rate > 0 {
		lo = of.Measured / c.Rate
	}
	if c := of.Ceiling(); c.Known() && to.Measured > 0 {
		hi = c.Rate / to.Measured
	}
	return lo, hi
}

// Rate is a rate as the bounds write it: whole numbers with thousands separators, two figures
// below 10 (20, 4,000, 5,120, 0.25).
func Rate(v float64) string {
	if v < 10 && v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// Duration is a service time as the bounds write it: "50 ms", "5 s", "84 µs".
func Duration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'g', 3, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'g', 3, 64) + " µs"
}
