package summary

import (
	"fmt"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/limit"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/units"
)

// Search is one --find-max search of a target, as its steps in the results file tell it.
type Search struct {
	// Max is the highest rate that met the SLO in two steps with fewer than two failing (the
	// vote internal/maxrate confirms a maximum by); 0 when the search found none.
	Max int
	// GeneratorLimited: the generator could not send a rate on time, so rates from there up were
	// not measured: the target's maximum is at least Max (perhaps met once, when the generator's
	// limit ended the search).
	GeneratorLimited bool
	// AtLimit: no step ran above Max (repeated ones aside), so the search ended at the most it
	// asks (its limit): the target's maximum is at least Max, and was not measured.
	AtLimit bool
	// Failed says why the search has no result: its target was never loaded, or failed the
	// stored-row check.
	Failed string
	// Ended is the reason of its last step that neither met nor failed the SLO (the target
	// exited): why a search may have ended without a maximum.
	Ended string
	Steps []results.Row
}

// searchesOf splits a find-max scenario's rows, in file order, into each target's searches, by
// the search each step belongs to.
func searchesOf(rows []results.Row, nameOf func(results.Row) string, source func(i int) int) map[string][]Search {
	out := map[string][]Search{}
	type searchKey struct {
		name           string
		source, search int
	}
	at := map[searchKey]int{} // the search's index in out[name]
	for i, r := range rows {
		name := nameOf(r)
		k := searchKey{name, source(i), r.Search}
		j, ok := at[k]
		if !ok {
			j = len(out[name])
			at[k] = j
			out[name] = append(out[name], Search{})
		}
		out[name][j].Steps = append(out[name][j].Steps, r)
	}
	for _, list := range out {
		for j := range list {
			list[j].judge()
		}
	}
	return out
}

// judge finds the search's maximum from its steps: each rate's steps that met the SLO and that
// did not, as the search counted them (steps repeated because other work disturbed them, and
// steps at percentages of the maximum, decide nothing above it).
func (s *Search) judge() {
	s.Max, s.GeneratorLimited, s.Failed, s.Ended = 0, false, "", ""
	met, failed := map[int]int{}, map[int]int{}
	for _, r := range s.Steps {
		switch {
		case !r.Loaded() || r.Fault == fault.Unstored:
			s.Failed = r.InvalidReason
		case r.Valid:
			met[r.RequestedRPS]++
		case r.Fault == fault.SLONotMet:
			failed[r.RequestedRPS]++
		case r.Fault == fault.GeneratorLimited:
			s.GeneratorLimited = true
		case r.Fault != fault.Repeated:
			s.Ended = r.InvalidReason
		}
	}
	if s.Failed != "" {
		return
	}
	for rate, n := range met {
		if maxrate.Met(n, failed[rate], s.GeneratorLimited) && rate > s.Max {
			s.Max = rate
		}
	}
	s.AtLimit = s.Max > 0 && !s.GeneratorLimited && !slices.ContainsFunc(s.Steps, func(r results.Row) bool {
		return r.RequestedRPS > s.Max && r.Fault != fault.Repeated
	})
}

// Limit is what limited the search at its maximum: what the steps at the lowest rate above it
// that failed the SLO show (the rate it could not sustain), else its steps at the maximum; none
// without a maximum.
func (s Search) Limit() limit.Limit {
	if s.Max == 0 {
		return limit.Limit{}
	}
	var above, at *results.Row
	for i, r := range s.Steps {
		switch {
		case r.Fault == fault.SLONotMet && r.RequestedRPS > s.Max && (above == nil || r.RequestedRPS < above.RequestedRPS):
			above = &s.Steps[i]
		case r.Valid && r.RequestedRPS == s.Max && at == nil:
			at = &s.Steps[i]
		}
	}
	switch {
	case above != nil:
		return above.Limit()
	case at != nil:
		return at.Limit()
	}
	return limit.Limit{}
}

