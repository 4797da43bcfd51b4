// Package maxrate finds a target's maximum sustainable rate: the highest open-loop arrival rate at
// which a whole step of load meets a service-level objective (SLO). It ramps the rate up by
// doubling until a step fails, then bisects between the last step that met the SLO and the first
// that did not, down to a given resolution. The search is a pure function of a Probe, which runs
// one step, so it is tested against a simulated target.
package maxrate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SLO is what every step must meet: its p99 latency below P99, its share of errors below
// MaxErrors. Either bound may be absent (zero P99, negative MaxErrors).
type SLO struct {
	P99       time.Duration
	MaxErrors float64 // a ratio: 0.001 is 0.1%
	text      string
}

func (s SLO) String() string { return s.text }

var sloTerm = regexp.MustCompile(`^\s*(p99|errors)\s*<\s*([0-9.]+)\s*(%|[a-zµ]+)?\s*$`)

// ParseSLO reads an SLO such as "p99<100ms,errors<0.1%".
func ParseSLO(text string) (SLO, error) {
	slo := SLO{MaxErrors: -1, text: strings.ReplaceAll(text, " ", "")}
	if strings.TrimSpace(text) == "" {
		return slo, errors.New(`--slo is empty: give bounds such as 'p99<100ms,errors<0.1%'`)
	}
	for term := range strings.SplitSeq(text, ",") {
		m := sloTerm.FindStringSubmatch(term)
		if m == nil {
			return slo, fmt.Errorf("--slo term %q: write p99<DURATION or errors<PERCENT%%, e.g. 'p99<100ms,errors<0.1%%'", strings.TrimSpace(term))
		}
		switch m[1] {
		case "p99":
			d, err := time.ParseDuration(m[2] + m[3])
			if err != nil || d <= 0 {
				return slo, fmt.Errorf("--slo term %q: %q is not a positive duration (e.g. 100ms)", strings.TrimSpace(term), m[2]+m[3])
			}
			slo.P99 = d
		case "errors":
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil || m[3] != "%" || v <= 0 || v > 100 {
				return slo, fmt.Errorf("--slo term %q: give errors as a percentage above 0, e.g. errors<0.1%%", strings.TrimSpace(term))
			}
			slo.MaxErrors = v / 100
		}
	}
	return slo, nil
}

// Step is the outcome of loading a target at one rate for a whole step.
type Step struct {
	Rate       int
	P50, P99   time.Duration
	Throughput float64 // successes per second
	ErrorRatio float64
	// GeneratorLimited says the generator could not send this rate on time: the step says nothing
	// about the target, and no higher rate can be measured on this machine.
	GeneratorLimited bool
	// Failed says why the step did not meet the SLO; empty when it did.
	Failed string
}

// Judge fills in s.Failed against slo.
func (slo SLO) Judge(s *Step) {
	var why []string
	if slo.P99 > 0 && s.P99 >= slo.P99 {
		why = append(why, fmt.Sprintf("p99 %s ≥ %s", s.P99.Round(100*time.Microsecond), slo.P99))
	}
	if slo.MaxErrors >= 0 && s.ErrorRatio >= slo.MaxErrors {
		why = append(why, fmt.Sprintf("errors %.3f%% ≥ %.3f%%", 100*s.ErrorRatio, 100*slo.MaxErrors))
	}
	s.Failed = strings.Join(why, ", ")
}

// Probe loads the target at rate for one step and reports what happened.
type Probe func(ctx context.Context, rate int) (Step, error)

// Config bounds the search.
type Config struct {
	Start int // the first rate tried
	// Resolution is the precision of the answer: bisection stops when the last rate that met the
	// SLO and the first that did not are this close. Repeated searches land within it of each other
	// when the target behaves the same.
	Resolution int
	Limit      int // no rate above this is tried
}

