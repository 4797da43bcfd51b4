package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/summary"
)

// Verdict is what a measurement says of a claim.
type Verdict string

const (
	Holds       Verdict = "holds"
	DoesNotHold Verdict = "does not hold"
	// Inconclusive: measured, but the trials cannot tell (too few, too noisy), or the cells the
	// claim rests on are invalid: a claim never holds on an invalid cell.
	Inconclusive Verdict = "inconclusive"
	// Untestable: this host, or iotbench, cannot measure what the claim is about (the reason says
	// what is missing: CPUs for the target, a target, a generator that keeps up).
	Untestable Verdict = "cannot be tested here"
	// NotRun: the run holds no rows yet.
	NotRun Verdict = "not run"
)

// Finding is one claim checked in one run.
type Finding struct {
	Claim   *Claim
	Run     string // empty for a claim that names none (untestable)
	Verdict Verdict
	// Measured is what iotbench measured of the claim: a ratio with its interval, a ranking.
	Measured string
	// Why explains the verdict.
	Why string
}

// Figure is one target's metric over the trials of a run.
type Figure struct {
	Target string
	Metric *Metric
	// Values are the loaded trials' values; Valid counts the valid ones among them.
	Values []float64
	Valid  int
	Median float64
	// Lo, Hi: the median's 95% interval from MinTrialsForCI trials on, else the trials' range
	// (Range true).
	Lo, Hi float64
	Range  bool
	// Invalid are the reasons of the loaded trials that are invalid; NotLoaded the reason no
	// trial was loaded, when none was.
	Invalid   []string
	NotLoaded string
}

// Trials is how many trials the figure has.
func (f Figure) Trials() int { return len(f.Values) }

// Text is the median with its interval: "1,234 [1,100–1,300]", or "—" when nothing was measured.
func (f Figure) Text() string {
	if len(f.Values) == 0 {
		return "—"
	}
	m := f.Metric.Format
	if len(f.Values) == 1 {
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
				f.NotLoaded = r.InvalidReason
			}
			continue
		}
		if m.OfSuccesses && r.Successes == 0 {
			f.Invalid = append(f.Invalid, fmt.Sprintf("trial %d: no successful answer: %s", r.Trial, r.InvalidReason))
			continue
		}
		f.Values = append(f.Values, m.Value(r))
		if r.Valid {
			f.Valid++
		} else {
			f.Invalid = append(f.Invalid, fmt.Sprintf("trial %d: %s", r.Trial, r.InvalidReason))
		}
	}
	if len(f.Values) == 0 {
		return f
	}
	s := stats.Summarize(f.Values)
	f.Median = s.Median
	if len(f.Values) >= stats.MinTrialsForCI && s.Finite() {
		f.Lo, f.Hi = s.Lo, s.Hi
	} else {
		f.Lo, f.Hi, f.Range = slices.Min(f.Values), slices.Max(f.Values), true
	}
	if f.NotLoaded != "" && len(f.Values) > 0 {
		f.Invalid = append(f.Invalid, f.NotLoaded)
	}
	return f
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

// better compares a and b on their metric: 1 when a is better, -1 when b is, 0 when they cannot
// be told apart. tested says the comparison was the Mann–Whitney test (enough trials a side);
// otherwise it is whether the trials' ranges are apart, a weaker evidence.
func better(a, b Figure) (order int, tested bool) {
	return summary.Order(a.Values, b.Values, a.Metric.HigherIsBetter)
}

