package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/summary"
)

// A paired run measures the baseline and the candidate of each target in the same rounds, back
// to back. Each gated metric of each cell is judged on the per-round ratios candidate/baseline
// (their logarithms, so that +10% and −9.1% weigh alike): the Wilcoxon signed-rank test says
// whether it changed, the Hodges–Lehmann estimate and its 90% interval by how much, and two
// one-sided tests whether it stayed within ±limit. Both kinds of p-value are adjusted for the
// number of comparisons (Benjamini–Hochberg) before any verdict.

// Decision is what a paired run concludes about one gated metric of one cell.
type Decision string

const (
	// Equivalent: the change's interval lies inside ±limit (two one-sided tests).
	Equivalent Decision = "equivalent"
	// Improved: a significant change away from the limit, its interval short of the limit.
	Improved Decision = "improved"
	// Regressed: a significant change past the limit in the gate's direction.
	Regressed Decision = "regressed"
	// Inconclusive: none of these; more rounds would likely settle it (SuggestedRounds).
	Inconclusive Decision = "inconclusive"
	// Untestable: the A/A control's noise is such that this run could not have detected a
	// change of the limit's size: no pass can be vouched for.
	Untestable Decision = "untestable"
)

// Passes reports whether the verdict lets a gate pass.
func (v Decision) Passes() bool { return v == Equivalent || v == Improved }

// EquivalenceConfidence is the level of the change's interval: the two one-sided tests at alpha
// 0.05 each hold exactly when the 90% interval lies inside ±limit.
const EquivalenceConfidence = 0.90

// MinRounds is the fewest paired rounds with which the two-sided signed-rank test can reach
// p < 0.05 (2/2⁶ = 0.031) and the 90% interval is finite.
const MinRounds = 6

// DefaultPairedGates are the gates of a paired run given none: the figures a change to a
// server most often moves, at limits a quiet machine can resolve in a dozen rounds.
const DefaultPairedGates = "throughput:-5%,p50:+5%,p99:+10%,cpu-per-request:+10%,memory:+10%"

// DefaultPairedMaxGates is the gate of a paired --find-max run given none: a maximum moves by
// the search's resolution (10% by default), so a finer limit is rarely equivalent.
const DefaultPairedMaxGates = "max:-10%"

// PairedOptions say how to judge a paired run.
type PairedOptions struct {
	Alpha float64
	// Gates are the metrics judged and their limits; the limit is symmetric for equivalence,
	// its sign the direction of a regression.
	Gates []Gate
	// AllowMismatch lists fingerprint fields that may differ between the sides, besides
	// image_id (which a baseline checkout's images always change); "*" allows any.
	AllowMismatch []string
}

// PairedChange is one gated metric of one cell: the candidate against the baseline.
type PairedChange struct {
	Metric          results.Metric
	Gate            Gate
	Base, Candidate stats.Summary // medians of each side's valid trials
	// Rounds are the rounds whose baseline and candidate are both valid: the pairs tested.
	Rounds int
	// Percent is the estimated change, Lo and Hi its 90% interval (±Inf when too few rounds).
	Percent, Lo, Hi float64
	// P is the signed-rank test's two-sided p-value of "no change", PEquivalent the larger of the
	// two one-sided tests against ±limit; PAdj and PEquivalentAdj after Benjamini–Hochberg.
	P, PAdj, PEquivalent, PEquivalentAdj float64
	Decision                             Decision
	// SuggestedRounds are about how many rounds would settle an inconclusive verdict, from the
	// spread observed; 0 when not inconclusive.
	SuggestedRounds int
	// The A/A control of the cell (NaN without one): NoiseFloor is the spread in percent of one
	// round's difference between two measurements of the baseline, Detectable the smallest
	// change that this run's rounds would detect four times in five.
	AARounds               int
	NoiseFloor, Detectable float64

	diffs []float64 // per-round log ratios
}

