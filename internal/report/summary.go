package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
)

// summaryMetrics are the figures of the per-target summary, by results.Metric name.
var summaryMetrics = []string{"throughput", "p50", "p99", "p99.9"}

// rankMetric is the figure targets are ranked on: closed loop, throughput (each target went as
// fast as it could); open loop, p99 (every valid target carried the same rate, so latency under
// that load is the difference).
func rankMetric(mode string) results.Metric {
	name := "p99"
	if mode == "closed" {
		name = "throughput"
	}
	m, _ := results.MetricNamed(name)
	return m
}

// summaries writes one line per target, each figure the median of its valid trials with its 95%
// interval, and a rank when every target has enough trials; it returns the notes that go with it.
func summaries(w io.Writer, first results.Row, targets []string, rows []results.Row) []string {
	trials := map[string]int{}
	valid := map[string][]results.Row{}
	for _, r := range rows {
		trials[r.Target]++
		if r.Valid {
			valid[r.Target] = append(valid[r.Target], r)
		}
	}
	if !slices.ContainsFunc(targets, func(t string) bool { return trials[t] > 1 }) {
		return []string{fmt.Sprintf("one trial per target: no median, interval or ranking (run with --trials %d or more)", stats.MinTrialsForCI)}
	}
	var notes []string
	by := rankMetric(first.Mode)
	ranking := len(targets) > 1
	var ranks map[string]string
	if ranking {
		var note string
		var best []string
		ranks, best, note = rank(targets, valid, by)
		notes = append(notes, note)
		if best != nil {
			targets = best
		}
	}
	header := []string{"target", "valid trials"}
	for _, name := range summaryMetrics {
		header = append(header, "median "+name)
	}
	if ranking {
		header = append(header, "rank ("+by.Name+")")
	}
	t := newTable(w, header...)
	infinite := false
	for _, name := range targets {
		line := []any{name, fmt.Sprintf("%d/%d", len(valid[name]), trials[name])}
		for _, mname := range summaryMetrics {
			if len(valid[name]) == 0 {
				line = append(line, "—")
				continue
			}
			m, _ := results.MetricNamed(mname)
			s := stats.Summarize(m.Of(valid[name]))
			line = append(line, formatMedian(s, m))
			infinite = infinite || !s.Finite()
			if sp := s.Spread(); s.Finite() && sp > NoisyCI {
				notes = append(notes, fmt.Sprintf("%s: %s is noisy, its 95%% interval reaches ±%.0f%% of the median (over %.0f%%): look for interference, or run more trials", name, mname, 100*sp, 100*NoisyCI))
			}
		}
		if ranking {
			line = append(line, ranks[name])
		}
		if err := t.Append(line...); err != nil {
			notes = append(notes, err.Error())
		}
	}
	if err := t.Render(); err != nil {
		notes = append(notes, err.Error())
	}
	if infinite {
		notes = append(notes, fmt.Sprintf("±∞: with fewer than %d valid trials a median has no 95%% confidence interval (run with --trials %d or more)", stats.MinTrialsForCI, stats.MinTrialsForCI))
	}
	return notes
}

func formatMedian(s stats.Summary, m results.Metric) string {
	v := ""
	switch m.Unit {
	case "ms":
		v = Millis(time.Duration(s.Median * 1e6))
	default:
		v = fmt.Sprintf("%.1f", s.Median)
	}
	return v + " " + s.PlusMinus()
}

// rank orders the targets with at least MinTrialsToRank valid trials by m, best first, and
// returns that order (nil when some target has too few trials to rank). A target whose difference
// from the first of the group above it is not significant (Mann–Whitney, p ≥ 0.05) shares that
// group's rank: ties are shown as ties ("2=").
func rank(targets []string, valid map[string][]results.Row, m results.Metric) (map[string]string, []string, string) {
	ranks := map[string]string{}
	var ranked, short []string
	for _, t := range targets {
		ranks[t] = "—"
		if len(valid[t]) >= MinTrialsToRank {
			ranked = append(ranked, t)
		} else {
			short = append(short, fmt.Sprintf("%s %d", t, len(valid[t])))
		}
	}
	if len(short) > 0 {
		return ranks, nil, fmt.Sprintf("not ranked: a ranking needs %d valid trials per target (%s); run with --trials %d or more", MinTrialsToRank, strings.Join(short, ", "), MinTrialsToRank+1)
	}
	median := map[string]float64{}
	for _, t := range ranked {
		median[t] = stats.Summarize(m.Of(valid[t])).Median
	}
	slices.SortStableFunc(ranked, func(a, b string) int {
		d := median[a] - median[b]
		if m.HigherIsBetter {
			d = -d
		}
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
		return 0
	})
	position := map[string]int{}
	size := map[int]int{}
	leader := ""
	for i, t := range ranked {
		if leader == "" || stats.Compare(m.Of(valid[leader]), m.Of(valid[t]), stats.DefaultAlpha).Significant() {
			leader = t
			position[t] = i + 1
		} else {
			position[t] = position[leader]
		}
		size[position[t]]++
	}
	for _, t := range ranked {
		ranks[t] = fmt.Sprint(position[t])
		if size[position[t]] > 1 {
			ranks[t] += "="
		}
	}
	better := "lower"
	if m.HigherIsBetter {
		better = "higher"
	}
	return ranks, ranked, fmt.Sprintf("rank: by median %s, %s is better; \"=\" marks targets whose difference is not significant (Mann–Whitney, p ≥ %g), a tie", m.Name, better, stats.DefaultAlpha)
}
