package experiment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/iotbench/iotbench/internal/bounds"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/summary"
)

// Verdict is what a measurement, or the source's own figures, say of a claim. The rule of each is
// stated once for readers in Legend; Check enforces it.
type Verdict string

const (
	// Holds: every cell valid, at least MinTrials valid trials a side, and the test at 95%
	// confirms the claim (a ratio: the published factor inside the Mann–Whitney interval, which
	// excludes 1 on its side; an order: each pair significant in the claimed direction; a tie:
	// the interval within ±10%).
	Holds Verdict = "holds"
	// Direction: as Holds, but the published factor lies outside the interval on the same side
	// of 1: the claimed direction is confirmed, its size is not.
	Direction Verdict = "holds in direction, not in size"
	// DoesNotHold: on the same footing, the test contradicts the claim: the interval excludes
	// the published factor and does not confirm its direction; a pair is significant the other
	// way; a tie's interval lies outside ±10%.
	DoesNotHold Verdict = "does not hold"
	// Inconclusive: the cells are invalid, too few trials are valid, or the test cannot tell;
	// the finding says what would decide it.
	Inconclusive Verdict = "inconclusive"
	// Impossible: the source's own figures break Little's law or the core-count bound; decided
	// from the source alone, on any host.
	Impossible Verdict = "impossible as published"
	// LargerHost: this host cannot give the run what it needs (target CPUs, a generator that is
	// not saturated); the finding names the host that can, and the command.
	LargerHost Verdict = "needs a larger host"
	// NotMeasured: the run holds no rows, is not in experiments.yaml yet, or does not load a
	// target of the claim.
	NotMeasured Verdict = "not measured"
)

// MinTrials is the fewest valid trials a side on which a verdict of holds or does not hold can
// rest: with 3 against 3 the two-sided Mann–Whitney test cannot reach p < 0.05 (its smallest p
// is 2/20 = 0.1); with 4 against 4 it can (2/70 = 0.029).
var MinTrials = stats.TrialsToDiffer(stats.DefaultAlpha)

// countShare is the count resolution, as a share of the throughput, from which a ratio says its
// interval was widened to it (results' count warning's threshold).
const countShare = 0.02

// saturated is the generator's share of its CPUs at which a generator that fell behind is taken
// as short of capacity (a larger host decides) rather than disturbed (a quiet rerun decides).
const saturated = 90.0

// Finding is one claim checked in one run, or against the source's own figures (Run empty).
type Finding struct {
	Claim   *Claim
	Run     string
	Verdict Verdict
	// Measured is what decides: the ratio with its interval and the two medians, an order, or
	// the arithmetic of a bound.
	Measured string
	// Why explains the verdict; Decide, for an undecided one, says what would decide it; Short
	// is Why in a few words, for the answers.
	Why, Decide, Short string
	// Figures are the claim's targets' figures in the run (the claimed winner first).
	Figures []Figure
	// Condition is a condition of the run the verdict holds under, when it differs from the
	// source's in a way that changes the comparison ("on 1 target CPU; the source had 8"); the
	// Why says what it changes.
	Condition string
}

// Figure is one target's metric over the trials of a run.
type Figure struct {
	Target string
	Metric *Metric
	// Values are the valid trials' values: the only ones a verdict rests on. All are every
	// loaded trial's, valid or not, for the tables.
	Values, All []float64
	Median      float64
	// Lo, Hi: the median's 95% interval from MinTrialsForCI trials on, else the trials' range
	// (Range true); of All.
	Lo, Hi float64
	Range  bool
	// Invalid are the invalid loaded trials' rows, Distrusted the valid ones the self-checks
	// distrust (results.Row.Distrust); NotLoaded the reason no trial was loaded, Unloaded its row.
	Invalid, Distrusted []results.Row
	// LeftOut are the valid, trusted trials left out of every verdict because other processes
	// took CPU beside them (disturbed): the figure would not be the target's alone.
	LeftOut   []results.Row
	NotLoaded string
	Unloaded  results.Row
	// Loaded counts the loaded trials; Disturbed those whose rows say other processes took CPU
	// beside them.
	Loaded, Disturbed int
	// Resolution is how far the throughput of a closed loop's trial may be off by its count
	// alone, as a share of it (each user answering one time more or fewer over the phase): the
	// largest of its valid trials'; 0 for other metrics and open loops. No interval is narrower.
	Resolution float64
}

// Valid is how many trials are valid.
func (f Figure) Valid() int { return len(f.Values) }

// Trials is how many trials were loaded.
func (f Figure) Trials() int { return len(f.All) }

// Text is the median with its interval: "1,234 [1,100–1,300]", or "—" when nothing was measured.
func (f Figure) Text() string {
	if len(f.All) == 0 {
		return "—"
	}
	m := f.Metric.Format
	if f.Metric.Key == "throughput_rps" && f.Hi < 10 {
		// A few requests a second: the format's digits would print an interval the count
		// resolves ([0.167–0.233]) as none ([0.2–0.2]).
		m = func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
	}
	if len(f.All) == 1 {
		return m(f.Median)
	}
	return fmt.Sprintf("%s [%s–%s]", m(f.Median), m(f.Lo), m(f.Hi))
}