// HalfWidth is half the interval's width in percent; +Inf when the interval is infinite.
func (c PairedChange) HalfWidth() float64 { return (c.Hi - c.Lo) / 2 }

// PairedCell is one (scenario, target) of a paired run.
type PairedCell struct {
	Scenario, Target      string
	BaseTrials, BaseValid int
	CandTrials, CandValid int
	AATrials, AAValid     int
	Mismatches            []Mismatch // between the sides
	Refused               bool
	Changes               []PairedChange
	NotRecorded           []string // gated metrics the rows do not record (a service iotbench did not start)
	NoValidCandidate      bool
	// Unmeasured is set when no candidate trial is valid because the generator was short (a
	// busy machine): nothing is known, which is not a failure of the candidate.
	Unmeasured bool
	// Search: the cell holds --find-max searches, judged on their maxima round by round (a
	// side's trials count its searches, its valid ones those that found a maximum).
	Search bool
	// LeftOut counts by reason the valid trials (searches) of each side left out of the verdicts
	// because the instrument cannot vouch for them (trust.go).
	LeftOut                 map[string]map[string]int
	baseRows, candRows, aas []results.Row
}

// Name is "scenario/target".
func (c PairedCell) Name() string { return c.Scenario + "/" + c.Target }

// PairedResult is the analysis of a paired run.
type PairedResult struct {
	File   string
	Alpha  float64
	Gates  []Gate
	Cells  []PairedCell
	Rounds int // the most rounds of any cell
	// Comparisons is the number of (cell, metric) tests adjusted together.
	Comparisons int
	// Until says how an adaptive run ended; empty when it was not adaptive.
	Until string
}

// HasSearches reports whether rows hold --find-max steps.
func HasSearches(rows []results.Row) bool {
	return slices.ContainsFunc(rows, func(r results.Row) bool { return r.Search > 0 })
}

// IsPaired reports whether rows come from a paired run.
func IsPaired(rows []results.Row) bool {
	return slices.ContainsFunc(rows, func(r results.Row) bool { return r.Variant != "" })
}

// AnalyzePaired judges the gated metrics of every cell of a paired run's rows.
func AnalyzePaired(file string, rows []results.Row, o PairedOptions) PairedResult {
	res := PairedResult{File: file, Alpha: o.Alpha, Gates: o.Gates}
	order, by := group(rows)
	for _, k := range order {
		if k.isSearch() {
			res.Cells = append(res.Cells, pairedSearches(k, by[k], o))
			continue
		}
		c := PairedCell{Scenario: k.scenario, Target: k.target, LeftOut: map[string]map[string]int{}}
		for _, r := range by[k] {
			switch r.Variant {
			case results.VariantBase:
				c.baseRows = append(c.baseRows, r)
			case results.VariantCandidate:
				c.candRows = append(c.candRows, r)
			case results.VariantAA1, results.VariantAA2:
				c.aas = append(c.aas, r)
			}
		}
		c.BaseTrials, c.BaseValid = len(c.baseRows), len(valid(c.baseRows))
		c.CandTrials, c.CandValid = len(c.candRows), len(valid(c.candRows))
		c.AATrials, c.AAValid = len(c.aas), len(valid(c.aas))
		if len(c.baseRows) > 0 && len(c.candRows) > 0 {
			for _, m := range mismatches(c.baseRows, c.candRows) {
				c.Mismatches = append(c.Mismatches, m)
				if m.Field != "image_id" && !slices.Contains(o.AllowMismatch, "*") && !slices.Contains(o.AllowMismatch, m.Field) {
					c.Refused = true
				}
			}
		}
		// A candidate without a valid trial fails the gate, unless the generator, not the
		// candidate, is what every one of its trials was invalid for (a busy machine).
		c.NoValidCandidate = c.CandValid == 0 && c.BaseValid > 0 && slices.ContainsFunc(c.candRows, func(r results.Row) bool {
			return !r.Fault.Generator()
		})
		c.Unmeasured = c.CandValid == 0 && !c.NoValidCandidate
		if !c.Refused {
			c.Changes, c.NotRecorded = pairedChanges(c, o)
		}
		res.Cells = append(res.Cells, c)
	}
	var ps, pes []float64
	for _, c := range res.Cells {
		for _, ch := range c.Changes {
			ps, pes = append(ps, ch.P), append(pes, ch.PEquivalent)
			res.Rounds = max(res.Rounds, ch.Rounds)
		}
	}
	res.Comparisons = len(ps)
	adj, adjEq := stats.AdjustBH(ps), stats.AdjustBH(pes)
	i := 0
	for ci := range res.Cells {
		for j := range res.Cells[ci].Changes {
			ch := &res.Cells[ci].Changes[j]
			ch.PAdj, ch.PEquivalentAdj = adj[i], adjEq[i]
			i++
			judge(ch, o.Alpha, res.Comparisons)
		}
	}
	return res
}