// Check checks every claim of e in each of its runs; rows holds each run's rows by run name.
func Check(e *Experiment, rows map[string][]results.Row) []Finding {
	var out []Finding
	for _, c := range e.Claims {
		if c.Untestable != "" {
			out = append(out, Finding{Claim: c, Verdict: Untestable, Measured: "—", Why: c.Untestable})
			continue
		}
		for _, run := range c.Runs {
			f := c.check(rows[run])
			f.Claim, f.Run = c, run
			out = append(out, f)
		}
	}
	return out
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

// check checks the claim in one run's rows.
func (c *Claim) check(rows []results.Row) Finding {
	if len(rows) == 0 {
		return Finding{Verdict: NotRun, Measured: "—", Why: "the run holds no rows"}
	}
	rows = RequestRows(rows, c.Request)
	m := c.metric()
	var targets []string
	switch {
	case c.Ratio != nil:
		targets = []string{c.Ratio.Of, c.Ratio.To}
	case c.Ranking != nil:
		targets = c.Ranking.Order
	case c.Winner != nil:
		targets = []string{c.Winner.Target}
		for _, r := range rows {
			if !slices.Contains(targets, r.Target) {
				targets = append(targets, r.Target)
			}
		}
	case c.Tie != nil:
		targets = c.Tie.Targets
	}
	figs := make([]Figure, len(targets))
	for i, t := range targets {
		figs[i] = FigureOf(rows, t, m)
	}
	// What stops a verdict: a target never measured, a generator that fell behind.
	for _, f := range figs {
		switch {
		case len(f.Values) > 0:
		case len(f.Invalid) > 0: // loaded, but nothing measured of the metric: no successful answer
			return Finding{Verdict: Inconclusive, Measured: "—", Why: fmt.Sprintf("%s has no value: %s", f.Target, f.Invalid[0])}
		case f.NotLoaded != "":
			return Finding{Verdict: Untestable, Measured: "—", Why: fmt.Sprintf("%s was not measured: %s", f.Target, f.NotLoaded)}
		default:
			return Finding{Verdict: Untestable, Measured: "—", Why: fmt.Sprintf("%s was not measured: no rows", f.Target)}
		}
	}
	var measured string
	var verdict Verdict
	var why string
	switch {
	case c.Ratio != nil:
		measured, verdict, why = ratio(figs[0], figs[1], c.Ratio.Published)
	case c.Ranking != nil:
		measured, verdict, why = ranking(figs)
	case c.Winner != nil:
		measured, verdict, why = winner(figs)
	case c.Tie != nil:
		measured, verdict, why = tie(figs)
	}
	// A claim never holds on an invalid cell. The generator's fault makes it untestable here (the
	// target's figure is the generator's limit); the target's own failure leaves a contradiction
	// standing, and makes anything else inconclusive.
	var invalid []string
	generator := false
	for _, f := range figs {
		if len(f.Invalid) == 0 {
			continue
		}
		for _, reason := range f.Invalid {
			generator = generator || strings.Contains(reason, "generator")
		}
		invalid = append(invalid, fmt.Sprintf("%s %d of %d (%s)", f.Target, len(f.Invalid), len(f.Invalid)+f.Valid, brief(f.Invalid[0])))
	}
	if len(invalid) > 0 && (verdict != DoesNotHold || generator) {
		if generator {
			verdict = Untestable
		} else {
			verdict = Inconclusive
		}
		why = "measured on invalid cells: " + strings.Join(invalid, "; ")
	} else if len(invalid) > 0 {
		why += "; and on invalid cells: " + strings.Join(invalid, "; ")
	}
	return Finding{Verdict: verdict, Measured: measured, Why: why}
}

// ratio checks "a is published × b".
func ratio(a, b Figure, published float64) (string, Verdict, string) {
	r := a.Median / b.Median
	lo, hi := a.Lo/b.Hi, a.Hi/b.Lo
	if b.Lo <= 0 {
		hi = math.Inf(1)
	}
	if b.Median == 0 {
		r = math.Inf(1)
	}
	kind := "95% interval"
	if a.Range || b.Range {
		kind = "range of the trials"
	}
	measured := fmt.Sprintf("%s× [%s–%s]", factor(r), factor(lo), factor(hi))
	switch {
	case published >= lo && published <= hi && (published == 1 || lo > 1 || hi < 1):
		return measured, Holds, fmt.Sprintf("%s× lies in the %s", factor(published), kind)
	case published >= lo && published <= hi:
		return measured, Inconclusive, fmt.Sprintf("the %s holds both %s× and 1×: the trials cannot tell", kind, factor(published))
	case (published > 1 && lo > 1) || (published < 1 && hi < 1):
		return measured, DoesNotHold, fmt.Sprintf("the direction holds, the size does not: %s× is outside the %s", factor(published), kind)
	}
	return measured, DoesNotHold, fmt.Sprintf("%s× is outside the %s", factor(published), kind)
}

func factor(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "∞"
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// relation writes a pair's order: ">" a better, "<" b better, "~" a tie.
func relation(order int) string {
	switch order {
	case 1:
		return ">"
	case -1:
		return "<"
	}
	return "~"
}

// ranking checks that each figure is better than the next.
func ranking(figs []Figure) (string, Verdict, string) {
	parts := []string{figs[0].Target + " " + figs[0].Metric.Format(figs[0].Median)}
	verdict, untested := Holds, false
	var wrong []string
	for i := 1; i < len(figs); i++ {
		o, tested := better(figs[i-1], figs[i])
		parts = append(parts, relation(o), figs[i].Target+" "+figs[i].Metric.Format(figs[i].Median))
		switch {
		case o < 0:
			verdict = DoesNotHold
			wrong = append(wrong, fmt.Sprintf("%s is better than %s", figs[i].Target, figs[i-1].Target))
		case o == 0 && tested:
			verdict = DoesNotHold
			wrong = append(wrong, fmt.Sprintf("%s and %s tie", figs[i-1].Target, figs[i].Target))
		case o == 0:
			untested = true
			wrong = append(wrong, fmt.Sprintf("%s and %s overlap", figs[i-1].Target, figs[i].Target))
		}
	}
	if verdict == Holds && untested {
		verdict = Inconclusive
	}
	return strings.Join(parts, " "), verdict, rankingWhy(verdict, wrong)
}

func rankingWhy(v Verdict, wrong []string) string {
	if v == Holds {
		return "each is better than the next"
	}
	return strings.Join(wrong, "; ")
}

// winner checks that the first figure is better than each other.
func winner(figs []Figure) (string, Verdict, string) {
	best := figs[0]
	parts := []string{best.Target + " " + best.Metric.Format(best.Median)}
	verdict, untested := Holds, false
	var wrong []string
	for _, f := range figs[1:] {
		o, tested := better(best, f)
		parts = append(parts, fmt.Sprintf("%s %s %s", relation(o), f.Target, f.Metric.Format(f.Median)))
		switch {
		case o < 0:
			verdict = DoesNotHold
			wrong = append(wrong, fmt.Sprintf("%s is better", f.Target))
		case o == 0 && tested:
			verdict = DoesNotHold
			wrong = append(wrong, fmt.Sprintf("%s ties with it", f.Target))
		case o == 0:
			untested = true
			wrong = append(wrong, fmt.Sprintf("%s overlaps it", f.Target))
		}
	}
	if verdict == Holds && untested {
		verdict = Inconclusive
	}
	if verdict == Holds {
		return strings.Join(parts, ", "), verdict, "better than every other target"
	}
	return strings.Join(parts, ", "), verdict, strings.Join(wrong, "; ")
}

// TieMargin is how far apart two figures may be and still tie: a claim of equal performance is
// an equivalence, and no measurement shows two runtimes exactly equal.
const TieMargin = 1.10

// tie checks that every two figures are within TieMargin of each other: it holds when each pair's
// ratio interval lies within the margin, does not hold when one lies wholly outside it.
func tie(figs []Figure) (string, Verdict, string) {
	var parts, apart, unsure []string
	for i, f := range figs {
		parts = append(parts, f.Target+" "+f.Metric.Format(f.Median))
		for _, g := range figs[i+1:] {
			lo, hi := f.Lo/g.Hi, f.Hi/g.Lo
			if g.Lo <= 0 {
				hi = math.Inf(1)
			}
			pair := fmt.Sprintf("%s/%s %s× [%s–%s]", f.Target, g.Target, factor(f.Median/g.Median), factor(lo), factor(hi))
			switch {
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
		return measured, DoesNotHold, fmt.Sprintf("they differ by more than %s: %s", margin, strings.Join(apart, "; "))
	case len(unsure) > 0:
		return measured, Inconclusive, fmt.Sprintf("the interval reaches beyond %s: %s", margin, strings.Join(unsure, "; "))
	}
	return measured, Holds, fmt.Sprintf("within %s of each other", margin)
}

// brief is an invalid reason without its trial and details: "success ratio 0.9659 below 0.99".
func brief(reason string) string {
	if _, rest, ok := strings.Cut(reason, ": "); ok && strings.HasPrefix(reason, "trial ") {
		reason = rest
	}
	if i := strings.Index(reason, " ("); i > 0 {
		reason = reason[:i]
	}
	if i := strings.Index(reason, ": "); i > 0 && strings.HasPrefix(reason, "generator") {
		reason = reason[:i]
	}
	return reason
}
