package overview

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/units"
)

// WriteMax renders the maximum sustainable rate of each target searched and, when the search
// measured it (at), the latency at percentages of it: what a user sees at that load with
// headroom. A target searched several times gets one line: every search's maximum, and their
// median with its 95% confidence interval. rowsScenario names the CSV rows of the steps.
func WriteMax(w io.Writer, scenario, rowsScenario string, slo maxrate.SLO, step time.Duration, resolution maxrate.Resolution, at maxrate.LatencyAt, found []maxrate.Outcome) error {
	fmt.Fprintf(w, "\n%s — maximum sustainable rate: the highest open-loop rate meeting %s for a whole %s step (resolution %s)\n",
		termText(scenario), slo, step, resolution)
	var order []string
	byTarget := map[string][]maxrate.Outcome{}
	several := false // a target searched more than once: its searches' maxima each get a column
	for _, o := range found {
		if byTarget[o.Target] == nil {
			order = append(order, o.Target)
		}
		byTarget[o.Target] = append(byTarget[o.Target], o)
		several = several || len(byTarget[o.Target]) > 1
	}
	header := []string{"target", "max rps", "first failing"}
	if several {
		header = slices.Insert(header, 1, "max of each search")
	}
	for _, pct := range at {
		header = append(header, fmt.Sprintf("p50 / p99 at %s%%", strconv.FormatFloat(pct, 'f', -1, 64)))
	}
	t := newTable(w, header...)
	var notes []string
	for _, target := range order {
		cells, targetNotes := maxLine(target, byTarget[target], resolution, at, several)
		notes = append(notes, targetNotes...)
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, n := range append(notes, maxNotes(rowsScenario, at, found, several)...) {
		fmt.Fprintf(w, "  • %s\n", termText(n))
	}
	return nil
}

// maxLine is a target's line of the maxima's table, over its searches, and the notes on them.
func maxLine(target string, searches []maxrate.Outcome, resolution maxrate.Resolution, at maxrate.LatencyAt, several bool) ([]any, []string) {
	var notes []string
	var maxima, firsts []float64
	var each []string
	p50s, p99s := make([][]float64, len(at)), make([][]float64, len(at))
	limited := false
	for _, o := range searches {
		name := target
		if len(searches) > 1 {
			name = fmt.Sprintf("%s search %d", target, o.Search)
		}
		switch {
		case o.Failed != "":
			notes = append(notes, fmt.Sprintf("%s: no result: %s", name, o.Failed))
			each = append(each, "—")
		case o.Max == 0 && !o.GeneratorLimited():
			notes = append(notes, fmt.Sprintf("%s: no rate down to the resolution met the SLO", name))
			each = append(each, "0")
		default:
			maxima = append(maxima, float64(o.Max))
			each = append(each, atLeast(o.Bounded())+units.Count(float64(o.Max)))
		}
		for _, st := range o.Steps {
			if st.Died != "" {
				notes = append(notes, fmt.Sprintf("%s: the target died at %d rps (%s): the rate failed, and the search went on below it in a new container", name, st.Rate, st.Died))
			}
		}
		if o.FirstFailed > 0 {
			firsts = append(firsts, float64(o.FirstFailed))
		}
		if o.GeneratorLimited() {
			limited = true
			notes = append(notes, fmt.Sprintf("%s: the generator could not send %d rps on time (give it more CPU): no rate from there up was measured, so the maximum is at least the one found", name, o.GeneratorLimit))
		}
		if o.AtLimit {
			limited = true
			notes = append(notes, fmt.Sprintf("%s: met the SLO at %d rps, the most a search asks: its maximum is at least that, and was not measured", name, o.Max))
		}
		for i, s := range o.Fractions[:min(len(o.Fractions), len(at))] {
			p50s[i] = append(p50s[i], float64(s.P50))
			p99s[i] = append(p99s[i], float64(s.P99))
		}
	}
	maxCell, firstCell := "—", "—"
	if len(maxima) > 0 {
		sum := stats.Summarize(maxima)
		maxCell = MaxText(*summary.MaxEstimate(maxima), limited)
		if lo, hi := slices.Min(maxima), slices.Max(maxima); int(hi-lo) > resolution.At(int(sum.Median)) {
			notes = append(notes, fmt.Sprintf("%s: its searches found %.0f to %.0f rps, further apart than the resolution: its capacity moves from one start to the next by more than a search resolves, so read the median and its interval, not one search", target, lo, hi))
		}
	}
	if len(firsts) > 0 {
		firstCell = units.Count(stats.Summarize(firsts).Median)
	}
	cells := []any{target, maxCell, firstCell}
	if several {
		cells = slices.Insert(cells, 1, any(strings.Join(each, " ")))
	}
	for i := range at {
		if len(p50s[i]) == 0 {
			cells = append(cells, "—")
			continue
		}
		p50 := time.Duration(stats.Summarize(p50s[i]).Median)
		p99 := time.Duration(stats.Summarize(p99s[i]).Median)
		cells = append(cells, fmt.Sprintf("%s / %s", units.Millis(p50), units.Millis(p99)))
	}
	return cells, notes
}

// maxNotes are the notes under the maxima's table on how the searches ran.
func maxNotes(rowsScenario string, at maxrate.LatencyAt, found []maxrate.Outcome, several bool) []string {
	var notes []string
	if several {
		medians := "max rps and first failing are medians over them"
		if len(at) > 0 {
			medians = "max rps, first failing and the latencies are medians over them"
		}
		notes = append(notes, fmt.Sprintf("several searches a target, each in a fresh container: %s, max rps with the range of the searches [least–greatest] under %d searches, else with its 95%% interval", medians, stats.MinTrialsForCI))
	}
	notes = append(notes, "every step is a row of the CSV (scenario "+rowsScenario+"); a step meets the SLO over its whole length (one that failed beyond what its rest could bring back ends early), so a longer --step finds a lower, steadier maximum")
	if slices.ContainsFunc(found, func(o maxrate.Outcome) bool { return o.Bracket != (maxrate.Bracket{}) }) {
		ramp := fmt.Sprintf("a ramp's, unmeasured, from the first rate until %d seconds in a row miss the SLO (%.0f%%–100%% of the first of them's rate)", maxrate.RampBreak, 100*maxrate.RampLow)
		if slices.ContainsFunc(found, func(o maxrate.Outcome) bool { return o.Search%2 == 0 }) {
			ramp = "an odd search's from " + ramp + ", an even search's from the boundary the search before it found (its maximum and first failing rate)"
		}
		notes = append(notes, "a search's steps start from a bracket of the boundary, not by doubling from the first rate: "+ramp+"; the maximum and the first failing rate are each confirmed by a vote of steps")
	}
	return notes
}

func atLeast(limited bool) string {
	if limited {
		return "≥ "
	}
	return ""
}
