// Package report renders result rows as terminal tables: one row per cell, then, when there are
// several trials, one line per target over its valid trials. The notes under the tables say what
// the numbers cannot be used for.
package report

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// MinTrialsToRank is the number of valid trials per target below which the report refuses to
// rank targets: one trial measures the machine's noise as much as the target.
const MinTrialsToRank = 3

// Write renders rows, grouped by scenario in the order they appear.
func Write(w io.Writer, rows []results.Row) error {
	var scenarios []string
	for _, r := range rows {
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
	}
	for _, s := range scenarios {
		var group []results.Row
		for _, r := range rows {
			if r.Scenario == s {
				group = append(group, r)
			}
		}
		if err := writeScenario(w, group); err != nil {
			return err
		}
	}
	return nil
}

// newTable makes a table whose first column (the target) is left-aligned and numbers right-aligned.
func newTable(w io.Writer, header ...any) *tablewriter.Table {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderConfig(tw.CellConfig{
			Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			Padding:    tw.CellPadding{Global: tw.PaddingDefault},
		}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(header...)
	return t
}

func writeScenario(w io.Writer, rows []results.Row) error {
	first := rows[0]
	fmt.Fprintf(w, "\n%s — %s, %s measured after %s warm-up; target cpuset %s, memory %s; generator cpuset %s\n",
		first.Scenario, loadModel(first), first.Duration, first.Warmup, first.CPUSet, first.Memory, first.GeneratorCPUSet)

	t := newTable(w, "target", "trial", "throughput rps", "success", "p50", "p99", "p99.9", "send lag p99", "valid")
	for _, r := range rows {
		valid := "yes"
		if !r.Valid {
			valid = "NO"
		}
		lag := "—"
		if r.Mode == "open" {
			lag = Millis(r.SendLagP99)
		}
		if err := t.Append(r.Target, fmt.Sprint(r.Trial), fmt.Sprintf("%.1f", r.ThroughputRPS), fmt.Sprintf("%.2f%%", 100*r.SuccessRatio),
			Millis(r.LatencyP50), Millis(r.LatencyP99), Millis(r.LatencyP999), lag, valid); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	var targets []string
	trials := map[string]int{}
	for _, r := range rows {
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		trials[r.Target]++
	}
	var notes []string
	if slices.ContainsFunc(targets, func(t string) bool { return trials[t] > 1 }) {
		s := newTable(w, "target", "valid trials", "median throughput", "throughput range", "median p50", "median p99")
		for _, name := range targets {
			var tput, p50, p99 []float64
			for _, r := range rows {
				if r.Target == name && r.Valid {
					tput = append(tput, r.ThroughputRPS)
					p50 = append(p50, float64(r.LatencyP50))
					p99 = append(p99, float64(r.LatencyP99))
				}
			}
			if len(tput) == 0 {
				if err := s.Append(name, fmt.Sprintf("0/%d", trials[name]), "—", "—", "—", "—"); err != nil {
					return err
				}
				continue
			}
			err := s.Append(name, fmt.Sprintf("%d/%d", len(tput), trials[name]), fmt.Sprintf("%.1f", median(tput)),
				fmt.Sprintf("%.1f–%.1f", slices.Min(tput), slices.Max(tput)),
				Millis(time.Duration(median(p50))), Millis(time.Duration(median(p99))))
			if err != nil {
				return err
			}
		}
		if err := s.Render(); err != nil {
			return err
		}
	}
	for _, name := range targets {
		valid := 0
		for _, r := range rows {
			if r.Target == name && r.Valid {
				valid++
			}
		}
		if valid < MinTrialsToRank {
			notes = append(notes, fmt.Sprintf("%s has %d valid trial(s): fewer than %d, so its differences from the others are not a ranking (run with --trials %d or more)", name, valid, MinTrialsToRank, MinTrialsToRank))
			break
		}
	}
	if first.Mode == "closed" {
		notes = append(notes, "closed loop: latencies are service times under that concurrency, not what users arriving at a steady rate would see")
	} else {
		notes = append(notes, "open loop: latency counts from when each request was due, so a stalled target is charged for the requests queued behind the stall")
	}
	for _, r := range rows {
		if !r.Valid {
			notes = append(notes, fmt.Sprintf("%s trial %d is invalid: %s", r.Target, r.Trial, r.InvalidReason))
		}
	}
	for _, n := range notes {
		fmt.Fprintf(w, "  • %s\n", n)
	}
	return nil
}

func loadModel(r results.Row) string {
	if r.Mode == "closed" {
		return fmt.Sprintf("closed loop, %d connections", r.Connections)
	}
	return fmt.Sprintf("open loop at %d rps (at most %d in flight)", r.RequestedRPS, r.Connections)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Millis writes a latency in milliseconds with three significant digits or so.
func Millis(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// Summary is a one-line verdict for the end of a run.
func Summary(rows []results.Row) string {
	invalid := 0
	for _, r := range rows {
		if !r.Valid {
			invalid++
		}
	}
	if invalid == 0 {
		return fmt.Sprintf("%d cell(s), all valid", len(rows))
	}
	return fmt.Sprintf("%d cell(s), %d invalid", len(rows), invalid)
}