// pairedChanges are a cell's gated metrics, pair by pair: the rounds whose baseline and
// candidate are both valid and trusted.
func pairedChanges(c PairedCell, o PairedOptions) ([]PairedChange, []string) {
	base, cand := trustedBy(c.baseRows, c.LeftOut, "baseline"), trustedBy(c.candRows, c.LeftOut, "candidate")
	aa := map[int][2]*results.Row{}
	for i := range c.aas {
		r := &c.aas[i]
		if !r.Valid || r.Distrust() != "" {
			continue
		}
		p := aa[r.Trial]
		if r.Variant == results.VariantAA1 {
			p[0] = r
		} else {
			p[1] = r
		}
		aa[r.Trial] = p
	}
	var trials []int
	for t := range base {
		if cand[t] != nil {
			trials = append(trials, t)
		}
	}
	slices.Sort(trials)
	var out []PairedChange
	var notRecorded []string
	for _, g := range o.Gates {
		m, _ := results.MetricNamed(g.Metric)
		if !m.OfRows() {
			continue // a search's maximum: judged on the searches (pairedSearches)
		}
		var bs, cs []float64
		for _, t := range trials {
			bs, cs = append(bs, m.Value(*base[t])), append(cs, m.Value(*cand[t]))
		}
		if len(bs) == 0 {
			continue
		}
		if m.Optional && allZero(bs) && allZero(cs) {
			notRecorded = append(notRecorded, m.Name)
			continue
		}
		var a1, a2 []float64
		for _, p := range aa {
			if p[0] != nil && p[1] != nil {
				a1, a2 = append(a1, m.Value(*p[0])), append(a2, m.Value(*p[1]))
			}
		}
		out = append(out, pairedChange(m, g, bs, cs, valuesOf(m, rowsOf(base)), valuesOf(m, rowsOf(cand)), a1, a2, o.Alpha))
	}
	return out, notRecorded
}

// trustedBy are a side's valid rows a verdict may rest on, by trial; left counts the others
// under the side's name.
func trustedBy(rows []results.Row, left map[string]map[string]int, side string) map[int]*results.Row {
	counts := map[string]int{}
	kept := trusted(rows, counts)
	if len(counts) > 0 {
		left[side] = counts
	}
	out := map[int]*results.Row{}
	for i := range kept {
		out[kept[i].Trial] = &kept[i]
	}
	return out
}

func rowsOf(by map[int]*results.Row) []results.Row {
	var out []results.Row
	for _, r := range by {
		out = append(out, *r)
	}
	return out
}

