package compare

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

// pairedRows builds a paired run of one cell: each round's baseline p50 is 20 ms moved by
// noise[i] (a fraction), the candidate's the same times ratio and moved by candNoise[i]. aa
// rounds measure the baseline twice, apart by aaNoise[j].
func pairedRows(target string, ratio float64, noise, candNoise, aaNoise []float64) []results.Row {
	row := func(variant string, trial int, p50 float64) results.Row {
		d := time.Duration(p50 * float64(time.Millisecond))
		return results.Row{Scenario: "s", Target: target, Trial: trial, Variant: variant, Mode: "closed", Connections: 20,
			ThroughputRPS: 20 / d.Seconds(), SuccessRatio: 1, LatencyP50: d, LatencyP99: 2 * d, LatencyP999: 3 * d,
			Duration: time.Second, Memory: "1g", ImageID: "sha256:" + variant, Valid: true}
	}
	var rows []results.Row
	for i := range noise {
		base := 20 * (1 + noise[i])
		rows = append(rows, row(results.VariantBase, i+1, base), row(results.VariantCandidate, i+1, base*ratio*(1+candNoise[i])))
	}
	for j, n := range aaNoise {
		rows = append(rows, row(results.VariantAA1, j+1, 20), row(results.VariantAA2, j+1, 20*(1+n)))
	}
	return rows
}

// alternating is n values ±size, signs alternating: noise with no direction.
func alternating(n int, size float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = size * float64(i%3+1) / 2
		if i%2 == 1 {
			out[i] = -out[i]
		}
	}
	return out
}

func TestPairedVerdicts(t *testing.T) {
	gate := []Gate{{"p50", 5}}
	cases := []struct {
		name      string
		rows      []results.Row
		gates     []Gate
		want      Decision
		suggested bool // an inconclusive verdict suggests more rounds than it had
	}{
		// The drift between rounds (±4%) moves both sides alike: pairing leaves ±0.3%.
		{"equivalent", pairedRows("t", 1.00, alternating(10, 0.04), alternating(10, 0.003), nil), gate, Equivalent, false},
		{"regressed by 10%", pairedRows("t", 1.10, alternating(10, 0.04), alternating(10, 0.003), nil), gate, Regressed, false},
		{"improved by 10%", pairedRows("t", 0.90, alternating(10, 0.04), alternating(10, 0.003), nil), gate, Improved, false},
		// +1% under ±6% of pair noise over 4 rounds: neither inside ±5% nor past it.
		{"inconclusive", pairedRows("t", 1.01, alternating(4, 0.01), alternating(4, 0.06), nil), gate, Inconclusive, true},
		// A throughput drop is a regression of a "-" gate; the same drop passes a "+" one.
		{"throughput drop", pairedRows("t", 1.10, alternating(10, 0.04), alternating(10, 0.003), nil), []Gate{{"throughput", -5}}, Regressed, false},
		// The A/A rounds differ by ±8%: this run could not see a 5% change, whatever its pairs say.
		{"untestable", pairedRows("t", 1.00, alternating(10, 0.04), alternating(10, 0.003), alternating(3, 0.08)), gate, Untestable, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := AnalyzePaired("run.csv", c.rows, PairedOptions{Alpha: 0.05, Gates: c.gates})
			if len(res.Cells) != 1 || len(res.Cells[0].Changes) != 1 {
				t.Fatalf("cells %+v", res.Cells)
			}
			ch := res.Cells[0].Changes[0]
			if ch.Decision != c.want || (ch.SuggestedRounds > ch.Rounds) != c.suggested {
				t.Errorf("%s %+.2f%% [%+.2f, %+.2f] p %.4f (adj %.4f) equivalence p %.4f: %s, suggested %d after %d rounds; want %s",
					ch.Metric.Name, ch.Percent, ch.Lo, ch.Hi, ch.P, ch.PAdj, ch.PEquivalentAdj, ch.Decision, ch.SuggestedRounds, ch.Rounds, c.want)
			}
			if !(ch.Lo <= ch.Percent && ch.Percent <= ch.Hi) {
				t.Errorf("the estimate %+.2f%% lies outside its interval [%+.2f, %+.2f]", ch.Percent, ch.Lo, ch.Hi)
			}
		})
	}
}