// Limit is what limited the target at its maximum: the commonest over its trusted searches,
// with the figures of the first that shows it; none without a maximum.
func (t Target) Limit() limit.Limit {
	var found []limit.Limit
	count := map[limit.Kind]int{}
	for _, s := range t.Searches {
		if l := s.Limit(); l.Kind != limit.None && s.Distrust() == "" {
			found = append(found, l)
			count[l.Kind]++
		}
	}
	var best limit.Limit
	for _, l := range found {
		if count[l.Kind] > count[best.Kind] {
			best = l
		}
	}
	return best
}

// atMax are the valid steps at each trusted search's maximum: what the target's maximum costs.
func (t *Target) atMax() []Cell {
	var out []Cell
	for _, s := range t.Searches {
		if s.Max == 0 || s.Distrust() != "" {
			continue
		}
		for _, c := range t.Cells {
			if c.Row.Valid && c.Row.RequestedRPS == s.Max && slices.ContainsFunc(s.Steps, func(r results.Row) bool { return r.Trial == c.Row.Trial }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Distrust says why the search's maximum carries no verdict and no rank: a step whose calibration
// missed its limits (a step that was not steady already failed its SLO, so no maximum rests on it).
func (s Search) Distrust() string {
	for _, r := range s.Steps {
		if why := r.Distrust(); why == results.DistrustCalibration {
			return why
		}
	}
	return ""
}

// Clumped says a step at the search's maximum that met the SLO sent its arrivals not as
// intended (the arrivals self-check: in bursts): the target met bursts there, which only raise
// its latency, so its maximum may be higher than the search found.
func (s Search) Clumped() bool {
	return s.Max > 0 && slices.ContainsFunc(s.Steps, func(r results.Row) bool {
		return r.Valid && r.RequestedRPS == s.Max && r.ArrivalJudged && !r.ArrivalAsIntended
	})
}

// clumpedMaxima says of how many of its trusted maxima a step met the SLO with clumped arrivals.
func (t Target) clumpedMaxima() (clumped, trusted int) {
	for _, s := range t.Searches {
		if s.Max > 0 && s.Distrust() == "" {
			trusted++
			if s.Clumped() {
				clumped++
			}
		}
	}
	return clumped, trusted
}

// Maxima are the maximum of each search that found one the self-checks trust.
func (t Target) Maxima() []float64 {
	var out []float64
	for _, s := range t.Searches {
		if s.Max > 0 && s.Distrust() == "" {
			out = append(out, float64(s.Max))
		}
	}
	return out
}

// distrustedMaxima counts the searches that found a maximum the self-checks distrust.
func (t Target) distrustedMaxima() int {
	n := 0
	for _, s := range t.Searches {
		if s.Max > 0 && s.Distrust() != "" {
			n++
		}
	}
	return n
}

// busyHost says how many of t's loaded steps were measured while other work or the hypervisor
// took the CPUs (row.Disturbed: those measured again, which only a disturbance repeats, and those
// kept because they met the SLO all the same), and how many of those were measured again
// (fault.Repeated), when the disturbed were a third or more of them (and 3 at least): a search on
// a busy host; zeros otherwise. A step disturbed now and then is a moment's disturbance; a third
// is a host busy throughout, where the steps judged undisturbed between them may have been
// disturbed below what a look can tell (a make run under steal of 0.1–0.75 cores found
// spring-mvc-virtual's maximum at half its usual, 12 of its 21 steps measured again; another,
// bun-native's with 6 of 19 measured again and 7 more kept while disturbed).
func (t Target) busyHost() (disturbed, again, loaded int) {
	for _, s := range t.Searches {
		for _, r := range s.Steps {
			if r.Disturbed {
				disturbed++
			}
			if r.Fault == fault.Repeated {
				again++
			}
			if r.Loaded() {
				loaded++
			}
		}
	}
	if disturbed < 3 || 3*disturbed < loaded {
		return 0, 0, 0
	}
	return disturbed, again, loaded
}

// AtLeastMax says a search whose maximum is trusted stopped at the generator's limit or at its
// own: the maximum is at least Max.
func (t Target) AtLeastMax() bool {
	return t.boundedBy(func(s Search) bool { return s.GeneratorLimited || s.AtLimit })
}

// GeneratorLimitedMax says a search whose maximum is trusted stopped at the generator's limit.
func (t Target) GeneratorLimitedMax() bool {
	return t.boundedBy(func(s Search) bool { return s.GeneratorLimited })
}

func (t Target) boundedBy(stop func(Search) bool) bool {
	return slices.ContainsFunc(t.Searches, func(s Search) bool { return stop(s) && s.Max > 0 && s.Distrust() == "" })
}

// medianMax is t's median maximum in words: "28,000", or "at least 28,000" when a search of it
// stopped at the generator's limit or its own.
func (t Target) medianMax() string {
	rps := units.Count(t.Max.Median)
	if t.AtLeastMax() {
		return "at least " + rps
	}
	return rps
}

// Unsearched says why no search of t found a maximum; empty when one did.
func (t Target) Unsearched() string {
	if t.Max != nil {
		return ""
	}
	for _, s := range t.Searches {
		if s.Failed != "" {
			return s.Failed
		}
	}
	if n := t.distrustedMaxima(); n > 0 {
		return fmt.Sprintf("the maxima of its %d search(es) that found one are left out: %s", n, results.DistrustCalibration)
	}
	for _, s := range t.Searches {
		if s.Ended != "" {
			return "its search ended: " + s.Ended
		}
	}
	return "no rate met the SLO"
}

// MaxEstimate is the median of values with its 95% interval from stats.MinTrialsForCI values on,
// else with their range.
func MaxEstimate(values []float64) *Estimate {
	e := estimate(values)
	if e != nil && (len(values) < stats.MinTrialsForCI || !e.Stats().Finite()) {
		e.Lo, e.Hi, e.Range = slices.Min(values), slices.Max(values), true
	}
	return e
}

// rankMaxima orders a find-max scenario's targets by their median maxima, best first, those
// without one last, and ranks those with one on the rule a fixed-rate scenario's trials follow:
// when each has MinTrialsToRank searches whose maximum the self-checks trust (RankNote says how,
// or why not). It gives a target without a maximum the highest rate a step of it met the SLO at,
// of the steps the calibration does not distrust.
func rankMaxima(sc *Scenario) {
	var with, without []Target
	var short []string
	fewSearches := false
	distrusted := map[string]int{}
	var samples [][]float64 // the maxima of the targets with one, as with lists them
	for _, t := range sc.Targets {
		maxima := t.Maxima()
		t.Max = MaxEstimate(maxima)
		if t.Max == nil {
			for _, c := range t.validCells() {
				if c.Row.Distrust() != results.DistrustCalibration {
					t.AtLeast = max(t.AtLeast, c.Row.RequestedRPS)
				}
			}
			without = append(without, t)
			continue
		}
		with, samples = append(with, t), append(samples, maxima)
		if len(maxima) < MinTrialsToRank {
			short = append(short, fmt.Sprintf("%s %d", t.Name, len(maxima)))
			fewSearches = fewSearches || len(t.Searches) <= MinTrialsToRank
			distrusted[results.DistrustCalibration] += t.distrustedMaxima()
		}
	}
	order, ranks := rank(samples, true)
	switch {
	case len(with) < 2: // nothing to rank against
		ranks = make([]string, len(with))
	case len(short) > 0 && sc.OneSearch():
		ranks = make([]string, len(with))
		sc.Unranked = short
		sc.RankNote = fmt.Sprintf("not ranked: one search a target is a first answer; a ranking needs %d searches a target whose maximum the self-checks trust", MinTrialsToRank)
		if r := rankRemedies(true, distrusted, true); len(r) > 0 {
			sc.RankNote += ": " + strings.Join(r, "; ")
		}
	case len(short) > 0:
		ranks = make([]string, len(with))
		sc.Unranked = short
		sc.RankNote = fmt.Sprintf("not ranked: a ranking needs %d searches a target whose maximum the self-checks trust (%s)", MinTrialsToRank, strings.Join(short, ", "))
		if r := rankRemedies(fewSearches, distrusted, true); len(r) > 0 {
			sc.RankNote += "; " + strings.Join(r, "; ")
		}
	default:
		sc.RankNote = fmt.Sprintf("rank: by median maximum; \"=\" marks targets whose maxima the Mann–Whitney test cannot tell apart (p ≥ %g)", stats.DefaultAlpha)
	}
	sc.Targets = sc.Targets[:0]
	for _, i := range order {
		with[i].Rank = ranks[i]
		sc.Targets = append(sc.Targets, with[i])
	}
	sc.Targets = append(sc.Targets, without...)
}

// OneSearch says each target was searched once: its maximum is a first answer, with no spread to
// show and nothing to rank on.
func (sc Scenario) OneSearch() bool {
	for _, t := range sc.Targets {
		if len(t.Searches) > 1 {
			return false
		}
	}
	return len(sc.Targets) > 0
}

// Question is what a find-max run asks, in its words.
func (sc Scenario) Question() string {
	return fmt.Sprintf("Which target sustains the most %s load under %s?", sc.Base(), sc.sloText())
}

// Base is the scenario's name without the find-max suffix.
func (sc Scenario) Base() string { return strings.TrimSuffix(sc.Name, results.FindMaxSuffix) }

func (sc Scenario) sloText() string {
	if sc.SLO == "" {
		return "its SLO"
	}
	return sc.SLO
}

// MaxNotes say how to read a find-max scenario's maxima.
func (sc Scenario) MaxNotes() []string {
	var notes []string
	for _, t := range sc.Targets {
		if why := t.Unsearched(); why != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", t.Name, why))
		}
		if n := t.distrustedMaxima(); n > 0 && t.Max != nil {
			notes = append(notes, fmt.Sprintf("%s: %d search(es) left out of its maximum and the ranking: %s", t.Name, n, results.DistrustCalibration))
		}
		if n, again, of := t.busyHost(); n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of its %d steps were measured while other work or the hypervisor took the CPUs (%d of them failed and were measured again): searched on a busy host, its maximum may be low; run again when it is quieter", t.Name, n, of, again))
		}
		if t.GeneratorLimitedMax() {
			notes = append(notes, fmt.Sprintf("%s: the generator could not send more on time: its maximum is at least this", t.Name))
		}
		atLimit := t.boundedBy(func(s Search) bool { return s.AtLimit })
		if atLimit {
			notes = append(notes, fmt.Sprintf("%s: met the SLO at the most a search asks: its maximum is at least this, and was not measured", t.Name))
		}
		if l := t.Limit(); l.Kind != limit.None && !atLimit {
			notes = append(notes, fmt.Sprintf("%s: what stopped it above its maximum (at the first rate it failed): %s", t.Name, l))
		}
	}
	if sc.OneSearch() {
		notes = append(notes, "max rps: the maximum of each target's one search: a runtime's capacity moves from one start to the next, so it is a first answer, not a figure to compare")
	} else {
		notes = append(notes, fmt.Sprintf("max rps: the median of the searches' maxima with their range [least–greatest]; from %d searches a target, with its 95%% interval instead", stats.MinTrialsForCI))
	}
	if sc.RankNote != "" {
		notes = append(notes, sc.RankNote)
	}
	return notes
}

// Finding is a find-max scenario's answer in one sentence.
func (sc Scenario) Finding() string {
	slo := sc.sloText()
	if len(sc.Targets) == 0 || sc.Targets[0].Max == nil {
		if slices.ContainsFunc(sc.Targets, func(t Target) bool { return t.distrustedMaxima() > 0 }) {
			return fmt.Sprintf("Finding: no answer: %s, so no maximum of %s under %s is trusted: the instrument measured a server of known latency wrongly on this machine; run again when it is quieter.",
				results.DistrustCalibration, sc.Base(), slo)
		}
		return fmt.Sprintf("Finding: no search of %s under %s found a maximum.", sc.Base(), slo)
	}
	top := sc.Targets[0]
	ranked := top.Rank != ""
	most := "sustains the most"
	if !ranked {
		most = "has the highest median maximum"
	}
	// A target whose searches ended without a maximum, but met the SLO above the top maximum, may
	// be the answer: say so rather than crown the top.
	var above []string
	for _, t := range sc.Targets {
		if t.Max == nil && float64(t.AtLeast) > top.Max.Hi {
			above = append(above, fmt.Sprintf("%s met it at %s rps before its search ended (%s)", t.Name, units.Count(float64(t.AtLeast)), brief(t.Unsearched())))
		}
	}
	if len(above) > 0 {
		return fmt.Sprintf("Finding: no answer yet: %s; of the targets with a maximum, %s %s, %s rps. Give the others what ended their searches (memory: --memory), and run again.",
			strings.Join(above, "; "), top.Name, most, top.medianMax())
	}
	rps := top.medianMax()
	var s string
	switch {
	case ranked:
		s = fmt.Sprintf("Finding: %s sustains the most %s load under %s, %s rps", top.Name, sc.Base(), slo, rps)
	case len(sc.Unranked) > 0 && sc.OneSearch():
		s = fmt.Sprintf("Finding: a first answer from one search a target, not a ranking (that takes --trials %d): %s has the highest maximum of %s load under %s, %s rps",
			MinTrialsToRank+1, top.Name, sc.Base(), slo, rps)
	case len(sc.Unranked) > 0:
		s = fmt.Sprintf("Finding: not ranked, with fewer than %d trusted maxima a target (%s): the highest median maximum of %s load under %s is %s's, %s rps",
			MinTrialsToRank, strings.Join(sc.Unranked, ", "), sc.Base(), slo, top.Name, rps)
	default: // the only target with a maximum
		s = fmt.Sprintf("Finding: %s sustains %s load under %s up to %s rps", top.Name, sc.Base(), slo, rps)
	}
	// What the maximum costs, as far as it was measured.
	var cost []string
	if top.P99 != nil {
		cost = append(cost, "p99 "+units.MillisOrSeconds(top.P99.Median)+" at that rate")
	}
	if top.CPUCores != nil {
		cost = append(cost, units.Cores(top.CPUCores.Median)+" cores")
	}
	if top.MemoryPeakMiB != nil {
		cost = append(cost, units.MiB(top.MemoryPeakMiB.Median))
	}
	if len(cost) > 0 {
		s += " (" + strings.Join(cost, ", ") + ")"
	}
	var tied []string
	for _, t := range sc.Targets[1:] {
		if ranked && t.Rank == top.Rank {
			tied = append(tied, t.Name)
		}
	}
	if len(tied) > 0 {
		s += fmt.Sprintf(", tied with %s (Mann–Whitney, p ≥ %g)", strings.Join(tied, " and "), stats.DefaultAlpha)
	}
	for _, t := range sc.Targets[1:] {
		if t.Max != nil && !slices.Contains(tied, t.Name) {
			s += fmt.Sprintf("; next, %s at %s rps", t.Name, t.medianMax())
			break
		}
	}
	for _, t := range sc.Targets {
		if n, of := t.clumpedMaxima(); n > 0 {
			s += fmt.Sprintf("; %s's arrivals at its maximum were not as intended in %d of %d searches (sent in bursts, which only raise latency: its maximum may be higher)", t.Name, n, of)
		}
	}
	var busy []string
	for _, t := range sc.Targets {
		if n, _, of := t.busyHost(); n > 0 {
			busy = append(busy, fmt.Sprintf("%s %d of %d", t.Name, n, of))
		}
	}
	if len(busy) > 0 {
		s += fmt.Sprintf("; searched on a busy host (steps measured while other work took the CPUs: %s): a maximum there may be low, run again when it is quieter", strings.Join(busy, ", "))
	}
	return s + "."
}

// brief is a reason's cause without the rate and the details before it.
func brief(reason string) string {
	if _, after, ok := strings.Cut(reason, ": "); ok {
		return after
	}
	return reason
}
