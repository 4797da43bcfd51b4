// Package maxrate finds a target's maximum sustainable rate: the highest open-loop arrival rate at
// which a whole step of load meets a service-level objective (SLO). It ramps the rate up by
// doubling until a rate fails, then bisects between the last rate that met the SLO and the first
// that did not, down to a given resolution; the maximum and the rate above it are each confirmed by
// a vote of up to three steps. A bracket (an earlier search's boundary, or a ramp's: RampBracket) may replace the
// doubling. The search is a pure function of a Probe, which runs one step, so it is tested against
// a simulated target.
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
		return slo, errors.New(`is empty: give bounds such as 'p99<100ms,errors<0.1%'`)
	}
	for term := range strings.SplitSeq(text, ",") {
		m := sloTerm.FindStringSubmatch(term)
		if m == nil {
			return slo, fmt.Errorf("term %q: write p99<DURATION or errors<PERCENT%%, e.g. 'p99<100ms,errors<0.1%%'", strings.TrimSpace(term))
		}
		switch m[1] {
		case "p99":
			d, err := time.ParseDuration(m[2] + m[3])
			if err != nil || d <= 0 {
				return slo, fmt.Errorf("term %q: %q is not a positive duration (e.g. 100ms)", strings.TrimSpace(term), m[2]+m[3])
			}
			slo.P99 = d
		case "errors":
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil || m[3] != "%" || v <= 0 || v > 100 {
				return slo, fmt.Errorf("term %q: give errors as a percentage above 0, e.g. errors<0.1%%", strings.TrimSpace(term))
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
	// Unanswered says ErrorRatio is the share of the requests due that were never answered (every
	// in-flight slot taken, they waited), more than the errors' share of those sent.
	Unanswered bool
	// GeneratorLimited says the generator could not send this rate on time: the step says nothing
	// about the target, and no higher rate can be measured on this machine.
	GeneratorLimited bool
	// Failed says why the step did not meet the SLO; empty when it did.
	Failed string
	// Died says what became of the target, which stopped during the step (out of memory,
	// typically): the rate fails without a vote, for a vote would only kill it again.
	Died string
}

// Judge fills in s.Failed against slo.
func (slo SLO) Judge(s *Step) {
	var why []string
	if slo.P99 > 0 && s.P99 >= slo.P99 {
		why = append(why, fmt.Sprintf("p99 %s ≥ %s", s.P99.Round(100*time.Microsecond), slo.P99))
	}
	if slo.MaxErrors >= 0 && s.ErrorRatio >= slo.MaxErrors {
		e := fmt.Sprintf("errors %.3f%% ≥ %.3f%%", 100*s.ErrorRatio, 100*slo.MaxErrors)
		if s.Unanswered {
			e += " (requests due and never answered: every in-flight slot was taken)"
		}
		why = append(why, e)
	}
	s.Failed = strings.Join(why, ", ")
}

// Sealed says a step of due requests has failed slo whatever its remaining seconds bring, by
// what it measured so far: at least slow of its successes took slo's p99 or longer, and errors
// of its requests failed. Its p99 is taken over at most due successes and its error ratio over at
// most due requests, so twice the share either bound allows, of due, fails it for good (twice,
// so that no percentile's rounding decides): the step need not overload the target on.
func (slo SLO) Sealed(slow, errors int64, due float64) bool {
	const margin = 2
	return slo.P99 > 0 && float64(slow) >= margin*0.01*due ||
		slo.MaxErrors >= 0 && errors > 0 && float64(errors) >= margin*slo.MaxErrors*due
}

// Probe loads the target at rate for one step and reports what happened.
type Probe func(ctx context.Context, rate int) (Step, error)

// Config bounds the search.
type Config struct {
	Start int // the first rate tried
	// Resolution is the precision of the answer: bisection stops when the last rate that met the
	// SLO and the first that did not are this close. Repeated searches land within it of each other
	// when the target behaves the same.
	Resolution Resolution
	Limit      int // no rate above this is tried
	// Bracket, when set, is where an earlier search (Result.Boundary) or a ramp (RampBracket)
	// put the boundary: the bisection starts between its bounds instead of after the doubling.
	Bracket Bracket
	// LatencyAt are the shares of the maximum found at which a step each measures the latency a
	// user sees with headroom, once the search is over; none when empty.
	LatencyAt LatencyAt
}

// LatencyAt are percentages of a maximum (50 is half of it), ascending, each above 0 and below
// 100; a step at each costs a search as much as a step near its boundary, so they are measured
// only when asked for.
type LatencyAt []float64

// ParseLatencyAt reads "50%,75%,90%"; empty text is none.
func ParseLatencyAt(text string) (LatencyAt, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var out LatencyAt
	for term := range strings.SplitSeq(text, ",") {
		term = strings.TrimSpace(term)
		pct, ok := strings.CutSuffix(term, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if !ok || err != nil || !(v > 0 && v < 100) {
			return nil, fmt.Errorf("term %q: give percentages of the maximum above 0%% and below 100%%, e.g. 50%%,75%%,90%%", term)
		}
		if len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("term %q: give each percentage once, in ascending order, e.g. 50%%,75%%,90%%", term)
		}
		out = append(out, v)
	}
	return out, nil
}

// String is the percentages as ParseLatencyAt reads them: "50%,75%,90%"; empty for none.
func (l LatencyAt) String() string {
	terms := make([]string, len(l))
	for i, v := range l {
		terms[i] = strconv.FormatFloat(v, 'f', -1, 64) + "%"
	}
	return strings.Join(terms, ",")
}

// Rates are the rates of the steps at each percentage of maximum, at least 1 rps each.
func (l LatencyAt) Rates(maximum int) []int {
	out := make([]int, len(l))
	for i, v := range l {
		out[i] = max(1, int(v/100*float64(maximum)))
	}
	return out
}

// Bracket is where the boundary lies, as an earlier search (Result.Boundary) or a ramp
// (RampBracket) found it: constant-rate steps search between Low and High. The zero Bracket is
// none.
type Bracket struct{ Low, High int }

// Resolution is a width in rps, or a share of the rate. A share suits any target: a runtime's
// capacity moves by several percent from one run to the next (the median of three searches of
// spring-mvc-platform: 3500 to 3750 rps over five runs), so a fixed 25 rps is noise at 3000 rps
// and coarse at 100.
type Resolution struct {
	RPS     int
	Percent float64
}

// ParseResolution reads "5%" or "200" (rps).
func ParseResolution(text string) (Resolution, error) {
	text = strings.TrimSpace(text)
	bad := errors.New("give a percentage between 0 and 100 (e.g. 5%) or a number of rps (e.g. 200)")
	if pct, ok := strings.CutSuffix(text, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || !(v > 0 && v < 100) {
			return Resolution{}, bad
		}
		return Resolution{Percent: v}, nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(text, "rps")))
	if err != nil || v < 1 {
		return Resolution{}, bad
	}
	return Resolution{RPS: v}, nil
}

// At is the width allowed between a rate that met the SLO and one that did not, near rate; at
// least 1 rps.
func (r Resolution) At(rate int) int {
	if r.Percent > 0 {
		return max(1, int(r.Percent/100*float64(rate)))
	}
	return max(1, r.RPS)
}

func (r Resolution) String() string {
	if r.Percent > 0 {
		return strconv.FormatFloat(r.Percent, 'f', -1, 64) + "%"
	}
	return fmt.Sprintf("%d rps", r.RPS)
}

// Result is the search's outcome.
type Result struct {
	// Max is the highest rate that met the SLO in two whole steps before failing two; 0 when none did.
	Max int
	// FirstFailed is the lowest rate that failed two steps (0: none failed up to Limit).
	FirstFailed int
	// GeneratorLimit is the lowest rate the generator could not send on time; 0 when it sent
	// every rate (GeneratorLimited).
	GeneratorLimit int
	// AtLimit: Max is the search's Limit, every rate it may ask having met the SLO; the
	// target's maximum is at least it, and was not measured.
	AtLimit bool
	// Steps are every step run, in order.
	Steps []Step
	// Bracket is the bracket the search started from (Config.Bracket); zero when it doubled from Start.
	Bracket Bracket
	// Fractions are the steps at Config.LatencyAt's shares of Max: the latency a user sees with
	// headroom.
	Fractions []Step
}

// GeneratorLimited says the generator could not send a rate on time: the target's maximum is at
// least Max, which may have passed once only (a rate met before the generator fell short ends the
// search unconfirmed), and rates from GeneratorLimit up were not measured.
func (r Result) GeneratorLimited() bool { return r.GeneratorLimit > 0 }

// Bounded says Max is a lower bound of the target's maximum, not the maximum: the generator
// could not send more, or the search could not ask more.
func (r Result) Bounded() bool { return r.GeneratorLimited() || r.AtLimit }

// Boundary is where the search found the SLO's boundary: its maximum and the first rate failing,
// each confirmed by vote; zero when it found no such pair (no maximum, nothing failed, or the
// generator stopped it short). A later search of the target may start from it (Config.Bracket).
func (r Result) Boundary() Bracket {
	if r.GeneratorLimited() || r.Max == 0 || r.FirstFailed <= r.Max {
		return Bracket{}
	}
	return Bracket{Low: r.Max, High: r.FirstFailed}
}

// Outcome is one target's search, or why it could not run.
type Outcome struct {
	Target string
	Search int // which of the target's searches, from 1
	Result
	// Failed says why the search could not run (the target did not start or failed verification).
	Failed string
	// Took is how long the search took, its container's start and warm-up included.
	Took time.Duration
}

// Find searches for the maximum sustainable rate. A single step is weak evidence either way: a
// quiet moment lets a rate above the boundary pass, a collector pause or a neighbour's burst makes
// one below it fail. So the maximum is judged by votes: a rate meets the SLO when two of its steps
// do before two fail (at most three steps), and the search ends on a rate that won its vote with
// the rate above it, within the resolution, losing its own. The doubling runs one step per rate; the
// bisection votes at once on a rate whose step passed; a rate whose step failed is voted on only
// when it ends up just above the maximum (boundary).
//
// With cfg.Bracket, the doubling is skipped: its Low is taken as passing and its High as failing,
// each on the word of whatever found them until steps decide. High is stepped first: failing, the
// bisection runs between Low and High, and High is voted on when the bisection ends against it;
// passing, it is voted on at once and the search goes on above it by the bracket's width, then
// by twice, four times it, … Low is confirmed as any maximum is (failing, the bisection goes on
// below it). So a wrong bracket costs steps, never the answer, and one wholly below the boundary
// costs none between Low and High.
func Find(ctx context.Context, cfg Config, slo SLO, probe Probe) (Result, error) {
	if cfg.Start < 1 || cfg.Limit < cfg.Start {
		return Result{}, fmt.Errorf("search needs 1 ≤ start (%d) ≤ limit (%d)", cfg.Start, cfg.Limit)
	}
	b := cfg.Bracket
	if b != (Bracket{}) && (b.Low < 1 || b.High <= b.Low || b.High > cfg.Limit) {
		return Result{}, fmt.Errorf("bracket [%d, %d] needs 1 ≤ low < high ≤ limit (%d)", b.Low, b.High, cfg.Limit)
	}
	s := &search{ctx: ctx, cfg: cfg, slo: slo, probe: probe, res: Result{Bracket: b}, tally: map[int][2]int{}}
	good, err := s.boundary()
	if err != nil || s.short {
		return s.stopped(err, good)
	}
	s.res.Max, s.res.AtLimit = good, good == cfg.Limit
	return finish(ctx, s.res, cfg.LatencyAt, probe, slo)
}

// search is one Find under way: the steps run so far and the votes they cast.
type search struct {
	ctx   context.Context
	cfg   Config
	slo   SLO
	probe Probe
	res   Result
	tally map[int][2]int // rate → steps that met the SLO, steps that did not
	// short says the generator just fell short after a rate up to its limit met the SLO: the
	// search ends, its maximum at least that rate. Before any did (a bracket's first step the
	// generator could not send), the search goes on below the limit.
	short bool
}

// unsendable says the generator could not send rate on time, or a lower one. It bounds the
// search from above as a failing rate does, without being one.
func (s *search) unsendable(rate int) bool {
	return s.res.GeneratorLimited() && rate >= s.res.GeneratorLimit
}

// metBelow is the highest rate below limit that met the SLO as a search the generator ended
// counts it (Met); 0 when none did.
func (s *search) metBelow(limit int) int {
	best := 0
	for rate, t := range s.tally {
		if rate < limit && rate > best && Met(t[0], t[1], true) {
			best = rate
		}
	}
	return best
}

// step runs one step at rate and counts its verdict.
func (s *search) step(rate int) error {
	st, err := s.probe(s.ctx, rate)
	if err != nil {
		return err
	}
	st.Rate = rate
	s.slo.Judge(&st)
	if st.Died != "" {
		st.Failed = "the target died: " + st.Died
	}
	s.res.Steps = append(s.res.Steps, st)
	t := s.tally[rate]
	switch {
	case st.Died != "":
		t[1] += 2
	case st.GeneratorLimited:
		if !s.unsendable(rate) {
			s.res.GeneratorLimit = rate
		}
		s.short = s.metBelow(s.res.GeneratorLimit+1) > 0
	case st.Failed != "":
		t[1]++
	default:
		t[0]++
	}
	s.tally[rate] = t
	return nil
}

// vote runs steps at rate until two agree, counting the steps it already had; a rate the
// generator could not send loses it.
func (s *search) vote(rate int) (bool, error) {
	for {
		t := s.tally[rate]
		if t[0] >= 2 || t[1] >= 2 {
			if t[1] >= 2 && (s.res.FirstFailed == 0 || rate < s.res.FirstFailed) {
				s.res.FirstFailed = rate
			}
			return t[0] >= 2, nil
		}
		if s.unsendable(rate) {
			return false, nil
		}
		if err := s.step(rate); err != nil {
			return false, err
		}
	}
}

// double runs one step a rate from rate up, each rate by stride above the last and the stride
// doubling, until a rate fails a step or cannot be sent (bad) or the limit passes (bad 0); good
// is the last rate that passed, the one before rate when none does. From the start, the stride
// is the rate: the rate doubles. A failing step is not voted on here (boundary says when it is).
func (s *search) double(rate, good, stride int) (int, int, error) {
	for ; ; rate, stride = min(rate+stride, s.cfg.Limit), 2*stride {
		if s.unsendable(rate) {
			return good, s.res.GeneratorLimit, nil
		}
		if err := s.step(rate); err != nil || s.short {
			return good, 0, err
		}
		if s.unsendable(rate) || s.tally[rate][1] > 0 {
			return good, rate, nil
		}
		good = rate
		if rate == s.cfg.Limit {
			return good, 0, nil
		}
	}
}

// boundary is the maximum, confirmed by vote (0: none met the SLO), or, when an error or the
// generator's limit (short) stopped the search, the last good rate so far.
//
// A rate the bisection tries that meets the SLO is voted on at once, its second step going on from
// the first (no warm-up, no recovery); one that fails a step moves the search below it on that step alone,
// and is voted on only when it ends up as the rate just above the maximum: a failing step costs
// a recovery and a warm-up besides, and a vote on a rate far above the boundary decides
// nothing. Both ends are confirmed before the search ends, so a step's bad luck costs steps,
// never the answer: the maximum won its vote and the rate above it lost its own.
func (s *search) boundary() (int, error) {
	good, bad := s.cfg.Bracket.Low, s.cfg.Bracket.High
	var err error
	if s.cfg.Bracket == (Bracket{}) {
		if good, bad, err = s.double(s.cfg.Start, 0, s.cfg.Start); err != nil || s.short {
			return good, err
		}
	} else {
		// High first: in four of eight make runs, spring-mvc-virtual's ramp broke at 2,750–3,250
		// rps, where steps then met 4,388–4,437 (in the ramp, its in-flight requests jumped from
		// about 130 to 900–1,700 while it answered 1,900–3,200 a second); bisecting below High
		// first cost four steps, all passing.
		ok, err := s.try(bad)
		if err != nil || s.short {
			return good, err
		}
		if ok {
			if good, bad, err = s.above(good, bad); err != nil || s.short {
				return good, err
			}
		}
	}
	for {
		if good, bad, err = s.bisect(good, bad); err != nil || s.short {
			return good, err
		}
		if good > 0 {
			// A rate the doubling passed once, or a bracket's Low, is confirmed here: by a vote
			// even when its first step fails, as its earlier pass or the bracket's finder says it
			// met the SLO (an even search, from 2,500–3,000, failing 2,500 once by chance,
			// searched below it: 11 steps where a vote took 5, in a simulation).
			ok, err := s.vote(good)
			if err != nil || s.short {
				return good, err
			}
			if !ok {
				bad, good = good, notFailedBelow(s.tally, good)
				continue
			}
		}
		if bad == 0 || s.unsendable(bad) {
			return good, nil
		}
		ok, err := s.vote(bad)
		if err != nil || s.short {
			return good, err
		}
		if !ok {
			return good, nil
		}
		// The rate above the maximum won its vote after all: the boundary lies above it.
		if good, bad, err = s.above(good, bad); err != nil || s.short {
			return good, err
		}
	}
}

// try steps rate once when no step has tried it yet and says whether it met the SLO, voting on
// it at once when it did; a rate tried before is voted on. A rate the generator could not send
// fails.
func (s *search) try(rate int) (bool, error) {
	if t := s.tally[rate]; t[0]+t[1] > 0 || s.unsendable(rate) {
		return s.vote(rate)
	}
	if err := s.step(rate); err != nil || s.short || s.unsendable(rate) || s.tally[rate][1] > 0 {
		return false, err
	}
	return s.vote(rate)
}

// bisect narrows the last good rate (0: none yet) and the first bad one down to the resolution.
func (s *search) bisect(good, bad int) (int, int, error) {
	for bad > 0 && bad-good > s.cfg.Resolution.At(good) {
		mid := good + (bad-good)/2
		ok, err := s.try(mid)
		if err != nil || s.short {
			return good, bad, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, bad, nil
}

// above goes on above bad, a rate that won its vote (good, before it, is passed over): to the
// lowest rate above it that failed a step, if any did, or by doubling from it. Above it by the
// bracket's width first, then by twice, four times that: a boundary that moved since an earlier
// search, or lies above a ramp's first failing second, moved a little more often than a lot.
// Doubling the rate from there, fastify, from 10000–12000, met 12000 and then failed 24000 with
// 43% errors; spring-mvc-virtual, from a ramp's 3421–3750, met 3750 and 4079, then failed 8158
// with 61%.
func (s *search) above(good, bad int) (int, int, error) {
	width := max(1, bad-good)
	good = bad
	if next := failedAbove(s.tally, good); next > 0 {
		return good, next, nil
	}
	if s.res.GeneratorLimited() && s.res.GeneratorLimit > good {
		return good, s.res.GeneratorLimit, nil
	}
	if good >= s.cfg.Limit {
		return good, 0, nil
	}
	return s.double(min(good+width, s.cfg.Limit), good, 2*width)
}

// stopped ends a search an error or the generator's limit stopped short, where good may not be
// confirmed: a bracket's Low no step of this search passed is not reported at all, and the
// generator's limit ends it at the highest rate met below or at it.
func (s *search) stopped(err error, good int) (Result, error) {
	if s.short {
		good = s.metBelow(s.res.GeneratorLimit + 1)
	} else if s.tally[good][0] == 0 {
		good = notFailedBelow(s.tally, good)
	}
	s.res.Max = good
	return s.res, err
}

// Met says a rate met the SLO in met steps and failed it in failed: it won its vote (two met before
// two failed) or, in a search the generator ended before the vote could (generatorLimited), it met
// it once and never failed: unconfirmed, the maximum is at least it. The summary of a results
// file counts a search's steps by the same rule.
func Met(met, failed int, generatorLimited bool) bool {
	return met >= 2 && failed < 2 || generatorLimited && met >= 1 && failed == 0
}

// failedAbove is the lowest rate above limit that failed a step and did not win its vote; 0 when
// there is none.
func failedAbove(tally map[int][2]int, limit int) int {
	best := 0
	for rate, t := range tally {
		if rate > limit && (best == 0 || rate < best) && t[1] > 0 && t[0] < 2 {
			best = rate
		}
	}
	return best
}

// notFailedBelow is the highest rate below limit that was tried and not voted down; 0 when there is none.
func notFailedBelow(tally map[int][2]int, limit int) int {
	best := 0
	for rate, t := range tally {
		if rate < limit && rate > best && t[1] < 2 && t[0] > 0 {
			best = rate
		}
	}
	return best
}

// finish measures the latency at the shares at of the maximum found.
func finish(ctx context.Context, res Result, at LatencyAt, probe Probe, slo SLO) (Result, error) {
	if res.Max == 0 {
		return res, nil
	}
	for _, rate := range at.Rates(res.Max) {
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
