// Package compare compares two results files cell by cell, the way benchstat compares benchmark
// runs: cells are matched by (scenario, target); for each metric it gives the median of the valid
// trials of each file with its 95% confidence interval, the change, and the Mann–Whitney U
// p-value, and calls a change significant only when p < alpha and the change is at least the
// noise threshold (as Criterion.rs does: back-to-back runs of one server on one machine drift by a
// percent or two, and with several trials a side such drift reaches p < alpha). Cells whose rows were measured
// differently (their fingerprints differ) are refused unless the differing fields are allowed.
// A gate (--fail-on) turns significant changes past a threshold into a failure.
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

// Options say how to compare.
type Options struct {
	Alpha float64
	// NoisePct is the smallest change, in percent of the old median, that can be significant.
	NoisePct float64
	// AllowMismatch lists the fingerprint fields that may differ; "*" allows any.
	AllowMismatch []string
	Gates         []Gate
}

func (o Options) allowed(field string) bool {
	return slices.Contains(o.AllowMismatch, "*") || slices.Contains(o.AllowMismatch, field)
}

// Gate fails the comparison when a metric changes significantly by Percent or more in its
// direction: throughput:-5% fails on a significant drop of 5% or more, p99:+10% on a rise of 10%.
type Gate struct {
	Metric  string
	Percent float64 // signed
}

func (g Gate) String() string {
	sign := "+"
	if math.Signbit(g.Percent) {
		sign = "-"
	}
	return g.Metric + ":" + sign + strconv.FormatFloat(math.Abs(g.Percent), 'f', -1, 64) + "%"
}

// passedBy reports whether a change of pct percent goes past the gate.
func (g Gate) passedBy(pct float64) bool {
	if math.Signbit(g.Percent) {
		return pct <= g.Percent
	}
	return pct >= g.Percent
}

// ParseGates reads "metric:±N%,…".
func ParseGates(spec string) ([]Gate, error) {
	var gates []Gate
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, limit, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("%q: write metric:signed percent, e.g. throughput:-5%%", part)
		}
		if _, known := results.MetricNamed(name); !known {
			return nil, fmt.Errorf("%q: unknown metric %q (metrics: %s)", part, name, metricNames())
		}
		num, isPct := strings.CutSuffix(limit, "%")
		pct, err := strconv.ParseFloat(num, 64)
		if !isPct || err != nil || (num[0] != '+' && num[0] != '-') || math.IsInf(pct, 0) || math.IsNaN(pct) {
			return nil, fmt.Errorf("%q: the limit must be a signed percent: -5%% fails on a drop of 5%% or more, +10%% on a rise of 10%% or more", part)
		}
		if num[0] == '-' {
			pct = -math.Abs(pct) // keep the sign of "-0%"
		}
		gates = append(gates, Gate{Metric: name, Percent: pct})
	}
	if len(gates) == 0 {
		return nil, fmt.Errorf("%q names no gate: e.g. throughput:-5%%,p99:+10%%", spec)
	}
	return gates, nil
}

