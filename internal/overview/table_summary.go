package overview

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/texttab"
	"github.com/iotbench/iotbench/internal/units"
)

// summaryMetrics are the figures of the per-target summary, by results.Metric name.
var summaryMetrics = []string{"throughput", "p50", "p99", "p99.9"}

// estimateOf is t's estimate of the metric called name.
func estimateOf(t summary.Target, name string) *summary.Estimate {
	switch name {
	case "throughput":
		return t.Throughput
	case "p50":
		return t.P50
	case "p99":
		return t.P99
	}
	return t.P999
}

// summaries writes one line per target, each figure the median of its valid trials with its 95%
// interval, and its rank when ranked; it returns the notes that go with it.
func summaries(w io.Writer, sc summary.Scenario) []string {
	several := false
	for _, t := range sc.Targets {
		several = several || t.Trials > 1
	}
	if !several {
		return []string{fmt.Sprintf("one trial per target: no median, interval or ranking (run with --trials %d or more)", stats.MinTrialsForCI)}
	}
	var notes []string
	ranking := len(sc.Targets) > 1
	by := sc.RankedBy
	if ranking {
		notes = append(notes, sc.RankNote)
		if len(sc.Unranked) > 0 {
			by, _ = results.MetricNamed(rankName(sc.Settings.Mode))
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
	for _, tg := range sc.Targets {
		line := []string{termText(tg.Name), tg.ValidText()}
		for _, name := range summaryMetrics {
			e := estimateOf(tg, name)
			if e == nil {
				line = append(line, "—")
				continue
			}
			m, _ := results.MetricNamed(name)
			line = append(line, formatMedian(*e, m))
			infinite = infinite || !e.Finite()
			if e.Noisy() {
				notes = append(notes, fmt.Sprintf("%s: %s is noisy, its 95%% interval reaches ±%.0f%% of the median (over %.0f%%): look for interference, or run more trials", tg.Name, name, 100*e.Stats().Spread(), 100*summary.NoisyCI))
			}
		}
		if ranking {
			rank := tg.Rank
			if rank == "" {
				rank = "—"
			}
			line = append(line, rank)
		}
		if err := t.Append(line); err != nil {
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

// rankName is the metric a scenario of mode would be ranked on.
func rankName(mode string) string {
	if mode == "closed" {
		return "throughput"
	}
	return "p99"
}

func formatMedian(e summary.Estimate, m results.Metric) string {
	v := fmt.Sprintf("%.1f", e.Median)
	if m.Unit == "ms" {
		v = units.Millis(time.Duration(e.Median * 1e6))
	}
	return v + " " + e.Spread()
}

// WriteMaxima answers the question of a find-max scenario: which target sustains the most load
// under its SLO, at what latency and at what CPU and memory cost, ranked with ties, and in one
// sentence.
func WriteMaxima(w io.Writer, sc summary.Scenario) error {
	q := termText(sc.Question())
	fmt.Fprintf(w, "\n%s\n%s\n\n", q, strings.Repeat("·", len([]rune(q))))
	t := texttab.New(w, []string{"rank", "target", "max rps", "p99 at max", "CPU cores at max", "peak memory at max", "rps per core"}, texttab.Layout{Left: []int{0, 1}})
	for _, tg := range sc.Targets {
		if tg.Max == nil {
			least := "—"
			if tg.AtLeast > 0 {
				least = "≥ " + units.Count(float64(tg.AtLeast)) + " (no maximum)"
			}
			if err := t.Append([]string{"—", termText(tg.Name), least, "—", "—", "—", "—"}); err != nil {
				return err
			}
			continue
		}
		perCore := "—"
		if tg.CPUCores != nil && tg.CPUCores.Median > 0 {
			perCore = units.Count(tg.Max.Median / tg.CPUCores.Median)
		}
		if err := t.Append([]string{cmp.Or(tg.Rank, "—"), termText(tg.Name), MaxText(*tg.Max, tg.AtLeastMax()), median(tg.P99, units.MillisOrSeconds),
			median(tg.CPUCores, units.Cores), median(tg.MemoryPeakMiB, units.MiB), perCore}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, n := range sc.MaxNotes() {
		fmt.Fprintf(w, "  • %s\n", termText(n))
	}
	_, err := fmt.Fprintf(w, "\n%s\n", termText(sc.Finding()))
	return err
}

// MaxText is a target's maximum: the median of its searches' with their range or 95% interval.
func MaxText(e summary.Estimate, atLeast bool) string {
	s := units.Count(e.Median)
	if atLeast {
		s = "≥ " + s
	}
	switch {
	case e.N == 1:
		return s
	case e.Range:
		return fmt.Sprintf("%s [%s–%s]", s, units.Count(e.Lo), units.Count(e.Hi))
	}
	return s + " " + e.Spread()
}

func median(e *summary.Estimate, format func(float64) string) string {
	if e == nil {
		return "—"
	}
	return format(e.Median)
}