// pairedChange judges one gated metric from its per-round pairs (bs, cs), each side's values
// for its medians, and the A/A control's pairs (a1, a2).
func pairedChange(m results.Metric, g Gate, bs, cs, base, cand, a1, a2 []float64, alpha float64) PairedChange {
	ch := PairedChange{Metric: m, Gate: g, Rounds: len(bs), Base: stats.Summarize(base), Candidate: stats.Summarize(cand),
		NoiseFloor: math.NaN(), Detectable: math.NaN()}
	ch.diffs = logRatios(bs, cs)
	shift := stats.ShiftInterval(ch.diffs, EquivalenceConfidence)
	ch.Percent, ch.Lo, ch.Hi = pct(shift.Estimate), math.Inf(-1), math.Inf(1)
	if shift.Finite() {
		ch.Lo, ch.Hi = pct(shift.Lo), pct(shift.Hi)
	}
	ch.P = stats.SignedRankTest(ch.diffs, 0).TwoSided
	limit := math.Abs(g.Percent) / 100
	ch.PEquivalent = stats.Equivalence(ch.diffs, math.Log(1-math.Min(limit, 0.999)), math.Log(1+limit))
	ch.AARounds = len(a1)
	if len(a1) >= 2 {
		sd := stats.StdDev(logRatios(a1, a2))
		ch.NoiseFloor = pct(sd)
		// z(1 − alpha/2) + z(0.8): significant at alpha with 80% power.
		ch.Detectable = pct(stats.Detectable(sd, ch.Rounds, alpha, 0.8))
	}
	return ch
}

// pairedSearches judges a --find-max cell of a paired run on its searches' maxima. Every round
// searches the baseline and the candidate once each, in the plan's order, so a side's k-th
// search is its search of round k: the rounds whose two searches both found a maximum (and
// rest on a calibration within its limits) are the pairs tested, with the tests of any metric.
func pairedSearches(k key, rows []results.Row, o PairedOptions) PairedCell {
	c := PairedCell{Scenario: k.scenario, Target: k.target, Search: true, LeftOut: map[string]map[string]int{}}
	bySide := map[string][]results.Row{}
	for _, r := range rows {
		bySide[r.Variant] = append(bySide[r.Variant], r)
	}
	c.baseRows, c.candRows = bySide[results.VariantBase], bySide[results.VariantCandidate]
	c.aas = append(slices.Clone(bySide[results.VariantAA1]), bySide[results.VariantAA2]...)
	if len(c.baseRows) > 0 && len(c.candRows) > 0 {
		for _, m := range mismatches(c.baseRows, c.candRows, perStep...) {
			c.Mismatches = append(c.Mismatches, m)
			if m.Field != "image_id" && !slices.Contains(o.AllowMismatch, "*") && !slices.Contains(o.AllowMismatch, m.Field) {
				c.Refused = true
			}
		}
	}
	// Each side's maxima by round (0: none, or not trusted), from the summary's reading of the steps.
	found := map[string][]float64{}
	for _, sc := range summary.FromRows(rows).Scenarios {
		for _, t := range sc.Targets {
			for _, s := range t.Searches {
				side := s.Steps[0].Variant
				v := float64(s.Max)
				if why := s.Distrust(); why != "" && v > 0 {
					if c.LeftOut[sideName[side]] == nil {
						c.LeftOut[sideName[side]] = map[string]int{}
					}
					c.LeftOut[sideName[side]][why]++
					v = 0
				}
				found[side] = append(found[side], v)
			}
		}
	}
	positive := func(xs []float64) []float64 {
		var out []float64
		for _, x := range xs {
			if x > 0 {
				out = append(out, x)
			}
		}
		return out
	}
	base, cand := found[results.VariantBase], found[results.VariantCandidate]
	c.BaseTrials, c.BaseValid = len(base), len(positive(base))
	c.CandTrials, c.CandValid = len(cand), len(positive(cand))
	aa1, aa2 := found[results.VariantAA1], found[results.VariantAA2]
	c.AATrials, c.AAValid = len(aa1)+len(aa2), len(positive(aa1))+len(positive(aa2))
	// A candidate whose every search ended without a maximum, where the baseline found one, fails.
	c.NoValidCandidate = c.CandValid == 0 && c.BaseValid > 0 && len(c.LeftOut["candidate"]) == 0
	if c.Refused {
		return c
	}
	var bs, cs, a1, a2 []float64
	for i := range min(len(base), len(cand)) {
		if base[i] > 0 && cand[i] > 0 {
			bs, cs = append(bs, base[i]), append(cs, cand[i])
		}
	}
	for i := range min(len(aa1), len(aa2)) {
		if aa1[i] > 0 && aa2[i] > 0 {
			a1, a2 = append(a1, aa1[i]), append(a2, aa2[i])
		}
	}
	for _, g := range o.Gates {
		m, _ := results.MetricNamed(g.Metric)
		if m.OfRows() || len(bs) == 0 {
			continue // a step's figures are at whatever rate the search tried: only the maxima compare
		}
		c.Changes = append(c.Changes, pairedChange(m, g, bs, cs, orNaN(positive(base)), orNaN(positive(cand)), a1, a2, o.Alpha))
	}
	return c
}