func metricNames() string {
	var names []string
	for _, m := range results.Metrics {
		if m.Compared {
			names = append(names, m.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Mismatch is a fingerprint field whose values differ between or within the files.
type Mismatch struct {
	Field string `json:"field"`
	// Old and New are the values, several joined by " | " when a file's trials disagree.
	Old string `json:"old"`
	New string `json:"new"`
}

// Change is one metric of one cell, old against new.
type Change struct {
	Metric     results.Metric
	Old, New   stats.Summary
	Percent    float64 // (new/old - 1) × 100; NaN when old is 0
	Comparison stats.Comparison
	// WithinNoise is set when p < alpha but the change is smaller than the noise threshold.
	WithinNoise bool
	// Failed is the gate this change fails, if any.
	Failed *Gate
	// OldRange and NewRange are the least and greatest value of a side whose median has no
	// interval (fewer than stats.MinTrialsForCI): a search's maxima are shown with their range.
	OldRange, NewRange *[2]float64
}

// Significant reports whether the difference is significant at alpha and not within the noise.
func (c Change) Significant() bool { return c.Comparison.Significant() && !c.WithinNoise }

// Cell is one (scenario, target) present in both files.
type Cell struct {
	Scenario, Target     string
	OldTrials, NewTrials int // all trials
	OldValid, NewValid   int
	Mismatches           []Mismatch
	// Refused is set when a mismatch is not allowed: the cell is not compared.
	Refused bool
	// Changes is empty when the cell is refused or a side has no valid trial.
	Changes []Change
	// NoValidNew is set when old had valid trials and new has none: a failure under a gate.
	NoValidNew bool
	// Search: the cell holds --find-max steps; it is compared on its searches' maxima, and its
	// trials and valid trials count searches and those that found a maximum.
	Search bool
	// LeftOld and LeftNew count by reason the valid trials (maxima) of each file left out
	// because the instrument cannot vouch for them (trust.go); they are not in OldValid, NewValid.
	LeftOld, LeftNew map[string]int
}

// Name is "scenario/target".
func (c Cell) Name() string { return c.Scenario + "/" + c.Target }

// Result is the comparison of two files.
type Result struct {
	OldFile, NewFile string
	Alpha            float64
	NoisePct         float64
	Gates            []Gate
	Cells            []Cell
	OnlyOld, OnlyNew []string // cells in one file only, "scenario/target"
}

// Failures are the gate's verdicts against the comparison, one line each. A cell of the old file
// missing from the new one fails: a candidate run stopped before measuring it must not pass.
func (r Result) Failures() []string {
	var out []string
	if len(r.OnlyOld) > 0 && len(r.Gates) > 0 {
		out = append(out, fmt.Sprintf("%d cell(s) of %s missing from %s: %s (a run that stopped before measuring a cell never passes; rerun it, or compare files of the same cells)",
			len(r.OnlyOld), r.OldFile, r.NewFile, strings.Join(r.OnlyOld, ", ")))
	}
	for _, c := range r.Cells {
		if c.NoValidNew && len(r.Gates) > 0 {
			out = append(out, fmt.Sprintf("%s: no valid trial in %s (%d in %s)", c.Name(), r.NewFile, c.OldValid, r.OldFile))
		}
		for _, ch := range c.Changes {
			if ch.Failed != nil {
				out = append(out, fmt.Sprintf("%s: %s %s (p=%.3f) passes %s", c.Name(), ch.Metric.Name, formatPercent(ch.Percent), ch.Comparison.P, ch.Failed))
			}
		}
	}
	return out
}

// Undecided are the gated verdicts the comparison cannot give, one line each, naming the cell,
// the side and the reason: a side without a counted trial (all invalid, or left out as trust.go
// says), too few trials for the Mann–Whitney test to reach alpha, an old median of 0 (no change
// in percent), or a gate that judged no cell. A gate never passes on what it could not judge: any
// of these makes it inconclusive (exit 4), as the paired gate is.
func (r Result) Undecided() []string {
	if len(r.Gates) == 0 {
		return nil
	}
	var out []string
	judged := map[string]bool{} // gated metrics some cell was judged on
	for _, c := range r.Cells {
		if c.Refused {
			continue
		}
		gated := r.gatesOf(c)
		if len(gated) == 0 {
			continue
		}
		for _, side := range []struct {
			name, file    string
			trials, valid int
			left          map[string]int
			failed        bool // the candidate without a valid trial: a failure already
		}{{"old", r.OldFile, c.OldTrials, c.OldValid, c.LeftOld, false}, {"new", r.NewFile, c.NewTrials, c.NewValid, c.LeftNew, c.NoValidNew}} {
			if side.failed {
				for _, g := range gated {
					judged[g.Metric] = true // failed
				}
			}
			if side.valid > 0 || side.failed {
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s %s has 0 %s of %d (%s): no verdict of %s; measure it again",
				c.Name(), side.name, side.file, c.counted(), side.trials, c.notCounted(side.trials, side.left), GatesText(gated)))
		}
		if c.OldValid == 0 || c.NewValid == 0 {
			continue
		}
		if p := stats.MinP(c.OldValid, c.NewValid); p >= r.Alpha {
			need := stats.TrialsToDiffer(r.Alpha)
			out = append(out, fmt.Sprintf("%s: %d+%d %s cannot reach p < %g (Mann–Whitney: the smallest p is %.3g): no verdict of %s; need %d a side (run with --trials %d or more)",
				c.Name(), c.OldValid, c.NewValid, c.counted(), r.Alpha, p, GatesText(gated), need, max(5, need)))
			continue
		}
		for _, ch := range c.Changes {
			if !slices.ContainsFunc(gated, func(g Gate) bool { return g.Metric == ch.Metric.Name }) {
				continue
			}
			if ch.Significant() && math.IsNaN(ch.Percent) {
				out = append(out, fmt.Sprintf("%s: %s of old %s has a median of 0, so its change has no percent: no verdict of %s", c.Name(), ch.Metric.Name, r.OldFile, ch.Metric.Name))
				continue
			}
			judged[ch.Metric.Name] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, g := range r.Gates {
		if !judged[g.Metric] {
			what := "records " + g.Metric
			if m, _ := results.MetricNamed(g.Metric); !m.OfRows() {
				what = "is a --find-max search"
			}
			out = append(out, fmt.Sprintf("gate %s judged no cell: no cell compared %s", g, what))
		}
	}
	return out
}

// gatesOf are the gates that judge cell c: a --find-max cell's maximum, another cell's row metrics.
func (r Result) gatesOf(c Cell) []Gate {
	var out []Gate
	for _, g := range r.Gates {
		if m, _ := results.MetricNamed(g.Metric); m.OfRows() != c.Search {
			out = append(out, g)
		}
	}
	return out
}

// counted is what a cell's verdict counts: valid trials, or a search's maxima.
func (c Cell) counted() string {
	if c.Search {
		return "maxima"
	}
	return "valid trials"
}

// notCounted says why a side's trials (searches) of all count nothing: "2 invalid, 1 not steady".
func (c Cell) notCounted(all int, left map[string]int) string {
	var why []string
	if invalid := all - sum(left); invalid > 0 && c.Search {
		why = append(why, fmt.Sprintf("%d without a maximum", invalid))
	} else if invalid > 0 {
		why = append(why, fmt.Sprintf("%d invalid", invalid))
	}
	return strings.Join(append(why, results.DistrustCounts(left)...), ", ")
}

// Refused are the cells not compared because they were measured differently.
func (r Result) Refused() []Cell {
	var out []Cell
	for _, c := range r.Cells {
		if c.Refused {
			out = append(out, c)
		}
	}
	return out
}

// key is a cell: search says it holds --find-max steps, never compared with a fixed load's rows.
type key struct {
	scenario, target string
	search           bool
}

// isSearch says the cell holds --find-max steps.
func (k key) isSearch() bool { return k.search }

// group collects rows by cell, keeping the order of first appearance.
func group(rows []results.Row) ([]key, map[key][]results.Row) {
	var order []key
	by := map[key][]results.Row{}
	for _, r := range rows {
		k := key{r.Scenario, r.Target, r.Search > 0}
		if _, seen := by[k]; !seen {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	return order, by
}

// Compare compares the cells of two files.
func Compare(oldFile string, old []results.Row, newFile string, new []results.Row, o Options) Result {
	res := Result{OldFile: oldFile, NewFile: newFile, Alpha: o.Alpha, NoisePct: o.NoisePct, Gates: o.Gates}
	oldOrder, oldBy := group(old)
	newOrder, newBy := group(new)
	var oldMax, newMax maxima
	for _, k := range oldOrder {
		if _, ok := newBy[k]; !ok {
			res.OnlyOld = append(res.OnlyOld, k.scenario+"/"+k.target)
			continue
		}
		if k.isSearch() {
			if oldMax == nil {
				oldMax, newMax = maximaOf(old), maximaOf(new)
			}
			res.Cells = append(res.Cells, compareSearches(k, oldBy[k], newBy[k], oldMax[k], newMax[k], o))
			continue
		}
		res.Cells = append(res.Cells, compareCell(k, oldBy[k], newBy[k], o))
	}
	for _, k := range newOrder {
		if _, ok := oldBy[k]; !ok {
			res.OnlyNew = append(res.OnlyNew, k.scenario+"/"+k.target)
		}
	}
	return res
}

// maxima are each find-max cell's searches, as the summary reads them from the steps.
type maxima map[key][]summary.Search

func maximaOf(rows []results.Row) maxima {
	out := maxima{}
	for _, sc := range summary.FromRows(rows).Scenarios {
		for _, t := range sc.Targets {
			out[key{sc.Name, t.Name, true}] = t.Searches
		}
	}
	return out
}

// perStep are the fingerprint fields a find-max search sets step by step: the rate, the in-flight
// bound that follows from it, and the warm-up, none for a step that goes on from one met at its
// rate (bench.MaxSearch.StepWarmup; the others' follows from the step's length, duration_s).
var perStep = []string{"requested_rps", "connections", "warmup_s"}

// compareSearches compares a find-max cell on its searches' maxima, with the test of any metric:
// the Mann–Whitney test of the maxima, the noise threshold, the gates on "max".
func compareSearches(k key, oldRows, newRows []results.Row, old, new []summary.Search, o Options) Cell {
	c := Cell{Scenario: k.scenario, Target: k.target, OldTrials: len(old), NewTrials: len(new), Search: true}
	c.Mismatches = mismatches(oldRows, newRows, perStep...)
	for _, m := range c.Mismatches {
		if !o.allowed(m.Field) {
			c.Refused = true
		}
	}
	c.LeftOld, c.LeftNew = map[string]int{}, map[string]int{}
	values := func(ss []summary.Search, left map[string]int) []float64 {
		var v []float64
		for _, s := range ss {
			if s.Max == 0 {
				continue
			}
			if why := s.Distrust(); why != "" {
				left[why]++
				continue
			}
			v = append(v, float64(s.Max))
		}
		return v
	}
	a, b := values(old, c.LeftOld), values(new, c.LeftNew)
	c.OldValid, c.NewValid = len(a), len(b)
	if c.Refused {
		return c
	}
	c.NoValidNew = len(b) == 0 && len(a) > 0 && len(c.LeftNew) == 0
	if len(a) == 0 || len(b) == 0 {
		return c
	}
	ch := change(results.MustMetric("max"), a, b, o)
	ch.OldRange, ch.NewRange = rangeOf(a, ch.Old), rangeOf(b, ch.New)
	c.Changes = append(c.Changes, ch)
	return c
}

// rangeOf is the least and greatest of values when their median has no interval.
func rangeOf(values []float64, s stats.Summary) *[2]float64 {
	if s.Finite() {
		return nil
	}
	return &[2]float64{slices.Min(values), slices.Max(values)}
}

// change compares metric m's values, old against new, and applies the gates.
func change(m results.Metric, a, b []float64, o Options) Change {
	ch := Change{Metric: m, Old: stats.Summarize(a), New: stats.Summarize(b), Comparison: stats.Compare(a, b, o.Alpha)}
	ch.Percent = math.NaN()
	if ch.Old.Median != 0 {
		ch.Percent = (ch.New.Median/ch.Old.Median - 1) * 100
		ch.WithinNoise = ch.Comparison.Significant() && math.Abs(ch.Percent) < o.NoisePct
	}
	if ch.Significant() && !math.IsNaN(ch.Percent) {
		for _, g := range o.Gates {
			if g.Metric == m.Name && g.passedBy(ch.Percent) {
				ch.Failed = &g
				break
			}
		}
	}
	return ch
}

func compareCell(k key, old, new []results.Row, o Options) Cell {
	c := Cell{Scenario: k.scenario, Target: k.target, OldTrials: len(old), NewTrials: len(new)}
	c.Mismatches = mismatches(old, new)
	for _, m := range c.Mismatches {
		if !o.allowed(m.Field) {
			c.Refused = true
		}
	}
	c.LeftOld, c.LeftNew = map[string]int{}, map[string]int{}
	oldValid, newValid := trusted(old, c.LeftOld), trusted(new, c.LeftNew)
	c.OldValid, c.NewValid = len(oldValid), len(newValid)
	if c.Refused {
		return c
	}
	// A new file whose valid trials were all left out measured something the instrument cannot
	// vouch for: untrusted (Failures), not a candidate without a valid trial.
	c.NoValidNew = len(newValid) == 0 && len(oldValid) > 0 && len(c.LeftNew) == 0
	if len(oldValid) == 0 || len(newValid) == 0 {
		return c
	}
	for _, m := range results.Metrics {
		if !m.Compared || !m.OfRows() {
			continue
		}
		a, b := m.Of(oldValid), m.Of(newValid)
		if m.Optional && allZero(a) && allZero(b) {
			continue // not recorded
		}
		c.Changes = append(c.Changes, change(m, a, b, o))
	}
	return c
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

func valid(rows []results.Row) []results.Row {
	var out []results.Row
	for _, r := range rows {
		if r.Valid {
			out = append(out, r)
		}
	}
	return out
}

// mismatches lists the fingerprint fields not equal across all rows of both files. Fields are
// matched by name: a file older than a field (timeout_s before schema 7) reads as not having it.
func mismatches(old, new []results.Row, skip ...string) []Mismatch {
	var names []string
	for _, rows := range [][]results.Row{old, new} {
		for _, r := range rows {
			for _, f := range r.FingerprintFields() {
				if !slices.Contains(names, f.Name) && !slices.Contains(skip, f.Name) {
					names = append(names, f.Name)
				}
			}
		}
	}
	distinct := func(rows []results.Row, name string) []string {
		var vs []string
		for _, r := range rows {
			v := "(not recorded)"
			fields := r.FingerprintFields()
			if i := slices.IndexFunc(fields, func(f results.Field) bool { return f.Name == name }); i >= 0 {
				v = fields[i].Value
			}
			if !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	var out []Mismatch
	for _, name := range names {
		a, b := distinct(old, name), distinct(new, name)
		if len(a) == 1 && len(b) == 1 && a[0] == b[0] {
			continue
		}
		out = append(out, Mismatch{Field: name, Old: strings.Join(a, " | "), New: strings.Join(b, " | ")})
	}
	return out
}
