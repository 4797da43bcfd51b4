package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

// pairedSearchRows is a paired --find-max run of one target: round i searches the baseline,
// whose maximum is base[i], then the candidate, cand[i] (0: its search found none). Each search
// is a container of its own (its start-up time), its steps numbered across the run as bench
// numbers them.
func pairedSearchRows(base, cand []int) []results.Row {
	var rows []results.Row
	search := func(variant string, m, n int) {
		steps := []struct {
			rate  int
			valid bool
		}{{m / 2, true}, {m, true}, {m + m/10, false}, {m + m/10, false}, {m, true}}
		if m == 0 {
			steps = steps[2:4]
			for i := range steps {
				steps[i].rate = 100
			}
		}
		for _, s := range steps {
			r := results.Row{Scenario: "io-heavy" + results.FindMaxSuffix, Target: "t", Trial: len(rows) + 1, Search: n/2 + 1, Mode: "open", Variant: variant,
				RequestedRPS: s.rate, Connections: s.rate / 4, Valid: s.valid, Startup: time.Duration(900+n) * time.Millisecond,
				ThroughputRPS: float64(s.rate), ImageID: "sha256:" + variant, Memory: "1g"}
			if !s.valid {
				r.SetFault(fault.SLONotMet, "slo not met: p99 300ms ≥ 100ms")
			}
			rows = append(rows, r)
		}
	}
	for i := range base {
		search(results.VariantBase, base[i], 2*i)
		search(results.VariantCandidate, cand[i], 2*i+1)
	}
	return rows
}

// scaled is xs times f, rounded.
func scaled(xs []int, f float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(float64(x)*f + 0.5)
	}
	return out
}

// TestPairedFindMaxJudgesMaxima: a paired --find-max run is judged on its maxima, round by round,
// with the tests of any metric. The machine's drift from round to round (maxima from 1000 to
// 1700 rps) moves both sides alike and leaves no doubt once paired.
func TestPairedFindMaxJudgesMaxima(t *testing.T) {
	drift := []int{1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700}
	gates := []Gate{{"max", -10}}
	for _, c := range []struct {
		name       string
		base, cand []int
		want       Decision
	}{
		{"the same maxima", drift, drift, Equivalent},
		{"a third less", drift, scaled(drift, 0.66), Regressed},
		{"a fifth more", drift, scaled(drift, 1.2), Improved},
		{"too few rounds", drift[:3], scaled(drift[:3], 0.66), Inconclusive},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := AnalyzePaired("run.csv", pairedSearchRows(c.base, c.cand), PairedOptions{Alpha: 0.05, Gates: gates})
			if len(res.Cells) != 1 || !res.Cells[0].Search || len(res.Cells[0].Changes) != 1 {
				t.Fatalf("cells %+v; want the find-max cell judged on max", res.Cells)
			}
			cell, ch := res.Cells[0], res.Cells[0].Changes[0]
			if ch.Metric.Name != "max" || ch.Decision != c.want || ch.Rounds != len(c.base) {
				t.Errorf("%s over %d rounds: %s; want %s over %d", ch.Metric.Name, ch.Rounds, ch.Decision, c.want, len(c.base))
			}
			if cell.BaseTrials != len(c.base) || cell.BaseValid != len(c.base) || cell.Mismatches[0].Field != "image_id" || len(cell.Mismatches) != 1 {
				t.Errorf("cell %+v: want %d searches a side, the steps' rates no mismatch", cell, len(c.base))
			}
			var b strings.Builder
			if err := WritePaired(&b, res, "table"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "judged on their searches' maxima, round by round") {
				t.Errorf("the notes do not say how maxima are judged:\n%s", b.String())
			}
		})
	}
}

// TestPairedFindMaxRoundsWithoutMaximum: a round where one side found no maximum is left out;
// a candidate that never found one, where the baseline did, fails the gate.
func TestPairedFindMaxRoundsWithoutMaximum(t *testing.T) {
	base := []int{1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700}
	cand := append([]int{0}, base[1:]...)
	res := AnalyzePaired("run.csv", pairedSearchRows(base, cand), PairedOptions{Alpha: 0.05, Gates: []Gate{{"max", -10}}})
	c := res.Cells[0]
	if c.CandValid != 7 || c.Changes[0].Rounds != 7 {
		t.Errorf("%d candidate maxima, %d rounds; want 7 and 7", c.CandValid, c.Changes[0].Rounds)
	}
	res = AnalyzePaired("run.csv", pairedSearchRows(base, make([]int, len(base))), PairedOptions{Alpha: 0.05, Gates: []Gate{{"max", -10}}})
	if f := res.Failures(); len(f) != 1 || !strings.Contains(f[0], "no valid trial of the candidate") || res.Decision() != Regressed {
		t.Errorf("failures %q, verdict %s; want the candidate without a maximum failing", f, res.Decision())
	}
}

// TestVerdictsNeverRestOnDistrustedRows: a trial that was not steady, or whose run's calibration
// missed its limits, is left out of the paired gate and of compare, and the notes say so.
func TestVerdictsNeverRestOnDistrustedRows(t *testing.T) {
	rows := pairedRows("t", 1.00, alternating(10, 0.04), alternating(10, 0.003), nil)
	// Rounds 1–3 of the candidate measured 30% slower, but not steady: a regression if trusted.
	for i := range rows {
		if rows[i].Variant == results.VariantCandidate && rows[i].Trial <= 3 {
			rows[i].LatencyP50 = rows[i].LatencyP50 * 13 / 10
			rows[i].SteadyJudged, rows[i].Steady = true, false
		}
	}
	rows[0].Calibrated, rows[0].CalibrationWithin = true, false // the baseline of round 1
	res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
	ch := res.Cells[0].Changes[0]
	if ch.Rounds != 7 || ch.Decision == Regressed {
		t.Errorf("%d rounds, %s; want 7 rounds (3 left out), not regressed", ch.Rounds, ch.Decision)
	}
	notes := strings.Join(res.Notes(), "\n")
	for _, want := range []string{"s/t: valid trials left out of the baseline (1 calibration missed its limits)", "s/t: valid trials left out of the candidate (3 not steady)", "no one level to compare"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}

	// Two files: the new file's slow trials are not steady; the change rests on the others.
	old := trials(6, 50*time.Millisecond, true)
	new := trials(6, 50*time.Millisecond, true)
	for i := range 3 {
		new[i].LatencyP50 *= 2
		new[i].SteadyJudged = true
	}
	r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, NoisePct: 3})
	c := r.Cells[0]
	if c.NewValid != 3 || c.LeftNew[results.DistrustNotSteady] != 3 {
		t.Errorf("%d new valid trials, left out %v; want 3 and 3 not steady", c.NewValid, c.LeftNew)
	}
	if notes := strings.Join(r.Notes(), "\n"); !strings.Contains(notes, "valid trials left out of new.csv (3 not steady), so that no verdict rests on them") || strings.Contains(notes, "are invalid") {
		t.Errorf("notes:\n%s", notes)
	}
}