// TestBenjaminiHochbergBeforeVerdicts: a regression that ten rounds show at p = 2/1024 alone
// is no discovery among 40 comparisons whose other 39 show nothing (adjusted 0.078).
func TestBenjaminiHochbergBeforeVerdicts(t *testing.T) {
	regressed := pairedRows("slow", 1.06, alternating(10, 0.04), alternating(10, 0.003), nil)
	alone := AnalyzePaired("run.csv", regressed, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
	if v := alone.Cells[0].Changes[0].Decision; v != Regressed {
		t.Fatalf("alone: %s, want regressed", v)
	}
	rows := regressed
	for i := range 39 {
		// Unchanged cells whose pair noise has no direction: p near 1.
		rows = append(rows, pairedRows(fmt.Sprint("same", i), 1, alternating(10, 0.04), alternating(10, 0.02), nil)...)
	}
	res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
	ch := res.Cells[0].Changes[0]
	if res.Comparisons != 40 || ch.Decision == Regressed || math.Abs(ch.PAdj-40*ch.P) > 1e-9 {
		t.Errorf("%d comparisons; slow p %.4f adjusted %.4f: %s; want 40, adjusted ×40, not regressed", res.Comparisons, ch.P, ch.PAdj, ch.Decision)
	}
}

func TestPairedRefusesSidesMeasuredDifferently(t *testing.T) {
	rows := pairedRows("t", 1, alternating(6, 0.01), alternating(6, 0.01), nil)
	for i := range rows {
		if rows[i].Variant == results.VariantCandidate {
			rows[i].Memory = "2g"
		}
	}
	res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
	if c := res.Cells[0]; !c.Refused || len(c.Changes) != 0 {
		t.Fatalf("memory 1g against 2g: refused %v, %d changes", c.Refused, len(c.Changes))
	}
	notes := strings.Join(res.Notes(), "\n")
	if !strings.Contains(notes, "REFUSED s/t") || !strings.Contains(notes, "memory (1g → 2g)") || !strings.Contains(notes, "--allow-mismatch=memory") {
		t.Errorf("notes:\n%s", notes)
	}
	// The images differ by design: allowed, and said.
	allowed := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}, AllowMismatch: []string{"memory"}})
	if c := allowed.Cells[0]; c.Refused || len(c.Changes) != 1 {
		t.Errorf("allowed: refused %v, %d changes", c.Refused, len(c.Changes))
	}
}

func TestParseUntil(t *testing.T) {
	cases := []struct{ spec, want, err string }{
		{"p99:±3%", "p99:±3%", ""},
		{"p99:3%,p50:+-1.5%", "p99:±3% p50:±1.5%", ""},
		{"p99:3", "", "a percent between 0 and 100"},
		{"p99:0%", "", "a percent between 0 and 100"},
		{"p95:±3%", "", `unknown metric "p95"`},
		{"p99", "", "write metric:±percent"},
		{",", "", "names no metric"},
	}
	for _, c := range cases {
		until, err := ParseUntil(c.spec)
		var got []string
		for _, u := range until {
			got = append(got, u.String())
		}
		if strings.Join(got, " ") != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseUntil(%q) = %v, %v; want %q, error with %q", c.spec, got, err, c.want, c.err)
		}
	}
}