// sideName names a variant in the notes.
var sideName = map[string]string{results.VariantBase: "baseline", results.VariantCandidate: "candidate",
	results.VariantAA1: "A/A", results.VariantAA2: "A/A"}

func orNaN(v []float64) []float64 {
	if len(v) == 0 {
		return []float64{math.NaN()}
	}
	return v
}

func valuesOf(m results.Metric, rows []results.Row) []float64 { return orNaN(m.Of(rows)) }

// logRatios are ln(c/b) per round; where a value is not positive (a figure that can be 0), the
// difference relative to the baseline's median instead.
func logRatios(b, c []float64) []float64 {
	out := make([]float64, len(b))
	positive := !slices.ContainsFunc(b, func(x float64) bool { return x <= 0 }) && !slices.ContainsFunc(c, func(x float64) bool { return x <= 0 })
	scale := stats.Summarize(b).Median
	for i := range b {
		switch {
		case positive:
			out[i] = math.Log(c[i] / b[i])
		case scale != 0:
			// A fall to nothing is a fall of 100%: bounded, so that no ratio is infinite.
			out[i] = math.Log1p(math.Max((c[i]-b[i])/math.Abs(scale), -0.999))
		}
	}
	return out
}

// pct turns a log ratio into a change in percent.
func pct(x float64) float64 { return math.Expm1(x) * 100 }

// judge gives ch its verdict from its adjusted p-values, and an inconclusive one a number of
// rounds likely to settle it; m is the number of comparisons adjusted together.
func judge(ch *PairedChange, alpha float64, m int) {
	limit := math.Abs(ch.Gate.Percent)
	// bad turns a change into its size in the gate's direction: positive is worse.
	bad := func(p float64) float64 {
		if math.Signbit(ch.Gate.Percent) {
			return -p
		}
		return p
	}
	worstBound := math.Max(bad(ch.Lo), bad(ch.Hi))
	significant := ch.PAdj < alpha
	switch {
	case significant && bad(ch.Percent) >= limit:
		ch.Decision = Regressed
	case ch.PEquivalentAdj < alpha:
		ch.Decision = Equivalent
	case significant && bad(ch.Percent) < 0 && worstBound < limit:
		ch.Decision = Improved
	default:
		ch.Decision = Inconclusive
	}
	if ch.Decision != Regressed && ch.Detectable > limit {
		ch.Decision = Untestable
	}
	if ch.Decision == Inconclusive {
		ch.SuggestedRounds = max(suggestRounds(ch, bad(ch.Percent)), fewestRounds(alpha, m))
	}
}

// MaxSuggestedRounds caps the suggestion: past it, the change sits too near the limit for more
// rounds to settle it at any reasonable cost.
const MaxSuggestedRounds = 1000