// FigureOf summarizes target's metric over rows, the rows of one run.
func FigureOf(rows []results.Row, target string, m *Metric) Figure {
	f := Figure{Target: target, Metric: m}
	for _, r := range rows {
		if r.Target != target {
			continue
		}
		if !r.Loaded() {
			if f.NotLoaded == "" {
				f.NotLoaded, f.Unloaded = r.InvalidReason, r
			}
			continue
		}
		f.Loaded++
		if disturbed(r) {
			f.Disturbed++
		}
		if !r.Valid {
			f.Invalid = append(f.Invalid, r)
		}
		if m.OfSuccesses && r.Successes == 0 {
			continue
		}
		f.All = append(f.All, m.Value(r))
		switch {
		case r.Valid && r.Distrust() != "":
			// A phase that drifted has no one level to compare, and an instrument off by more than
			// its limits vouches for nothing: never a verdict's basis.
			f.Distrusted = append(f.Distrusted, r)
		case r.Valid && disturbed(r):
			f.LeftOut = append(f.LeftOut, r)
		case r.Valid:
			f.Values = append(f.Values, m.Value(r))
			if m.Key == "throughput_rps" {
				f.Resolution = max(f.Resolution, countResolution(r))
			}
		}
	}
	if len(f.All) == 0 {
		return f
	}
	s := stats.Summarize(f.All)
	f.Median = s.Median
	if len(f.All) >= stats.MinTrialsForCI && s.Finite() {
		f.Lo, f.Hi = s.Lo, s.Hi
	} else {
		f.Lo, f.Hi, f.Range = slices.Min(f.All), slices.Max(f.All), true
	}
	f.Lo, f.Hi = min(f.Lo, f.Median*(1-f.Resolution)), max(f.Hi, f.Median*(1+f.Resolution))
	return f
}

// countResolution is how far a closed loop's throughput may be off by its count alone, as a
// share of it: each of its users (its connections, or the most in flight) answers one time more
// or fewer over the phase (results.Row.CountWarning's arithmetic); 0 for an open loop.
func countResolution(r results.Row) float64 {
	if r.Mode != "closed" || r.Duration <= 0 || r.ThroughputRPS <= 0 {
		return 0
	}
	users := float64(max(r.PeakInFlight, int64(r.Connections)))
	return users / r.Duration.Seconds() / r.ThroughputRPS
}

// ratioOf is a's valid median over b's with the Mann–Whitney interval of a/b, widened to what
// the two counts can resolve: the factor printed is the fraction of the medians printed beside it.
func ratioOf(a, b Figure) (est, lo, hi float64) {
	r := stats.RatioInterval(a.Values, b.Values, stats.Confidence)
	est = validMedian(a) / validMedian(b)
	lo = min(r.Lo, est*(1-a.Resolution)/(1+b.Resolution))
	hi = r.Hi
	if b.Resolution < 1 {
		hi = max(hi, est*(1+a.Resolution)/(1-b.Resolution))
	}
	return est, lo, hi
}

func disturbed(r results.Row) bool { return r.Disturbed }

// targetCPUs is how many CPUs row's target was given (0 when none were pinned).
func targetCPUs(row results.Row) int {
	cpus, _ := cpuset.Parse(row.CPUSet, cpuset.MaxCPUs)
	return len(cpus)
}

// RequestRows are the rows of a run that hold request's figures, a request of a mix (empty: the
// cells' own rows, each the whole of its cell, not a stage's or a request's).
func RequestRows(rows []results.Row, request string) []results.Row {
	var out []results.Row
	for _, r := range rows {
		if r.Request == request && r.Stage == 0 {
			out = append(out, r)
		}
	}
	return out
}

// Check checks every claim of e: against the source's own figures (a finding only when they are
// impossible), then in each of its runs; rows holds each run's rows by run name.
func Check(e *Experiment, rows map[string][]results.Row) []Finding {
	var out []Finding
	for _, c := range e.Claims {
		out = append(out, CheckClaim(e, c, rows)...)
	}
	return out
}

// CheckClaim is Check of one claim.
func CheckClaim(e *Experiment, c *Claim, rows map[string][]results.Row) []Finding {
	var out []Finding
	if broken := impossible(e, c); len(broken) > 0 {
		var long []string
		for _, b := range broken {
			long = append(long, b.long)
		}
		out = append(out, Finding{Claim: c, Verdict: Impossible, Measured: strings.Join(long, "; "),
			Why: "the source's own figures cannot all be true, on any host", Short: broken[0].short})
	}
	if c.Untestable != "" {
		return append(out, Finding{Claim: c, Verdict: Inconclusive, Measured: "—", Why: c.Untestable, Decide: c.Untestable})
	}
	for _, name := range c.Runs {
		f := c.check(e, name, rows[name])
		f.Claim, f.Run = c, name
		if f.Short == "" {
			f.Short = f.Why
		}
		out = append(out, f)
	}
	return out
}

// Overall is a claim's one verdict from its findings: impossible as published when the source's
// figures are; else, of the runs that decide it, the least favourable to the source (a claim
// holds only where every deciding run agrees); else needs a larger host, inconclusive or not
// measured, in that order.
func Overall(findings []Finding) Verdict {
	has := func(v Verdict) bool {
		return slices.ContainsFunc(findings, func(f Finding) bool { return f.Verdict == v })
	}
	for _, v := range []Verdict{Impossible, DoesNotHold, Direction, Holds, LargerHost, Inconclusive} {
		if has(v) {
			return v
		}
	}
	return NotMeasured
}

func (c *Claim) metric() *Metric {
	switch {
	case c.Ratio != nil:
		return MetricNamed(c.Ratio.Metric)
	case c.Ranking != nil:
		return MetricNamed(c.Ranking.Metric)
	case c.Winner != nil:
		return MetricNamed(c.Winner.Metric)
	}
	return MetricNamed(c.Tie.Metric)
}

