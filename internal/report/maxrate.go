package report

import (
	"fmt"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
)

// WriteMax renders the maximum sustainable rate of each target searched and the latency at
// fractions of it: what a user sees at that load with headroom.
// rowsScenario names the CSV rows of the steps.
func WriteMax(w io.Writer, scenario, rowsScenario string, slo maxrate.SLO, step time.Duration, resolution int, found []maxrate.Outcome) error {
	fmt.Fprintf(w, "\n%s — maximum sustainable rate: the highest open-loop rate meeting %s for a whole %s step (resolution %d rps)\n",
		scenario, slo, step, resolution)
	header := []any{"target", "max rps", "first failing"}
	for _, f := range maxrate.Fractions {
		header = append(header, fmt.Sprintf("p50 / p99 at %.0f%%", 100*f))
	}
	t := newTable(w, header...)
	var notes []string
	for _, r := range found {
		cells := []any{r.Target, "—", "—"}
		switch {
		case r.Failed != "":
			notes = append(notes, fmt.Sprintf("%s: no result: %s", r.Target, r.Failed))
		case r.Max == 0 && !r.GeneratorLimited:
			notes = append(notes, fmt.Sprintf("%s: no rate down to the resolution met the SLO", r.Target))
		default:
			cells[1] = fmt.Sprint(r.Max)
		}
		if r.FirstFailed > 0 {
			cells[2] = fmt.Sprint(r.FirstFailed)
		}
		if r.GeneratorLimited {
			last := r.Steps[len(r.Steps)-1].Rate
			if r.Max > 0 {
				cells[1] = fmt.Sprintf("≥ %d", r.Max)
			}
			notes = append(notes, fmt.Sprintf("%s: the generator could not send %d rps on time (give it more CPU): the search stopped there, unconfirmed", r.Target, last))
		}
		for i := range maxrate.Fractions {
			if i < len(r.Fractions) {
				s := r.Fractions[i]
				cells = append(cells, fmt.Sprintf("%s / %s", Millis(s.P50), Millis(s.P99)))
			} else {
				cells = append(cells, "—")
			}
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	notes = append(notes, "every step is a row of the CSV (scenario "+rowsScenario+"); a step meets the SLO over its whole length, so a longer --step finds a lower, steadier maximum")
	for _, n := range notes {
		fmt.Fprintf(w, "  • %s\n", n)
	}
	return nil
}
