package overview

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/units"
)

// writeResources renders what each cell's target used, when any was measured: the cost of its
// throughput, next to the throughput itself; on PostgreSQL, its database server's beside it.
func writeResources(w io.Writer, rows []results.Row, label func(results.Row) string) error {
	if !slices.ContainsFunc(rows, measured) {
		return nil
	}
	header := []string{"target", "trial", "cpu cores", "of cpuset", "peak mem", "mean mem", "rps/core", "rps/GiB", "startup", "image", "generator cpu"}
	server := slices.ContainsFunc(rows, func(r results.Row) bool { return r.DB == results.DBPostgres })
	if server {
		header = append(header, "database cpu", "database peak mem")
	}
	t := newTable(w, header...)
	for _, r := range rows {
		if !measured(r) {
			continue
		}
		cells := []string{termText(label(r)), fmt.Sprint(r.Trial), fmt.Sprintf("%.2f", r.CPUCores), fmt.Sprintf("%.0f%%", r.CPUPercent),
			units.BytesAsMiB(r.MemoryPeak), units.BytesAsMiB(r.MemoryMean), fmt.Sprintf("%.0f", r.RPSPerCore), fmt.Sprintf("%.0f", r.RPSPerGiB),
			units.Millis(r.Startup), units.BytesAsMiB(r.ImageSize), fmt.Sprintf("%.0f%%", r.GeneratorCPUPercent)}
		if server {
			cells = append(cells, fmt.Sprintf("%.2f", r.DBCPUCores), units.BytesAsMiB(r.DBMemoryPeak))
		}
		if err := t.Append(cells); err != nil {
			return err
		}
	}
	return t.Render()
}

func measured(r results.Row) bool { return r.MemoryPeak > 0 }

// warningNotes are the rows' warnings: one note a target and warning, naming the trials that
// carry it, so that a warning six trials share is read once.
func warningNotes(rows []results.Row) []string {
	type warning struct{ target, text string }
	trials := map[warning][]string{}
	var order []warning
	for _, r := range rows {
		if r.Warnings == "" {
			continue
		}
		w := warning{r.Target, r.Warnings}
		if _, ok := trials[w]; !ok {
			order = append(order, w)
		}
		trials[w] = append(trials[w], fmt.Sprint(r.Trial))
	}
	notes := make([]string, 0, len(order))
	for _, w := range order {
		n := trials[w]
		which := "trial " + n[0]
		if len(n) > 1 {
			which = "trials " + strings.Join(n, ", ")
		}
		notes = append(notes, fmt.Sprintf("%s %s: %s", w.target, which, w.text))
	}
	return notes
}