// targets are the targets the claim names, in its order (a winner's first).
func (c *Claim) targets() []string {
	switch {
	case c.Ratio != nil:
		return []string{c.Ratio.Of, c.Ratio.To}
	case c.Ranking != nil:
		return c.Ranking.Order
	case c.Winner != nil:
		return append([]string{c.Winner.Target}, c.Winner.Over...)
	case c.Tie != nil:
		return c.Tie.Targets
	}
	return nil
}

// impossible are the source's figures the claim rests on that cannot be, with the arithmetic: a
// closed loop of N connections completes at most N / (mean latency) requests a second (Little's
// law: throughput × mean latency is the mean number in flight, never above N); a speed-up on the
// same work is at most the ratio of the cores doing it.
func impossible(e *Experiment, c *Claim) []breach {
	var out []breach
	targets := c.targets()
	for _, p := range e.Rows {
		if !slices.Contains(c.Runs, p.Run) {
			continue
		}
		// A winner is claimed over every row of its run; the others over the rows they name.
		if !slices.Contains(targets, p.Target) && (c.Winner == nil || len(c.Winner.Over) > 0) {
			continue
		}
		n := p.Connections
		if n == 0 {
			if r := e.run(p.Run); r != nil {
				n = r.Connections
			}
		}
		x, okX := p.Values["throughput_rps"]
		w, okW := p.Values["latency_mean_ms"]
		if n == 0 || !okX || !okW {
			continue
		}
		if inFlight := x * w / 1000; inFlight > float64(n) {
			out = append(out, breach{fmt.Sprintf("Little's law: “%s” at %s req/s and %s mean latency has %s requests in flight, on %s connections",
				p.label(), number(x), msText(w), count(inFlight), count(float64(n))),
				fmt.Sprintf("%s req/s at %s is %s requests in flight on %s connections", number(x), msText(w), count(inFlight), count(float64(n)))})
		}
	}
	if b := c.Cores; b != nil {
		run, baseRun := cmpOr(b.Run, first(c.Runs)), cmpOr(b.BaseRun, cmpOr(b.Run, first(c.Runs)))
		of, base := e.published(run, b.Of), e.published(baseRun, b.Base)
		if of != nil && base != nil {
			x, y := of.Values["throughput_rps"], base.Values["throughput_rps"]
			if limit := float64(b.Cores) * y; y > 0 && x > limit {
				out = append(out, breach{fmt.Sprintf("core count: %s req/s is %s× %s req/s on the same work, where %d cores give at most %d× (%s): %s× beyond it",
					number(x), factor(x/y), number(y), b.Cores, b.Cores, b.Why, factor(x/limit)),
					fmt.Sprintf("%s× on the same work needs %s cores; %d give at most %d×", factor(x/y), count(x/y), b.Cores, b.Cores)})
			}
		}
	}
	return out
}

// breach is a bound the source's figures break: its arithmetic, and a few words of it.
type breach struct{ long, short string }

func (p *PublishedRow) label() string {
	if p.As != "" {
		return p.As
	}
	return p.Target
}

// reproduce is the command that measures one run of the experiment, and no other.
func (e *Experiment) reproduce(run string) string {
	return fmt.Sprintf("iotbench reproduce %s --runs %s", e.Name, run)
}