func TestReached(t *testing.T) {
	gates := []Gate{{"p50", 5}}
	cases := []struct {
		name    string
		rows    []results.Row
		until   string
		reached bool
		why     string
	}{
		{"narrow over enough rounds", pairedRows("t", 1.02, alternating(10, 0.04), alternating(10, 0.003), nil), "p50:±2%", true, ""},
		{"wider than asked", pairedRows("t", 1.02, alternating(10, 0.04), alternating(10, 0.05), nil), "p50:±1%", false, "p50 of s/t ±"},
		// Five rounds give a finite, narrow interval, but no test can decide on five.
		{"narrow over too few rounds", pairedRows("t", 1.02, alternating(5, 0.04), alternating(5, 0.001), nil), "p50:±2%", false, "5 valid round(s), fewer than the 6 a verdict may need"},
		{"four rounds: no interval", pairedRows("t", 1.02, alternating(4, 0.04), alternating(4, 0.001), nil), "p50:±2%", false, "±∞"},
		// Rows of a service iotbench did not start have no CPU per request: nothing to narrow.
		{"not recorded", pairedRows("t", 1.02, alternating(10, 0.04), alternating(10, 0.003), nil), "cpu-per-request:±2%,p50:±2%", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			until, err := ParseUntil(c.until)
			if err != nil {
				t.Fatal(err)
			}
			res := AnalyzePaired("run.csv", c.rows, PairedOptions{Alpha: 0.05, Gates: append(gates, Gate{"cpu-per-request", 5})})
			reached, why := res.Reached(until)
			if reached != c.reached || !strings.Contains(why, c.why) {
				t.Errorf("Reached = %v, %q; want %v, %q", reached, why, c.reached, c.why)
			}
		})
	}
}

// FuzzParseUntil: whatever --until holds, it parses or is refused, and what parses writes back
// as text that parses to the same.
func FuzzParseUntil(f *testing.F) {
	for _, s := range []string{"p99:±3%", "p50:+-1.5%,p99:3%", "p99:", ":%", "p99:±1e309%", "p99:±NaN%", "throughput:±0.0001%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		until, err := ParseUntil(spec)
		if err != nil {
			return
		}
		var parts []string
		for _, u := range until {
			if !(u.Percent > 0 && u.Percent < 100) {
				t.Fatalf("%q gave a width of %v%%", spec, u.Percent)
			}
			parts = append(parts, u.String())
		}
		again, err := ParseUntil(strings.Join(parts, ","))
		if err != nil || len(again) != len(until) {
			t.Fatalf("%q → %v → %v, %v", spec, parts, again, err)
		}
		for i := range again {
			if again[i] != until[i] {
				t.Fatalf("%q: %v written back reads %v", spec, until[i], again[i])
			}
		}
	})
}

// A candidate without a valid trial fails the gate when the candidate is to blame, and leaves it
// undecided when every trial was the generator's (a busy machine measured nothing).
func TestCandidateWithoutAValidTrial(t *testing.T) {
	short, behind := fault.GeneratorDelayed, fault.GeneratorBehind
	cases := []struct {
		name    string
		faults  []fault.Kind // of the candidate's trials
		verdict Decision
	}{
		{"the generator was short every time", []fault.Kind{short, behind, short}, Inconclusive},
		{"the candidate failed once", []fault.Kind{short, fault.Errors, short}, Regressed},
		{"the target died, then the generator", []fault.Kind{fault.TargetDied, short, short}, Regressed},
		{"the target filled every slot", []fault.Kind{fault.InFlightFull, short, short}, Regressed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := pairedRows("t", 1, alternating(3, 0.01), alternating(3, 0.01), nil)
			i := 0
			for j := range rows {
				if rows[j].Variant == results.VariantCandidate {
					// the words of a generator's reason, whatever the kind: the kind decides
					rows[j].SetFault(c.faults[i], "generator delayed requests: the load generator was short of CPU")
					i++
				}
			}
			res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
			if v := res.Decision(); v != c.verdict {
				t.Errorf("verdict %s, want %s; failures %v, undecided %v", v, c.verdict, res.Failures(), res.Undecided())
			}
		})
	}
}

