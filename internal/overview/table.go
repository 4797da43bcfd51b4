// The terminal tables of the summary. The notes under the tables say what the numbers cannot be
// used for.

package overview

import (
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/texttab"
	"github.com/iotbench/iotbench/internal/units"
	"github.com/olekukonko/tablewriter"
)

// Write renders rows, grouped by scenario in the order they appear.
func Write(w io.Writer, rows []results.Row) error {
	return WriteTable(w, summary.FromRows(rows))
}

// WriteTable renders the summary as terminal tables: a find-max scenario's answer first (its
// targets' maxima, ranked), then every scenario's cells and its targets' medians.
func WriteTable(w io.Writer, o *summary.Overview) error {
	for _, sc := range o.Scenarios {
		if sc.FindMax {
			if err := WriteMaxima(w, sc); err != nil {
				return err
			}
		}
		if err := writeScenario(w, sc); err != nil {
			return err
		}
	}
	return nil
}

// newTable makes a table whose first column (the target) is left-aligned and numbers right-aligned.
func newTable(w io.Writer, header ...string) *tablewriter.Table {
	return texttab.New(w, header, texttab.Layout{Left: []int{0}})
}

func writeScenario(w io.Writer, sc summary.Scenario) error {
	rows := sc.Rows
	first := rows[0]
	fmt.Fprintf(w, "\n%s — %s, %s measured after %s%s%s\n",
		termText(first.Scenario), loadModel(first), first.Duration, summary.WarmupText(first.Warmup, first.WarmupAuto), termText(placement(first)), termText(store(first)))
	if len(sc.Checks) > 0 {
		fmt.Fprintf(w, "%s\n", termText(summary.ChecksText(sc.Checks)))
	}

	t := newTable(w, "target", "trial", "throughput rps", "success", "p50", "p99", "p99.9", "generator delay p99", "valid")
	for _, r := range rows {
		valid := "yes"
		switch {
		case !r.Loaded():
			// build-failed, start-failed, skipped, verify-failed: the word says why it has no figures
			valid = string(r.Fault)
		case !r.Valid:
			valid = "NO"
		}
		cells := []any{termText(sc.Label(r)), fmt.Sprint(r.Trial), fmt.Sprintf("%.1f", r.ThroughputRPS), fmt.Sprintf("%.2f%%", 100*r.SuccessRatio),
			units.Millis(r.LatencyP50), units.Millis(r.LatencyP99), units.Millis(r.LatencyP999), units.Millis(r.GeneratorDelayP99), valid}
		if !r.Loaded() {
			for i := 2; i < len(cells)-1; i++ {
				cells[i] = "—" // never loaded: nothing was measured, not zero
			}
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if err := writeResources(w, rows, sc.Label); err != nil {
		return err
	}
	if err := writeProtocols(w, sc.Protocols); err != nil {
		return err
	}

	// By name (by rank when ranked): the order trials ran in is shuffled from run to run, and a
	// summary should not be.
	var notes []string
	if !sc.FindMax { // a search's steps are at different rates: its answer above is their summary
		notes = summaries(w, sc)
	}
	if first.Mode == "closed" {
		notes = append(notes, "closed loop: latencies are service times under that concurrency, not what users arriving at a steady rate would see")
	} else {
		notes = append(notes, "open loop: latency counts from when each request was due, so a stalled target is charged for the requests queued behind the stall")
	}
	for _, r := range rows {
		if !r.Valid {
			notes = append(notes, fmt.Sprintf("%s trial %d is invalid: %s", sc.Label(r), r.Trial, r.InvalidReason))
		}
	}
	notes = append(notes, warningNotes(rows)...)
	notes = append(notes, summary.CalibrationNotes(rows)...)
	for _, n := range notes {
		fmt.Fprintf(w, "  • %s\n", termText(n))
	}
	return nil
}

// findMaxLoad is a find-max scenario's load model: every step's warm-up is the first row's but
// for a step that goes on from one met at its rate (bench.MaxSearch.StepWarmup).
const findMaxLoad = "find-max steps, open loop at rising rates (a step right after one met at its rate goes on from it, without a warm-up)"

func loadModel(r results.Row) string {
	text := fmt.Sprintf("open loop at %d rps (at most %d in flight)", r.RequestedRPS, r.Connections)
	switch {
	case r.Search > 0: // the first step's rate is no rate of the scenario's, as the HTML says
		text = findMaxLoad
	case r.Mode == "closed":
		text = fmt.Sprintf("closed loop, %d connections", r.Connections)
	}
	if mix := summary.MixText(r.Streams, r.Request); mix != "" {
		text += "; " + mix
	}
	return text
}

// Summary is a one-line verdict for the end of a run.
func Summary(rows []results.Row) string {
	cells, invalid := 0, 0
	for _, r := range rows {
		if r.Part() {
			continue // a stage's or a request's row is part of its cell's
		}
		cells++
		if !r.Valid {
			invalid++
		}
	}
	if invalid == 0 {
		return fmt.Sprintf("%d cell(s), all valid", cells)
	}
	return fmt.Sprintf("%d cell(s), %d invalid", cells, invalid)
}

// placement names the target's CPUs and memory (a service given by --url has none of ours) and
// the generator's CPUs, when known.
func placement(r results.Row) string {
	var s string
	if r.CPUSet != "" || r.Memory != "" {
		s += fmt.Sprintf("; target cpuset %s, memory %s", r.CPUSet, r.Memory)
	}
	if r.GeneratorCPUSet != "" {
		s += "; generator cpuset " + r.GeneratorCPUSet
	}
	return s
}

// store names a PostgreSQL server in the scenario's line; the embedded store goes unsaid.
func store(r results.Row) string {
	if r.DB != results.DBPostgres {
		return ""
	}
	return fmt.Sprintf("; PostgreSQL server on cpuset %s, pool %d", r.DBCPUSet, r.DBPoolSize)
}

// termText is every free text of the terminal tables (names, notes, reasons) as it is written:
// the one place where what text may not carry to a terminal is dealt with.
func termText(s string) string { return safetext.Terminal(s) }
