package run

import (
	"fmt"
	"io"
	"strings"

	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
)

// DefaultAlpha is the significance level of comparisons unless the user sets another.
const DefaultAlpha = stats.DefaultAlpha

// Gate is how a paired run is judged: its gated metrics and limits, and --until's adaptive rounds.
type Gate struct {
	Gates []compare.Gate
	// Until, when set, adds rounds until each named metric's interval is this narrow, up to
	// MaxTrials rounds.
	Until     []compare.Until
	MaxTrials int
	Alpha     float64
	// AllowInconclusive passes a gate that could not decide (and where none regressed).
	AllowInconclusive bool
}

func (g *Gate) analyze(path string, rows []results.Row) compare.PairedResult {
	return compare.AnalyzePaired(path, rows, compare.PairedOptions{Alpha: g.Alpha, Gates: g.Gates})
}

// more is --until's question after each round: another one, while an interval is wider than
// asked and the rounds are fewer than MaxTrials.
func (g *Gate) more(log io.Writer, p *plan.Plan) func([]results.Row) bool {
	return func(rows []results.Row) bool {
		res := g.analyze("", rows)
		reached, why := res.Reached(g.Until)
		switch {
		case reached:
			fmt.Fprintf(log, "--until %s: reached after %d round(s)\n", joined(g.Until), p.Rounds())
			return false
		case p.Rounds() >= g.MaxTrials:
			fmt.Fprintf(log, "--until %s: not reached at --max-trials %d: %s\n", joined(g.Until), g.MaxTrials, why)
			return false
		}
		fmt.Fprintf(log, "--until %s: after %d round(s), %s: one more\n", joined(g.Until), p.Rounds(), why)
		return true
	}
}

// outcome is the note of how an adaptive run ended.
func (g *Gate) outcome(res compare.PairedResult, rounds int) string {
	if reached, why := res.Reached(g.Until); !reached {
		return fmt.Sprintf("--until %s NOT reached: %s after %d round(s) (--max-trials %d)", joined(g.Until), why, rounds, g.MaxTrials)
	}
	return fmt.Sprintf("--until %s reached after %d round(s)", joined(g.Until), rounds)
}

// Verdict is the gate's outcome on res as an exit status: nil when every gated metric is
// equivalent or improved (or undecided, allowed), else an error saying why.
func (g *Gate) Verdict(res compare.PairedResult) error { return g.verdict(res) }

func (g *Gate) verdict(res compare.PairedResult) error {
	if refused := res.Refused(); len(refused) > 0 {
		var names []string
		for _, c := range refused {
			names = append(names, c.Name())
		}
		return exitcode.Usagef("%d cell(s) not judged because the baseline and the candidate were measured differently: %s (see the notes)", len(refused), strings.Join(names, ", "))
	}
	if len(res.Cells) == 0 {
		return exitcode.Usagef("%s holds no cell to judge", res.File)
	}
	if failures := res.Failures(); len(failures) > 0 {
		return exitcode.With(exitcode.Invalid, fmt.Errorf("the gate failed: %s", strings.Join(failures, "; ")))
	}
	if undecided := res.Undecided(); len(undecided) > 0 && !g.AllowInconclusive {
		return exitcode.With(exitcode.Inconclusive, fmt.Errorf("inconclusive: %d comparison(s) undecided (the UNDECIDED notes say why, and about how many rounds would settle them); --allow-inconclusive passes the gate anyway", len(undecided)))
	}
	return nil
}

// joined writes gates or --until's terms back as the flag takes them.
func joined[T fmt.Stringer](xs []T) string {
	var s []string
	for _, x := range xs {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}