// TestPairedVerdictWithoutPairsNamesSides: a paired cell left without a round whose two sides
// both count is undecided, never passed, and says for each side how many trials count and why the
// others do not.
func TestPairedVerdictWithoutPairsNamesSides(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(*results.Row)
		want  string
	}{
		{"baseline invalid", func(r *results.Row) {
			if r.Variant == results.VariantBase {
				r.Valid, r.InvalidReason = false, "target died: exit 137"
			}
		}, "s/t: no round with a valid baseline and candidate (baseline 0 of 6 valid, 6 invalid; candidate 6 of 6 valid): no verdict"},
		{"candidate on a missed calibration", func(r *results.Row) {
			if r.Variant == results.VariantCandidate {
				r.Calibrated, r.CalibrationWithin = true, false
			}
		}, "(baseline 6 of 6 valid; candidate 6 of 6 valid, left out: 6 calibration missed its limits)"},
		{"baseline not steady", func(r *results.Row) {
			if r.Variant == results.VariantBase {
				r.SteadyJudged, r.Steady = true, false
			}
		}, "(baseline 6 of 6 valid, left out: 6 not steady; candidate 6 of 6 valid)"},
		{"baseline on a missed calibration", func(r *results.Row) {
			if r.Variant == results.VariantBase {
				r.Calibrated, r.CalibrationWithin = true, false
			}
		}, "(baseline 6 of 6 valid, left out: 6 calibration missed its limits; candidate 6 of 6 valid)"},
		{"candidate not steady", func(r *results.Row) {
			if r.Variant == results.VariantCandidate {
				r.SteadyJudged, r.Steady = true, false
			}
		}, "(baseline 6 of 6 valid; candidate 6 of 6 valid, left out: 6 not steady)"},
		{"baseline still warming", func(r *results.Row) {
			if r.Variant == results.VariantBase {
				r.JITJudged, r.JITBusy = true, r.Duration
			}
		}, "(baseline 6 of 6 valid, left out: 6 still warming up; candidate 6 of 6 valid)"},
		{"candidate still warming", func(r *results.Row) {
			if r.Variant == results.VariantCandidate {
				r.JITJudged, r.JITBusy = true, r.Duration
			}
		}, "(baseline 6 of 6 valid; candidate 6 of 6 valid, left out: 6 still warming up)"},
		{"sides valid in other rounds", func(r *results.Row) {
			if (r.Variant == results.VariantBase) == (r.Trial%2 == 0) {
				r.Valid, r.InvalidReason = false, "target died: exit 137"
			}
		}, "(baseline 3 of 6 valid, 3 invalid; candidate 3 of 6 valid, 3 invalid)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := pairedRows("t", 1.0, alternating(6, 0.01), alternating(6, 0.01), nil)
			for i := range rows {
				c.spoil(&rows[i])
			}
			res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
			if u := strings.Join(res.Undecided(), "\n"); !strings.Contains(u, c.want) || res.Decision() != Inconclusive {
				t.Errorf("undecided %q, verdict %s; want %q, inconclusive", u, res.Decision(), c.want)
			}
		})
	}
}

// TestTooFewRoundsSayWhy: rounds too few for any signed-rank test to reach alpha make the verdict
// inconclusive, saying so, even when the change is large; one round more than that is judged on
// its interval.
func TestTooFewRoundsSayWhy(t *testing.T) {
	for _, c := range []struct {
		rounds int
		want   string
	}{
		{3, "over 3 rounds, too few to reach p < 0.05 in any test (the smallest p of 3 rounds is 0.125)"},
		{4, "over 4 rounds, too few to reach p < 0.05 in any test (the smallest p of 4 rounds is 0.0625)"},
		{5, "over 5 rounds, past p50:+5%, but over too few rounds to be significant"},
	} {
		rows := pairedRows("t", 1.5, alternating(c.rounds, 0.01), alternating(c.rounds, 0.01), nil)
		res := AnalyzePaired("run.csv", rows, PairedOptions{Alpha: 0.05, Gates: []Gate{{"p50", 5}}})
		if u := strings.Join(res.Undecided(), "\n"); !strings.Contains(u, c.want) || res.Decision() != Inconclusive {
			t.Errorf("%d rounds: undecided %q, verdict %s; want %q", c.rounds, u, res.Decision(), c.want)
		}
	}
}