// suggestRounds estimates the rounds that would settle an inconclusive change of size b in the
// gate's direction (percent): the interval shrinks as 1/√rounds, and must either fit inside
// ±limit or, for a change past the limit, leave 0 outside its 95% counterpart.
func suggestRounds(ch *PairedChange, b float64) int {
	n := float64(ch.Rounds)
	h := (math.Log1p(ch.Hi/100) - math.Log1p(ch.Lo/100)) / 2 // in log ratios, as the test sees it
	if math.IsInf(h, 0) || math.IsNaN(h) {
		sd := stats.StdDev(ch.diffs)
		if len(ch.diffs) < 2 || sd == 0 {
			return max(MinRounds, ch.Rounds+1)
		}
		h = stats.HalfWidth(sd, ch.Rounds, EquivalenceConfidence)
	}
	limit := math.Log1p(math.Abs(ch.Gate.Percent) / 100)
	size := math.Abs(math.Log1p(b / 100))
	var want float64 // the half-width that would settle it
	if size < limit {
		want = limit - size
	} else {
		// The 90% interval whose 95% counterpart reaches just to 0.
		want = size * stats.NormalQuantile((1+EquivalenceConfidence)/2) / stats.NormalQuantile((1+stats.Confidence)/2)
	}
	if want <= 0 {
		return MaxSuggestedRounds
	}
	need := math.Ceil(stats.SampleSize(ch.Rounds, h, want))
	switch {
	case math.IsNaN(need) || need > MaxSuggestedRounds:
		return MaxSuggestedRounds
	case need <= n:
		return max(MinRounds, int(n)+1)
	}
	return max(MinRounds, int(need))
}

// fewestRounds is the fewest rounds whose most extreme outcome (every round on one side: a
// one-sided p of 2⁻ⁿ, two-sided 2¹⁻ⁿ) stays under alpha after an adjustment over m comparisons
// at its worst (×m): below it, no verdict but inconclusive is possible.
func fewestRounds(alpha float64, m int) int {
	return max(MinRounds, int(math.Ceil(math.Log2(float64(max(m, 1))/alpha)))+1)
}

// Failures are the reasons a gate fails: regressions and candidates without a valid trial.
func (r PairedResult) Failures() []string {
	var out []string
	for _, c := range r.Cells {
		if c.NoValidCandidate {
			out = append(out, fmt.Sprintf("%s: no valid trial of the candidate (%d of the baseline)", c.Name(), c.BaseValid))
		}
		for _, ch := range c.Changes {
			if ch.Decision == Regressed {
				out = append(out, fmt.Sprintf("%s: %s regressed %s %s (p=%.3g adjusted) past %s", c.Name(), ch.Metric.Name, formatPercent(ch.Percent), intervalText(ch), ch.PAdj, ch.Gate))
			}
		}
	}
	return out
}