func (e *Experiment) run(name string) *Run {
	for _, r := range e.Runs {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (e *Experiment) published(run, target string) *PublishedRow {
	for _, p := range e.Rows {
		if p.Run == run && p.Target == target {
			return p
		}
	}
	return nil
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// check checks the claim in one run's rows.
func (c *Claim) check(e *Experiment, run string, rows []results.Row) Finding {
	reproduce := "`" + e.reproduce(run) + "`"
	r := e.run(run)
	switch {
	case r == nil:
		return Finding{Verdict: NotMeasured, Measured: "—", Why: fmt.Sprintf("experiments.yaml has no run %q yet", run),
			Decide: "the run, added to the experiment and measured"}
	case len(rows) == 0:
		return Finding{Verdict: NotMeasured, Measured: "—", Why: "the run holds no rows", Decide: reproduce + " measures it"}
	}
	rows = RequestRows(rows, c.Request)
	m := c.metric()
	targets := c.targets()
	if c.Winner != nil && len(c.Winner.Over) == 0 {
		for _, row := range rows {
			if !slices.Contains(targets, row.Target) {
				targets = append(targets, row.Target)
			}
		}
	}
	best := ""
	if c.Ratio != nil && len(c.Ratio.ToBestOf) > 0 {
		// The comparison the claim names: the best of its targets in this run, not the one
		// the source's table happened to rank first.
		// A target of them with no valid trial might be the best: compared with it, the claim
		// stays undecided for its cells.
		t, ok := bestOf(rows, c.Ratio.ToBestOf, m, r)
		if t != "" {
			targets[1] = t
		}
		if ok {
			best = t
		}
	}
	figs := make([]Figure, len(targets))
	for i, t := range targets {
		figs[i] = FigureOf(rows, t, m)
	}
	f, stop := undecidable(e, c, r, figs)
	caps := r.Design.capacities(m, figs, rows)
	capacity := e.capacityRun(r, targets, r.Design)
	switch {
	case stop && (c.Winner != nil || c.Ranking != nil):
		// A winner beaten, or an order reversed, by targets measured cleanly is wrong whatever the
		// other cells show.
		if wrong, ok := refuted(figs, c.Winner != nil, caps); ok {
			wrong.Why += "; the run's other cells decide nothing (" + cmp.Or(f.Short, f.Why) + ")"
			f = wrong
		}
	case stop:
	case c.Winner != nil && len(figs) < 2:
		f = Finding{Verdict: NotMeasured, Measured: figs[0].validText(),
			Why:    "no other target has rows in this run: a winner over nobody decides nothing",
			Decide: reproduce + " measures the missing cells"}
	case c.Ratio != nil:
		f = sized(ratio(figs[0], figs[1], c.Ratio.Published), figs[0], figs[1], c.Ratio.Published, caps, capacity)
	case c.Ranking != nil:
		f = order(figs, false, caps, capacity)
	case c.Winner != nil:
		f = order(figs, true, caps, capacity)
	default:
		f = tie(figs, caps, capacity)
	}
	if c.Request != "" && f.Measured != "—" {
		// A mix's run: the figures are one request's, which the run's table (the cells' whole)
		// does not show.
		f.Measured = fmt.Sprintf("%s's %s: %s", c.Request, m.Label, f.Measured)
	}
	if b := boundsText(caps, figs); b != "" && f.Measured != "—" {
		// Each figure beside what the run let it reach: a figure at its design's bound is the
		// design's, not the target's.
		f.Measured += "; bounds: " + b
	}
	decided := f.Verdict == Holds || f.Verdict == Direction || f.Verdict == DoesNotHold
	if cond, what := e.oneCPU(r, figs, rows); cond != "" && decided {
		f.Condition = cond
		f.Why = what + ". " + f.Why
	}
	if best != "" {
		f.Why = fmt.Sprintf("against the best in this run of the %d targets the claim's comparison names (to_best_of): %s; ", len(c.Ratio.ToBestOf), figs[1].validText()) + f.Why
	}
	f.Figures = figs
	return f
}

// bestOf is the target of names whose valid trials' median is best in rows, true; or the first
// of them the run loaded with no valid trial (it might be the best), false; "" when none is in
// the run.
func bestOf(rows []results.Row, names []string, m *Metric, r *Run) (string, bool) {
	best, bestValue := "", 0.0
	for _, t := range names {
		f := FigureOf(rows, t, m)
		if f.Loaded == 0 && !slices.Contains(r.Targets, t) {
			continue // not in this run
		}
		if f.Valid() == 0 {
			return t, false
		}
		v := validMedian(f)
		if best == "" || (v > bestValue) == m.HigherIsBetter && v != bestValue {
			best, bestValue = t, v
		}
	}
	return best, best != ""
}

// sized is a ratio's finding f bounded by the run's design: a capacity factor shows only where
// the lower figure is its target's own (held by the run's design, its capacity above it is
// unknown), and, where the design held the higher one, only up to the design's bound over the
// lower figure. f stands where the bounds are unknown (no closed loop's service time, no pool,
// no CPU figures) or the claim is not on throughput.
func sized(f Finding, a, b Figure, published float64, caps map[string]bounds.Capacity, capacity string) Finding {
	ca, okA := caps[a.Target]
	cb, okB := caps[b.Target]
	if !okA || !okB || (f.Verdict != Holds && f.Verdict != Direction && f.Verdict != DoesNotHold) {
		return f
	}
	// The factor as higher over lower, and the published one the same way up.
	high, low, claimed := ca, cb, published
	higher, lower := a.Target, b.Target
	if ca.Measured < cb.Measured {
		high, low, claimed = cb, ca, 1/published
		higher, lower = b.Target, a.Target
	}
	if low.Held() {
		return Finding{Verdict: Inconclusive, Measured: f.Measured,
			Why: fmt.Sprintf("%s reached %s of the run's design bound, %s, below its own, %s: the run measured its latency at this load, not its capacity, so neither the direction nor the size of a capacity factor shows",
				lower, percent(low.Measured/low.Design.Rate), low.Design.Plain(), low.Own.Plain()),
			Short:  "the run's design, not " + lower + ", held its figure",
			Decide: capacity}
	}
	most := high.Design.Rate / low.Measured
	if !high.Held() || claimed <= most {
		return f
	}
	can := fmt.Sprintf("%s's figure is held by the run's design bound, %s, below its own, %s, so no factor above %s ÷ %s = %s× can show",
		higher, high.Design.Plain(), high.Own.Plain(), bounds.Rate(high.Design.Rate), bounds.Rate(low.Measured), factor(most))
	if f.Verdict == DoesNotHold {
		f.Why += "; nor could the run show the published size: " + can
		return f
	}
	return Finding{Verdict: Inconclusive, Measured: f.Measured,
		Why:    fmt.Sprintf("the direction is significant; the size cannot show in this run: %s, and the published %s× lies beyond", can, factor(published)),
		Short:  fmt.Sprintf("the direction holds; the run's design caps the factor at %s×, below the published %s×", factor(most), factor(published)),
		Decide: capacity}
}

// percent is a share as a whole percentage: "92%".
func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// undecidable is the finding of a run that cannot decide the claim: a target not loaded (not in
// the run, or skipped for want of CPUs), invalid cells, or too few valid trials for the test.
func undecidable(e *Experiment, c *Claim, r *Run, figs []Figure) (Finding, bool) {
	if f, ok := unloaded(e, r, figs); ok {
		return f, true
	}
	var t shortfall
	if f, ok := t.tally(e.reproduce(r.Name), figs); ok {
		f.Measured = estimate(c, figs)
		return f, true
	}
	if len(t.reasons) == 0 && len(t.short) == 0 {
		return Finding{}, false
	}
	if len(t.short) > 0 {
		t.reasons = append(t.reasons, fmt.Sprintf("valid trials: %s; the Mann–Whitney test needs %d a side to reach p < 0.05", strings.Join(t.short, ", "), MinTrials))
	}
	// The valid trials' estimate is shown but never decides.
	return Finding{Verdict: Inconclusive, Measured: estimate(c, figs), Why: strings.Join(t.reasons, "; "), Decide: strings.Join(t.decide(e, c, r), "; "), Short: strings.Join(t.brief(), "; ")}, true
}

// unloaded is the finding of a run where a target of the claim has no loaded trial.
func unloaded(e *Experiment, r *Run, figs []Figure) (Finding, bool) {
	reproduce := e.reproduce(r.Name)
	for _, f := range figs {
		if f.Trials() > 0 || len(f.Invalid) > 0 {
			continue
		}
		switch {
		case f.Unloaded.Fault == fault.Skipped && r.NeedsCPUs > targetCPUs(f.Unloaded):
			return Finding{Verdict: LargerHost, Measured: "—", Why: strings.TrimPrefix(f.NotLoaded, string(fault.Skipped)+": "),
				Short: fmt.Sprintf("the run needs %d target CPUs and one more for the generator", r.NeedsCPUs),
				Decide: fmt.Sprintf("a host of %d CPUs or more (%d for the targets, the rest for the generator): there `%s` gives every target of the run %d CPUs",
					r.NeedsCPUs+1, r.NeedsCPUs, reproduce, r.NeedsCPUs)}, true
		case f.NotLoaded != "":
			return Finding{Verdict: Inconclusive, Measured: "—", Why: fmt.Sprintf("%s was not loaded: %s", f.Target, f.NotLoaded),
				Decide: fmt.Sprintf("`%s` again, once %s starts and passes its checks", reproduce, f.Target)}, true
		case !slices.Contains(r.Targets, f.Target) && len(r.Targets) > 0:
			return Finding{Verdict: NotMeasured, Measured: "—", Why: fmt.Sprintf("%s is not a target of this run (experiments.yaml)", f.Target),
				Decide: fmt.Sprintf("%s added to the run's targets and measured", f.Target)}, true
		default:
			return Finding{Verdict: NotMeasured, Measured: "—", Why: fmt.Sprintf("%s has no rows in this run", f.Target),
				Decide: fmt.Sprintf("`%s` measures the missing cells", reproduce)}, true
		}
	}
	return Finding{}, false
}

// shortfall is what keeps a run's loaded trials from deciding a claim, target by target.
type shortfall struct {
	reasons                                                      []string
	fails, noisy, short, unsteady, warming, miscalibrated, quiet []string
	// settled: every trial still warming up had a warm-up until steady that ended on its own,
	// before its maximum: a longer maximum would not have changed it.
	settled bool
	// retry are the figures more trials may complete: those whose trials fell short by chance
	// (a disturbed generator, some trials unsteady), not each of them the same way.
	retry []Figure
}

// tally counts what keeps figs from deciding; a generator saturated is a finding of its own.
func (t *shortfall) tally(reproduce string, figs []Figure) (Finding, bool) {
	t.settled = true
	for _, f := range figs {
		var gen, own []results.Row
		for _, row := range f.Invalid {
			if row.Fault.Generator() {
				gen = append(gen, row)
			} else {
				own = append(own, row)
			}
		}
		// A trial the generator spoiled is left out; one where the target itself failed is not:
		// leaving it out would keep only the target's good trials.
		if f.Valid() >= MinTrials && len(own) == 0 {
			continue
		}
		t.distrusted(f)
		if len(f.LeftOut) > 0 {
			t.reasons = append(t.reasons, fmt.Sprintf("%s disturbed in %d of %d trials (other processes took CPU beside them: left out)", f.Target, len(f.LeftOut), f.Loaded))
			t.quiet = append(t.quiet, f.Target)
		}
		switch {
		case len(own) > 0:
			t.reasons = append(t.reasons, fmt.Sprintf("%s invalid in %d of %d trials (%s)", f.Target, len(own), f.Loaded, alike(own, invalidReason)))
			t.fails = append(t.fails, f.Target)
		case len(gen) > 0:
			busy := 0.0
			for _, row := range gen {
				busy = math.Max(busy, row.GeneratorCPUPercent)
			}
			if busy >= saturated {
				return Finding{Verdict: LargerHost, Short: "the generator was saturated",
					Why:    fmt.Sprintf("%s: the generator fell behind with its CPUs %.0f%% busy: the figure is the generator's limit, not the target's", f.Target, busy),
					Decide: fmt.Sprintf("a host with more CPUs for the generator (3 or more: `%s` gives it every CPU but the targets')", reproduce)}, true
			}
			t.reasons = append(t.reasons, fmt.Sprintf("%s: the generator fell behind in %d of %d trials with its CPUs at most %.0f%% busy (%s)",
				f.Target, len(gen), f.Loaded, busy, alike(gen, invalidReason)))
			t.noisy = append(t.noisy, f.Target)
			t.retry = append(t.retry, f)
		case f.Valid() < MinTrials:
			t.short = append(t.short, fmt.Sprintf("%s %d", f.Target, f.Valid()))
			if f.Valid() > 0 {
				t.retry = append(t.retry, f)
			}
		}
	}
	return Finding{}, false
}

// distrusted counts f's valid trials the self-checks distrust, by their commonest reason.
func (t *shortfall) distrusted(f Figure) {
	if len(f.Distrusted) == 0 {
		return
	}
	first, _ := commonest(f.Distrusted, distrustText)
	why := first.Distrust()
	t.reasons = append(t.reasons, fmt.Sprintf("%s %s in %d of %d trials (%s)", f.Target, why, len(f.Distrusted), f.Loaded, alike(f.Distrusted, distrustText)))
	switch why {
	case results.DistrustNotSteady:
		t.unsteady = append(t.unsteady, f.Target)
	case results.DistrustWarming:
		t.warming = append(t.warming, f.Target)
		for _, row := range f.Distrusted {
			if row.StillWarming() && !row.WarmupEndedEarly() {
				t.settled = false
			}
		}
	default:
		t.miscalibrated = append(t.miscalibrated, f.Target)
	}
}

// brief is the shortfall in a few words a class, for the first screen.
func (t *shortfall) brief() []string {
	var out []string
	if len(t.fails) > 0 {
		out = append(out, "invalid cells: "+strings.Join(t.fails, ", ")+" failing under this load")
	}
	if len(t.noisy) > 0 {
		out = append(out, "the generator fell behind (disturbed, not saturated)")
	}
	if len(t.unsteady) > 0 {
		out = append(out, "not steady: "+strings.Join(t.unsteady, ", "))
	}
	if len(t.warming) > 0 {
		out = append(out, "still warming up (the JIT compiling): "+strings.Join(t.warming, ", "))
	}
	if len(t.miscalibrated) > 0 {
		out = append(out, "calibration missed its limits: "+strings.Join(t.miscalibrated, ", "))
	}
	if len(t.quiet) > 0 {
		out = append(out, "disturbed trials left out: "+strings.Join(t.quiet, ", "))
	}
	if len(t.short) > 0 {
		out = append(out, fmt.Sprintf("too few valid trials (%s; the test needs %d a side)", strings.Join(t.short, ", "), MinTrials))
	}
	return out
}

// decide is what would decide the claim despite the shortfall, one clause a class.
func (t *shortfall) decide(e *Experiment, c *Claim, r *Run) []string {
	var decide []string
	others := slices.DeleteFunc(slices.Clone(c.Runs), func(n string) bool { return n == r.Name })
	if len(t.fails) > 0 {
		at := "a run at a load every target holds decides it"
		if len(others) > 0 {
			at = "the claim's other runs (" + strings.Join(others, ", ") + ") decide it"
		}
		verb := "fail"
		if len(t.fails) == 1 {
			verb = "fails"
		}
		decide = append(decide, fmt.Sprintf("%s %s under this load, which leaves no figure to compare: %s", strings.Join(t.fails, ", "), verb, at))
	}
	if len(t.noisy) > 0 {
		decide = append(decide, "the generator was disturbed, not short of CPU: a rerun on a quiet host may decide it")
	}
	if len(t.unsteady) > 0 {
		// A run warmed up as the source did (not at all) is not to be changed: the claim's runs
		// that warm up until steady are where the steady figures are.
		warmed := slices.DeleteFunc(slices.Clone(others), func(n string) bool {
			o := e.run(n)
			return o == nil || o.Warmup == nil || !o.Warmup.Auto
		})
		switch {
		case r.Warmup != nil && !r.Warmup.Auto && len(warmed) > 0:
			if len(t.fails) == 0 || !slices.Equal(warmed, others) { // else named above already
				decide = append(decide, "the claim's runs that warm up until steady ("+strings.Join(warmed, ", ")+") decide it; this one warms up as the source did")
			}
		default:
			decide = append(decide, "a longer warm-up or measured phase, so that each trial reaches a steady state")
		}
	}
	switch {
	case len(t.warming) > 0 && t.settled:
		decide = append(decide, "a rerun with a fixed warm-up past the JIT's compilation (`warmup: 10m`): these warm-ups until steady ended on their own, before their maximum, with the JIT not done, so a longer maximum would not change them")
	case len(t.warming) > 0:
		decide = append(decide, "a rerun whose warm-up lasts until the JIT has finished compiling (on one CPU under hundreds of request threads its compilers starve for minutes, docs/selfcheck.md says how many; `warmup: auto:15m` allows it)")
	}
	if len(t.miscalibrated) > 0 {
		decide = append(decide, "a rerun whose calibration is within its limits (a quiet host)")
	}
	if len(t.quiet) > 0 {
		decide = append(decide, "the disturbed trials measured again on a quiet host")
	}
	if len(t.retry) > 0 {
		n := moreTrials(t.retry)
		decide = append(decide, fmt.Sprintf("%d trials a side (`%s --trials %d`)", n, e.reproduce(r.Name), n))
	}
	return decide
}

// moreTrials is the trials a side to suggest for the targets of figs: the fewest with a 95%
// interval, or twice the most one ran when it ran that many already (the trials left out for a
// spoiled or unsteady phase are then the shortfall).
func moreTrials(figs []Figure) int {
	most := 0
	for _, f := range figs {
		most = max(most, f.Loaded)
	}
	if most < stats.MinTrialsForCI {
		return stats.MinTrialsForCI
	}
	return 2 * most
}

// distrustText is the row's warning that says why the self-checks distrust it.
func distrustText(r results.Row) string {
	why := r.Distrust()
	if why == results.DistrustWarming {
		// Each trial's warning has its own seconds: the rule is what they share.
		return fmt.Sprintf("its JIT busy for over %.0f%% of the measured phase", 100*results.JITBusyShare)
	}
	for _, w := range strings.Split(r.Warnings, "; ") {
		if strings.HasPrefix(w, why) {
			return w
		}
	}
	return why
}

// estimate is what the valid trials show, marked as no verdict's basis; "—" when a target has
// none (an invalid cell's figure is not the target's: a generator's limit, a failing target's).
func estimate(c *Claim, figs []Figure) string {
	for _, f := range figs {
		if len(f.Values) == 0 {
			return "—"
		}
	}
	if c.Ratio != nil {
		return fmt.Sprintf("%s× (%s) — valid trials shown, not tested", factor(validMedian(figs[0])/validMedian(figs[1])), medians(figs))
	}
	return medians(figs) + " — valid trials shown, not tested"
}

// validMedian is the median of the valid trials; 0 when none is.
func validMedian(f Figure) float64 {
	if len(f.Values) == 0 {
		return 0
	}
	return stats.Summarize(f.Values).Median
}

// validText is the target and the median of its valid trials: "fastify 2,393".
func (f Figure) validText() string { return f.Target + " " + f.Metric.Format(validMedian(f)) }

func medians(figs []Figure) string {
	var parts []string
	for _, f := range figs {
		parts = append(parts, f.validText())
	}
	if len(figs) == 2 {
		return parts[0] + " / " + parts[1]
	}
	return strings.Join(parts, ", ")
}

// ratio checks "a is published × b" with the Mann–Whitney interval of a/b.
func ratio(a, b Figure, published float64) Finding {
	est, lo, hi := ratioOf(a, b)
	measured := fmt.Sprintf("%s× [%s–%s] (%s)", factor(est), factor(lo), factor(hi), validMedians(a, b))
	if res := max(a.Resolution, b.Resolution); res >= countShare {
		measured += fmt.Sprintf(", the interval no narrower than the counts resolve (±%s of %s, ±%s of %s)",
			percent(a.Resolution), a.Target, percent(b.Resolution), b.Target)
	}
	inside := published >= lo && published <= hi
	sameSide := (published > 1 && lo > 1) || (published < 1 && hi < 1)
	p := factor(published) + "×"
	short := fmt.Sprintf("measured %s× [%s–%s] against the published %s", factor(est), factor(lo), factor(hi), p)
	switch {
	case inside && (sameSide || published == 1):
		return Finding{Verdict: Holds, Measured: measured, Why: fmt.Sprintf("%s lies in the 95%% interval, which excludes 1×", p), Short: short}
	case inside:
		return Finding{Verdict: Inconclusive, Measured: measured, Why: fmt.Sprintf("the 95%% interval holds both %s and 1×", p),
			Decide: "more trials a side (the interval narrows as their square root)"}
	case sameSide:
		return Finding{Verdict: Direction, Measured: measured, Why: fmt.Sprintf("published %s, measured %s×: the direction is significant, the size is outside the 95%% interval", p, factor(est)), Short: short}
	}
	return Finding{Verdict: DoesNotHold, Measured: measured, Why: fmt.Sprintf("%s is outside the 95%% interval, which does not confirm its direction", p), Short: short}
}

// validMedians are the valid trials' medians of two figures.
func validMedians(a, b Figure) string {
	return fmt.Sprintf("%s / %s, %d and %d valid trials", a.validText(), b.validText(), a.Valid(), b.Valid())
}

// order checks that each figure is better than the next (winner: the first than every other),
// each pair by the Mann–Whitney test at 95%.
//
// On throughput (caps given), an order says which target can serve more only where the worse
// one's figure is its own: one the run's design held has a capacity unknown above it, and the
// pair is not told apart; capacity says which run would tell it.
func order(figs []Figure, winner bool, caps map[string]bounds.Capacity, capacity string) Finding {
	var steps, wrong, unsure, design []string
	for i := 1; i < len(figs); i++ {
		a := figs[i-1]
		if winner {
			a = figs[0]
		}
		b := figs[i]
		o := summary.Order(a.Values, b.Values, a.Metric.HigherIsBetter)
		worse := b.Target
		if o == -1 {
			worse = a.Target
		}
		if t, ceiling := held(caps, worse); o != 0 && t != "" {
			o = 0
			if d := fmt.Sprintf("%s (%s of %s)", t, percent(caps[t].Measured/ceiling.Rate), ceiling.Plain()); !slices.Contains(design, d) {
				design = append(design, d)
			}
		}
		steps = append(steps, relation(o)+" "+b.validText())
		switch o {
		case -1:
			wrong = append(wrong, fmt.Sprintf("%s is better than %s", b.Target, a.Target))
		case 0:
			unsure = append(unsure, fmt.Sprintf("%s and %s", a.Target, b.Target))
		}
	}
	// A winner is compared with each other target: a list after it, where a chain would say
	// "a worse than b worse than c" of b and c, which were never compared.
	// Two figures at least: check and refuted stop short of fewer.
	measured, sep := figs[0].validText(), " "
	if winner {
		measured, sep = measured+":", ", "
	}
	measured += " " + strings.Join(steps, sep)
	switch {
	case len(wrong) > 0:
		return Finding{Verdict: DoesNotHold, Measured: measured, Why: strings.Join(wrong, "; ") + " (Mann–Whitney, 95%)", Short: wrong[0]}
	case len(design) > 0:
		return Finding{Verdict: Inconclusive, Measured: measured,
			Why: "the run's design, not the target, held the figure of " + strings.Join(design, "; ") +
				": its capacity is unknown above it, so the run cannot tell apart " + strings.Join(unsure, "; "),
			Short:  "the run's design held the figures of " + strings.Join(heldTargets(design), ", "),
			Decide: capacity}
	case len(unsure) > 0:
		return Finding{Verdict: Inconclusive, Measured: measured,
			Why:    "the test at 95% cannot tell apart " + strings.Join(unsure, "; "),
			Decide: "more trials a side, or a quieter host"}
	}
	return Finding{Verdict: Holds, Measured: measured, Why: "each claimed order significant (Mann–Whitney, 95%)"}
}

// heldTargets are the target names of order's design texts ("a (92% of …)").
func heldTargets(design []string) []string {
	out := make([]string, len(design))
	for i, d := range design {
		out[i], _, _ = strings.Cut(d, " (")
	}
	return out
}

// refuted is the finding of an order (winner: figs[0] over every other) that the figures measured
// cleanly (every trial valid and trusted, and enough of them) contradict significantly: an order
// holds between any two of its targets, so two clean ones reversed refute it whatever the other
// cells went; false when they do not.
func refuted(figs []Figure, winner bool, caps map[string]bounds.Capacity) (Finding, bool) {
	clean := func(f Figure) bool { return f.Valid() >= MinTrials && len(f.Invalid) == 0 && len(f.Distrusted) == 0 }
	if winner && !clean(figs[0]) {
		return Finding{}, false
	}
	decided := slices.DeleteFunc(slices.Clone(figs), func(f Figure) bool { return !clean(f) })
	if len(decided) < 2 {
		return Finding{}, false
	}
	f := order(decided, winner, caps, "")
	return f, f.Verdict == DoesNotHold
}

// relation writes a pair's order in words: a sign would read as comparing the figures, and a
// lower latency is the better one ("1.25 ms > 1.92 ms" said the first was better).
func relation(order int) string {
	switch order {
	case 1:
		return "better than"
	case -1:
		return "worse than"
	}
	return "not told apart from"
}

// TieMargin is how far apart two figures may be and still tie: a claim of equal performance is
// an equivalence, and no measurement shows two runtimes exactly equal.
const TieMargin = 1.10

// tie checks that every two figures are within TieMargin: it holds when each pair's 95%
// interval of the ratio lies within the margin, does not hold when one lies wholly outside it.
//
// On throughput (caps given), two figures the run's design held both tie by construction: the
// design, not the targets, made them equal, and capacity says which run would tell them apart.
func tie(figs []Figure, caps map[string]bounds.Capacity, capacity string) Finding {
	var parts, apart, unsure, design []string
	for i, f := range figs {
		parts = append(parts, f.validText())
		for _, g := range figs[i+1:] {
			est, lo, hi := ratioOf(f, g)
			pair := fmt.Sprintf("%s/%s %s× [%s–%s]", f.Target, g.Target, factor(est), factor(lo), factor(hi))
			a, _ := held(caps, f.Target)
			b, ceiling := held(caps, g.Target)
			switch {
			case a != "" && b != "":
				design = append(design, fmt.Sprintf("%s and %s (both at %s of %s)", f.Target, g.Target,
					percent(min(caps[a].Measured, caps[b].Measured)/ceiling.Rate), ceiling.Plain()))
			case lo > TieMargin || hi < 1/TieMargin:
				apart = append(apart, pair)
			case lo < 1/TieMargin || hi > TieMargin:
				unsure = append(unsure, pair)
			}
		}
	}
	measured := strings.Join(parts, " ~ ")
	margin := fmt.Sprintf("±%.0f%%", 100*(TieMargin-1))
	switch {
	case len(apart) > 0:
		return Finding{Verdict: DoesNotHold, Measured: measured, Why: fmt.Sprintf("they differ by more than %s (95%% interval): %s", margin, strings.Join(apart, "; "))}
	case len(design) > 0:
		return Finding{Verdict: Inconclusive, Measured: measured,
			Why:    "the run's design held " + strings.Join(design, "; ") + ": equal by construction, whatever the targets can serve",
			Short:  "a tie by the run's design, not the targets'",
			Decide: capacity}
	case len(unsure) > 0:
		return Finding{Verdict: Inconclusive, Measured: measured, Why: fmt.Sprintf("the 95%% interval reaches beyond %s: %s", margin, strings.Join(unsure, "; ")),
			Decide: "more trials a side, or a quieter host"}
	}
	return Finding{Verdict: Holds, Measured: measured, Why: fmt.Sprintf("within %s of each other (95%% interval)", margin)}
}

func factor(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "∞"
	case v >= 10:
		return count(v)
	case v < 0.01 && v > 0:
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// number is a published figure as plainly as it was written: 0.24, 247.32, 87,047.
func number(v float64) string {
	if v >= 1000 || v == math.Trunc(v) {
		return count(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// count is a whole number with thousands separators: 3,404.
func count(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// msText is a published mean latency: "186 ms", "1.72 s".
func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.3g s", ms/1000)
	}
	return fmt.Sprintf("%.3g ms", ms)
}

// commonest is the first of rows whose reason is of the kind most rows share (of kinds tied, the
// one met first), and how many share it: a target OOM-killed in five trials and timing out in one
// is told by the five. Reasons of one kind differ only in their figures ("OOM-killed … 31.2 s
// into", "… 35.2 s into").
func commonest(rows []results.Row, reason func(results.Row) string) (results.Row, int) {
	kinds := make([]string, len(rows))
	counts := map[string]int{}
	for i, r := range rows {
		kinds[i] = strings.Map(func(c rune) rune {
			if unicode.IsDigit(c) || c == '.' {
				return -1
			}
			return c
		}, brief(reason(r)))
		counts[kinds[i]]++
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	for i, k := range kinds {
		if counts[k] == most {
			return rows[i], most
		}
	}
	return results.Row{}, 0 // no rows
}

// alike is commonest's reason, briefly, with how many of rows share its kind when not all do.
func alike(rows []results.Row, reason func(results.Row) string) string {
	r, n := commonest(rows, reason)
	if n == len(rows) {
		return brief(reason(r))
	}
	return fmt.Sprintf("%s, in %d of them", brief(reason(r)), n)
}

func invalidReason(r results.Row) string { return r.InvalidReason }

// brief is an invalid reason without its details: "success ratio 0.9659 below 0.99".
func brief(reason string) string {
	if i := strings.Index(reason, " ("); i > 0 {
		reason = reason[:i]
	}
	if i := strings.Index(reason, ": "); i > 0 && strings.HasPrefix(reason, "generator") {
		reason = reason[:i]
	}
	return reason
}