// Result is the search's outcome.
type Result struct {
	// Max is the highest rate whose whole step met the SLO, twice; 0 when none did.
	Max int
	// FirstFailed is the lowest rate seen failing (0: none failed up to Limit).
	FirstFailed int
	// GeneratorLimited says the search stopped because the generator could not send a rate on
	// time: Max passed once but is not confirmed, and higher rates were not measured.
	GeneratorLimited bool
	// Steps are every step run, in order.
	Steps []Step
	// Fractions are steps at 50%, 75% and 90% of Max: the latency a user sees with headroom.
	Fractions []Step
}

// Outcome is one target's search, or why it could not run.
type Outcome struct {
	Target string
	Result
	// Failed says why the search could not run (the target did not start or failed verification).
	Failed string
}

// Fractions of the maximum at which latency is reported.
var Fractions = []float64{0.50, 0.75, 0.90}

// Find searches for the maximum sustainable rate. The rate it reports met the SLO twice: a step
// that passes by luck (a quiet moment, a collection that fell just after it) is run again before it
// is believed, and when the repeat fails the search goes on below it.
func Find(ctx context.Context, cfg Config, slo SLO, probe Probe) (Result, error) {
	if cfg.Start < 1 || cfg.Resolution < 1 || cfg.Limit < cfg.Start {
		return Result{}, fmt.Errorf("search needs 1 ≤ start (%d) ≤ limit (%d) and a resolution ≥ 1 (%d)", cfg.Start, cfg.Limit, cfg.Resolution)
	}
	var res Result
	step := func(rate int) (bool, error) {
		s, err := probe(ctx, rate)
		if err != nil {
			return false, err
		}
		s.Rate = rate
		slo.Judge(&s)
		res.Steps = append(res.Steps, s)
		if s.GeneratorLimited {
			res.GeneratorLimited = true
			return false, nil
		}
		if s.Failed != "" {
			if res.FirstFailed == 0 || rate < res.FirstFailed {
				res.FirstFailed = rate
			}
			return false, nil
		}
		return true, nil
	}

	// Ramp: double until a step fails or the limit is met (then bad stays 0: nothing failed).
	good, bad := 0, 0
	for rate := cfg.Start; ; rate = min(2*rate, cfg.Limit) {
		ok, err := step(rate)
		if err != nil || res.GeneratorLimited {
			res.Max = good
			return res, err
		}
		if !ok {
			bad = rate
			break
		}
		good = rate
		if rate == cfg.Limit {
			break
		}
	}
	for {
		// Bisect between the last good rate (0: none yet) and the first bad one.
		for bad > 0 && bad-good > cfg.Resolution {
			mid := good + (bad-good)/2
			ok, err := step(mid)
			if err != nil || res.GeneratorLimited {
				res.Max = good
				return res, err
			}
			if ok {
				good = mid
			} else {
				bad = mid
			}
		}
		if good == 0 {
			break
		}
		ok, err := step(good) // the repeat
		if err != nil || res.GeneratorLimited {
			res.Max = good // passed once; GeneratorLimited says the search stopped short
			return res, err
		}
		if ok {
			break
		}
		bad, good = good, passedBelow(res.Steps, good)
	}
	res.Max = good
	return finish(ctx, res, probe, slo)
}

// passedBelow is the highest rate below limit at which no step failed; 0 when there is none.
func passedBelow(steps []Step, limit int) int {
	best := 0
	for _, s := range steps {
		if s.Rate >= limit || s.Rate <= best {
			continue
		}
		clean := true
		for _, o := range steps {
			if o.Rate == s.Rate && (o.Failed != "" || o.GeneratorLimited) {
				clean = false
			}
		}
		if clean {
			best = s.Rate
		}
	}
	return best
}

// finish measures the latency at fractions of the maximum found.
func finish(ctx context.Context, res Result, probe Probe, slo SLO) (Result, error) {
	if res.Max == 0 {
		return res, nil
	}
	for _, f := range Fractions {
		rate := max(1, int(f*float64(res.Max)))
		s, err := probe(ctx, rate)
		if err != nil {
			return res, err
		}
		s.Rate = rate
		slo.Judge(&s)
		res.Fractions = append(res.Fractions, s)
	}
	return res, nil
}