// Undecided are the comparisons neither passed nor failed: inconclusive, untestable, or a cell
// without a valid pair.
func (r PairedResult) Undecided() []string {
	var out []string
	for _, c := range r.Cells {
		if len(c.Changes) == 0 && !c.Refused && !c.NoValidCandidate {
			if c.Unmeasured {
				out = append(out, fmt.Sprintf("%s: no valid trial of the candidate, every one judged delayed by the load generator (a busy machine): nothing measured", c.Name()))
			} else if len(c.NotRecorded) > 0 && len(c.NotRecorded) == len(r.Gates) {
				out = append(out, fmt.Sprintf("%s: none of the gated metrics is recorded (%s): nothing judged", c.Name(), strings.Join(c.NotRecorded, ", ")))
			} else {
				out = append(out, fmt.Sprintf("%s: no round with a valid baseline and candidate (baseline %s; candidate %s): no verdict; measure it again",
					c.Name(), c.sideText(c.BaseTrials, c.BaseValid, "baseline"), c.sideText(c.CandTrials, c.CandValid, "candidate")))
			}
		}
		for _, ch := range c.Changes {
			switch ch.Decision {
			case Inconclusive:
				// Rounds lost to invalid trials are lost again: ask for as many more trials.
				trials := ch.SuggestedRounds
				if planned := min(c.BaseTrials, c.CandTrials); ch.Rounds > 0 && planned > ch.Rounds {
					trials = int(math.Ceil(float64(trials) * float64(planned) / float64(ch.Rounds)))
				}
				more := fmt.Sprintf("about %d valid rounds would likely settle it (--trials %d)", ch.SuggestedRounds, trials)
				if ch.SuggestedRounds >= MaxSuggestedRounds {
					more = fmt.Sprintf("the change sits at the limit: more than %d rounds", MaxSuggestedRounds)
				}
				limit := math.Abs(ch.Gate.Percent)
				why := fmt.Sprintf("neither inside ±%g%% nor significantly past it", limit)
				worse := ch.Percent
				if math.Signbit(ch.Gate.Percent) {
					worse = -worse
				}
				switch {
				case stats.SignedRankMinP(ch.Rounds) >= r.Alpha:
					why = fmt.Sprintf("too few to reach p < %g in any test (the smallest p of %d rounds is %.3g)", r.Alpha, ch.Rounds, stats.SignedRankMinP(ch.Rounds))
				case worse >= limit:
					why = fmt.Sprintf("past %s, but over too few rounds to be significant after the adjustment over %d comparison(s) (p=%.3g)", ch.Gate, r.Comparisons, ch.PAdj)
				case ch.Lo > -limit && ch.Hi < limit:
					why = fmt.Sprintf("inside ±%g%%, but over too few rounds for the equivalence tests to hold after the adjustment over %d comparison(s) (p=%.3g)", limit, r.Comparisons, ch.PEquivalentAdj)
				}
				out = append(out, fmt.Sprintf("%s: %s %s %s over %d rounds, %s: %s",
					c.Name(), ch.Metric.Name, formatPercent(ch.Percent), intervalText(ch), ch.Rounds, why, more))
			case Untestable:
				out = append(out, fmt.Sprintf("%s: %s limit ±%g%% is under what this run could detect (%.1f%%, from the A/A control's noise of ±%.1f%% a round over %d rounds): not testable here, not passed",
					c.Name(), ch.Metric.Name, math.Abs(ch.Gate.Percent), ch.Detectable, ch.NoiseFloor, ch.Rounds))
			}
		}
	}
	return out
}

// sideText says how many of a side's trials (searches) count, and why the others do not: "1 of
// 4 valid, 3 invalid" or "4 of 4 valid, left out: 4 calibration missed its limits".
func (c PairedCell) sideText(trials, valid int, side string) string {
	what := "valid"
	if c.Search {
		what = "with a maximum"
	}
	s := fmt.Sprintf("%d of %d %s", valid, trials, what)
	left := c.LeftOut[side]
	if invalid := trials - valid; invalid > 0 && !c.Search {
		s += fmt.Sprintf(", %d invalid", invalid)
	} else if invalid > 0 {
		s += fmt.Sprintf(", %d without one", invalid-sum(left))
	}
	if counts := results.DistrustCounts(left); len(counts) > 0 {
		s += ", left out: " + strings.Join(counts, ", ")
	}
	return s
}

// Refused are the cells whose sides were measured differently.
func (r PairedResult) Refused() []PairedCell {
	var out []PairedCell
	for _, c := range r.Cells {
		if c.Refused {
			out = append(out, c)
		}
	}
	return out
}

// Counts is how many comparisons got each verdict.
func (r PairedResult) Counts() map[Decision]int {
	n := map[Decision]int{}
	for _, c := range r.Cells {
		for _, ch := range c.Changes {
			n[ch.Decision]++
		}
	}
	return n
}

