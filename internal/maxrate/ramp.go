package maxrate

import (
	"fmt"
	"math"
	"strings"
)

// Method is how a search finds where to bisect: Steps doubles constant-rate steps from the start
// rate; Ramp first loads one ramp through the rates and reads its seconds (ReadRamp), doubling
// only when the ramp says nothing. Both alternates them by search, for comparing them in one run.
type Method string

const (
	Steps Method = "steps"
	Ramp  Method = "ramp"
	Both  Method = "both"
)

// Methods are the values ParseMethod takes.
var Methods = []Method{Steps, Ramp, Both}

// ParseMethod reads a Method; empty is Steps.
func ParseMethod(text string) (Method, error) {
	switch m := Method(strings.TrimSpace(text)); m {
	case "":
		return Steps, nil
	case Steps, Ramp, Both:
		return m, nil
	}
	return "", fmt.Errorf("%q: one of steps, ramp, both", text)
}

// Of is the method of a target's search number search (from 1): Both alternates, steps first.
func (m Method) Of(search int) Method {
	if m != Both {
		return m
	}
	if search%2 == 1 {
		return Steps
	}
	return Ramp
}

// Bracket is where the boundary lies, as a ramp or an earlier search found it: constant-rate steps
// search between Low and High. The zero Bracket is none.
type Bracket struct{ Low, High int }

// RampBreak is how many seconds in a row must fail the SLO for a ramp to have broken it: one
// failing second is a pause or a burst, not the boundary.
const RampBreak = 3

// rampMargin widens the bracket on both sides of the ramp's last passing rate. A ramp errs both
// ways: its per-second p99 lags the queue growing behind it, so it breaks above the boundary, and
// a runtime meets each rate for the first time, cold (see bench.MaxSearch.StepWarmup), so it may
// break below it.
const rampMargin = 0.5

// RampBroken says the last RampBreak seconds of a ramp (each a Step at that second's rate,
// judged or not) all fail slo: the ramp has found the boundary and need not load the target on.
func RampBroken(seconds []Step, slo SLO) bool {
	if len(seconds) < RampBreak {
		return false
	}
	for _, s := range seconds[len(seconds)-RampBreak:] {
		if slo.Judge(&s); s.Failed == "" {
			return false
		}
	}
	return true
}

// ReadRamp reads a ramp's seconds, each a Step at that second's rate: the knee is the rate of
// the last second meeting slo before the first RampBreak seconds in a row that fail it, and the
// bracket is the knee ± rampMargin, its High at most limit. It returns the zero Bracket and why
// when the ramp says nothing: no such break (the boundary lies above the ramp, or the seconds
// fail here and there), or one before any second met the SLO (the first rate is already too fast,
// or the ramp's start was a transient).
func ReadRamp(seconds []Step, slo SLO, limit int) (Bracket, string) {
	failedRun, lastMet := 0, -1
	for i, s := range seconds {
		if slo.Judge(&s); s.Failed == "" {
			failedRun, lastMet = 0, i
			continue
		}
		if failedRun++; failedRun < RampBreak {
			continue
		}
		if lastMet < 0 {
			return Bracket{}, fmt.Sprintf("its first %d seconds failed the SLO (%s)", RampBreak, s.Failed)
		}
		knee := float64(seconds[lastMet].Rate)
		b := Bracket{Low: max(1, int(knee*(1-rampMargin))), High: min(limit, int(math.Ceil(knee*(1+rampMargin))))}
		if b.High <= b.Low {
			return Bracket{}, fmt.Sprintf("its knee at %.0f rps leaves no bracket below the limit of %d rps", knee, limit)
		}
		return b, ""
	}
	top := 0
	if len(seconds) > 0 {
		top = seconds[len(seconds)-1].Rate
	}
	return Bracket{}, fmt.Sprintf("no %d seconds in a row failed the SLO up to %d rps", RampBreak, top)
}