// Decision is the run's: regressed when anything failed, inconclusive when anything is
// undecided, else equivalent (every gated metric equivalent or improved).
func (r PairedResult) Decision() Decision {
	switch {
	case len(r.Failures()) > 0:
		return Regressed
	case len(r.Undecided()) > 0:
		return Inconclusive
	}
	return Equivalent
}

// Widest is the widest half-width, in percent, of the intervals of the named metrics (every
// gated one when names is empty), and where it is.
func (r PairedResult) Widest(metric string) (float64, string) {
	w, where := 0.0, ""
	for _, c := range r.Cells {
		for _, ch := range c.Changes {
			if ch.Metric.Name == metric && !(ch.HalfWidth() <= w) {
				w, where = ch.HalfWidth(), c.Name()
			}
		}
	}
	return w, where
}

// notRecorded reports whether no cell records metric (every one lists it as not recorded).
func (r PairedResult) notRecorded(metric string) bool {
	for _, c := range r.Cells {
		if !slices.Contains(c.NotRecorded, metric) {
			return false
		}
	}
	return len(r.Cells) > 0
}

func intervalText(ch PairedChange) string {
	if math.IsInf(ch.Lo, 0) || math.IsInf(ch.Hi, 0) {
		return "[±∞]"
	}
	return "[" + formatPercent(ch.Lo) + ", " + formatPercent(ch.Hi) + "]"
}

// Until is a width asked of the change's interval: --until 'p99:±3%'.
type Until struct {
	Metric  string
	Percent float64 // the largest half-width
}

func (u Until) String() string {
	return u.Metric + ":±" + strconv.FormatFloat(u.Percent, 'f', -1, 64) + "%"
}

// ParseUntil reads "metric:±N%,…" (the ± may be left out).
func ParseUntil(spec string) ([]Until, error) {
	var out []Until
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, limit, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%q: write metric:±percent, e.g. p99:±3%%", part)
		}
		if _, known := results.MetricNamed(name); !known {
			return nil, fmt.Errorf("%q: unknown metric %q (metrics: %s)", part, name, metricNames())
		}
		num, isPct := strings.CutSuffix(limit, "%")
		num = strings.TrimPrefix(strings.TrimPrefix(num, "±"), "+-")
		p, err := strconv.ParseFloat(num, 64)
		if !isPct || err != nil || !(p > 0 && p < 100) {
			return nil, fmt.Errorf("%q: the width must be a percent between 0 and 100, e.g. p99:±3%%", part)
		}
		out = append(out, Until{Metric: name, Percent: p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q names no metric: e.g. p99:±3%%", spec)
	}
	return out, nil
}

// Reached reports whether every interval is as narrow as asked, each from at least the rounds
// with which its tests can decide at all (an interval narrow enough over too few rounds is not yet
// an answer), and if not, the first that is not.
func (r PairedResult) Reached(until []Until) (bool, string) {
	fewest := fewestRounds(r.Alpha, r.Comparisons)
	for _, u := range until {
		w, where := r.Widest(u.Metric)
		if where == "" && r.notRecorded(u.Metric) {
			continue // nothing to narrow: the notes say it is not recorded
		}
		if where == "" {
			return false, fmt.Sprintf("%s: no round with a valid baseline and candidate yet", u.Metric)
		}
		if !(w <= u.Percent) {
			width := fmt.Sprintf("±%.1f%%", w)
			if math.IsInf(w, 0) {
				width = "±∞"
			}
			return false, fmt.Sprintf("%s of %s %s (asked %s)", u.Metric, where, width, u)
		}
		for _, c := range r.Cells {
			for _, ch := range c.Changes {
				if ch.Metric.Name == u.Metric && ch.Rounds < fewest {
					return false, fmt.Sprintf("%s of %s: %d valid round(s), fewer than the %d a verdict may need after the adjustment over %d comparison(s)", u.Metric, c.Name(), ch.Rounds, fewest, r.Comparisons)
				}
			}
		}
	}
	return true, ""
}
