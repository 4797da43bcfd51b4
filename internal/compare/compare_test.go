package compare

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

func TestParseGates(t *testing.T) {
	cases := []struct {
		spec, want, err string
	}{
		{"throughput:-5%,p99:+10%", "throughput:-5% p99:+10%", ""},
		{" p99.9:+2.5% ", "p99.9:+2.5%", ""},
		{"success:-0%", "success:-0%", ""},
		{"throughput:5%", "", "signed percent"},
		{"throughput:-5", "", "signed percent"},
		{"throughput", "", "metric:signed percent"},
		{"latency:+5%", "", `unknown metric "latency"`},
		{",", "", "names no gate"},
	}
	for _, c := range cases {
		gates, err := ParseGates(c.spec)
		var got []string
		for _, g := range gates {
			got = append(got, g.String())
		}
		if strings.Join(got, " ") != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseGates(%q) = %v, %v; want %q, error with %q", c.spec, got, err, c.want, c.err)
		}
	}
}

func TestGateDirection(t *testing.T) {
	drop, rise := Gate{"throughput", -5}, Gate{"p99", 10}
	for _, c := range []struct {
		g    Gate
		pct  float64
		want bool
	}{{drop, -5, true}, {drop, -4.9, false}, {drop, 30, false}, {rise, 10, true}, {rise, 9.99, false}, {rise, -50, false}} {
		if got := c.g.passedBy(c.pct); got != c.want {
			t.Errorf("%s passedBy(%v) = %v, want %v", c.g, c.pct, got, c.want)
		}
	}
}

func trials(n int, p50 time.Duration, valid bool) []results.Row {
	var rows []results.Row
	for i := 1; i <= n; i++ {
		d := p50 + time.Duration(i)*100*time.Microsecond
		rows = append(rows, results.Row{Scenario: "s", Target: "t", Trial: i, Mode: "closed", Connections: 20,
			ThroughputRPS: 20 / d.Seconds(), SuccessRatio: 1, LatencyP50: d, LatencyP99: d, LatencyP999: d,
			Duration: time.Second, Memory: "1g", Valid: valid})
	}
	return rows
}

func TestNoValidTrialLeftFailsAGate(t *testing.T) {
	gates, _ := ParseGates("p99:+10%")
	r := Compare("old.csv", trials(5, 20*time.Millisecond, true), "new.csv", trials(5, 20*time.Millisecond, false), Options{Alpha: 0.05, Gates: gates})
	if f := r.Failures(); len(f) != 1 || !strings.Contains(f[0], "no valid trial in new.csv") {
		t.Errorf("failures %v, want the cell without valid trials", f)
	}
	if f := Compare("old.csv", trials(5, 20*time.Millisecond, true), "new.csv", trials(5, 20*time.Millisecond, false), Options{Alpha: 0.05}).Failures(); len(f) != 0 {
		t.Errorf("failures %v without a gate", f)
	}
}

// TestAGateThatCannotDecideDoesNotPass: for each side and each reason a trial is not counted
// (invalid, not steady, calibration missed, still warming up), a side left with none, and sides
// too small for the Mann–Whitney test to reach alpha, make the gate undecided, naming the cell,
// the side and the reason; never passed. A candidate without any valid trial stays a failure.
func TestAGateThatCannotDecideDoesNotPass(t *testing.T) {
	spoil := map[string]func(*results.Row){
		"invalid":     func(r *results.Row) { r.Valid, r.InvalidReason = false, "success ratio 0.5 below 0.99" },
		"not steady":  func(r *results.Row) { r.SteadyJudged, r.Steady = true, false },
		"calibration": func(r *results.Row) { r.Calibrated, r.CalibrationWithin = true, false },
		"warming": func(r *results.Row) {
			r.JITJudged, r.JITBusy = true, r.Duration
		},
	}
	spoilt := func(rows []results.Row, how string, n int) []results.Row {
		rows = slices.Clone(rows)
		for i := range n {
			spoil[how](&rows[i])
		}
		return rows
	}
	five := func() []results.Row { return trials(5, 20*time.Millisecond, true) }
	slower := func(n int) []results.Row { return trials(n, 30*time.Millisecond, true) }
	cases := []struct {
		name          string
		old, new      []results.Row
		fail, undecid string // "" when none is wanted
	}{
		{"old all invalid", spoilt(five(), "invalid", 5), slower(5), "", "s/t: old old.csv has 0 valid trials of 5 (5 invalid): no verdict of p50:+5%"},
		{"old all not steady", spoilt(five(), "not steady", 5), slower(5), "", "old old.csv has 0 valid trials of 5 (5 not steady)"},
		{"old all calibration missed", spoilt(five(), "calibration", 5), slower(5), "", "old old.csv has 0 valid trials of 5 (5 calibration missed its limits)"},
		{"old all still warming", spoilt(five(), "warming", 5), slower(5), "", "old old.csv has 0 valid trials of 5 (5 still warming up)"},
		{"old mixed", spoilt(spoilt(five(), "calibration", 5), "invalid", 2), slower(5), "", "old old.csv has 0 valid trials of 5 (2 invalid, 3 calibration missed its limits)"},
		{"new all not steady", five(), spoilt(slower(5), "not steady", 5), "", "new new.csv has 0 valid trials of 5 (5 not steady)"},
		{"new all calibration missed", five(), spoilt(slower(5), "calibration", 5), "", "new new.csv has 0 valid trials of 5 (5 calibration missed its limits)"},
		{"new all still warming", five(), spoilt(slower(5), "warming", 5), "", "new new.csv has 0 valid trials of 5 (5 still warming up)"},
		{"new all invalid fails", five(), spoilt(slower(5), "invalid", 5), "s/t: no valid trial in new.csv (5 in old.csv)", ""},
		{"both all invalid", spoilt(five(), "invalid", 5), spoilt(slower(5), "invalid", 5), "", "new new.csv has 0 valid trials of 5 (5 invalid)"},
		{"three a side", five()[:3], slower(3), "", "s/t: 3+3 valid trials cannot reach p < 0.05 (Mann–Whitney: the smallest p is 0.1): no verdict of p50:+5%; need 4 a side"},
		{"three a side after invalid old", spoilt(five(), "invalid", 2), slower(3), "", "3+3 valid trials cannot reach p < 0.05"},
		{"three a side after calibration new", five()[:3], spoilt(slower(5), "calibration", 2), "", "3+3 valid trials cannot reach p < 0.05"},
		{"two against five", five()[:2], slower(5), "", "2+5 valid trials cannot reach p < 0.05"},
		{"four a side decides", five()[:4], slower(4), "s/t: p50 +49.", ""},
		{"three against ten decides", five()[:3], slower(10), "s/t: p50 +", ""},
	}
	gates, _ := ParseGates("p50:+5%")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Compare("old.csv", c.old, "new.csv", c.new, Options{Alpha: 0.05, NoisePct: 3, Gates: gates})
			f, u := strings.Join(r.Failures(), "\n"), strings.Join(r.Undecided(), "\n")
			if c.fail == "" && f != "" || !strings.Contains(f, c.fail) {
				t.Errorf("failures %q, want %q", f, c.fail)
			}
			if c.undecid == "" && u != "" || !strings.Contains(u, c.undecid) {
				t.Errorf("undecided %q, want %q", u, c.undecid)
			}
			notes := strings.Join(r.Notes(), "\n")
			if strings.Contains(notes, "passed") {
				t.Errorf("the gate passed:\n%s", notes)
			}
			if c.fail == "" && !strings.Contains(notes, "gate p50:+5%: inconclusive") {
				t.Errorf("notes do not call the gate inconclusive:\n%s", notes)
			}
			// Without a gate nothing is undecided: the table and notes say what they can.
			if u := Compare("old.csv", c.old, "new.csv", c.new, Options{Alpha: 0.05, NoisePct: 3}).Undecided(); len(u) > 0 {
				t.Errorf("undecided without a gate: %q", u)
			}
		})
	}
}

// TestAGateOnNothingDoesNotPass: a gate whose metric no compared cell has judged nothing, and a
// find-max cell with too few maxima is as undecided as any other.
func TestAGateOnNothingDoesNotPass(t *testing.T) {
	gates, _ := ParseGates("max:-10%")
	r := Compare("old.csv", trials(5, 20*time.Millisecond, true), "new.csv", trials(5, 20*time.Millisecond, true), Options{Alpha: 0.05, NoisePct: 3, Gates: gates})
	if u := r.Undecided(); len(u) != 1 || u[0] != "gate max:-10% judged no cell: no cell compared is a --find-max search" {
		t.Errorf("undecided %q", u)
	}
	cpu, _ := ParseGates("cpu:+10%")
	r = Compare("old.csv", trials(5, 20*time.Millisecond, true), "new.csv", trials(5, 20*time.Millisecond, true), Options{Alpha: 0.05, NoisePct: 3, Gates: cpu})
	if u := r.Undecided(); len(u) != 1 || u[0] != "gate cpu:+10% judged no cell: no cell compared records cpu" {
		t.Errorf("undecided %q", u)
	}
	old := append(trials(5, 50*time.Millisecond, true), searchSteps(1000, 1100, 1050)...)
	new := append(trials(5, 50*time.Millisecond, true), searchSteps(700, 750, 720)...)
	r = Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, NoisePct: 3, Gates: gates})
	if u := strings.Join(r.Undecided(), "\n"); !strings.Contains(u, "3+3 maxima cannot reach p < 0.05") {
		t.Errorf("undecided %q, want the searches too few", u)
	}
}

// TestMissingCellFailsAGate: a candidate run stopped before a cell of the baseline never passes;
// a cell only in the new file is no failure.
func TestMissingCellFailsAGate(t *testing.T) {
	gates, _ := ParseGates("p99:+10%")
	renamed := func(rows []results.Row, target string) []results.Row {
		out := slices.Clone(rows)
		for i := range out {
			out[i].Target = target
		}
		return out
	}
	same := trials(5, 20*time.Millisecond, true)
	both := append(slices.Clone(same), renamed(same, "u")...)
	cases := []struct {
		name     string
		old, new []results.Row
		gates    []Gate
		want     string
	}{
		{"missing, gated", both, same, gates, "1 cell(s) of old.csv missing from new.csv: s/u"},
		{"missing, no gate", both, same, nil, ""},
		{"only in new", same, both, gates, ""},
		{"all there", both, both, gates, ""},
	}
	for _, c := range cases {
		f := Compare("old.csv", c.old, "new.csv", c.new, Options{Alpha: 0.05, Gates: c.gates}).Failures()
		if got := strings.Join(f, "\n"); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: failures %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTrialsThatDisagreeWithinAFileAreAMismatch(t *testing.T) {
	old := trials(5, 20*time.Millisecond, true)
	new := trials(5, 30*time.Millisecond, true)
	new[2].Memory = "2g"
	r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05})
	c := r.Cells[0]
	if !c.Refused || len(c.Mismatches) != 1 || c.Mismatches[0] != (Mismatch{"memory", "1g", "1g | 2g"}) || len(c.Changes) != 0 {
		t.Errorf("cell %+v, want refused on memory 1g | 2g", c)
	}
	if r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, AllowMismatch: []string{"memory"}}); r.Cells[0].Refused || len(r.Cells[0].Changes) == 0 {
		t.Errorf("--allow-mismatch=memory still refused: %+v", r.Cells[0])
	}
}

// A file older than the timeout_s column beside a newer one: the field is matched by name and
// reported as not recorded, never read at another field's index.
func TestAFieldOneFileLacksIsAMismatch(t *testing.T) {
	old := trials(3, 20*time.Millisecond, true)
	new := trials(3, 20*time.Millisecond, true)
	for i := range new {
		new[i].Timeout = 2 * time.Second
	}
	for _, pair := range [][2][]results.Row{{old, new}, {new, old}} {
		c := Compare("a.csv", pair[0], "b.csv", pair[1], Options{Alpha: 0.05}).Cells[0]
		if !c.Refused || len(c.Mismatches) != 1 || c.Mismatches[0].Field != "timeout_s" ||
			!strings.Contains(c.Mismatches[0].Old+c.Mismatches[0].New, "(not recorded)") {
			t.Errorf("cell %+v, want refused on timeout_s, one side not recorded", c)
		}
	}
}

func TestRegressionIsSignificantAndFailsTheGate(t *testing.T) {
	gates, _ := ParseGates("throughput:-5%,p50:+5%")
	r := Compare("old.csv", trials(5, 20*time.Millisecond, true), "new.csv", trials(5, 30*time.Millisecond, true), Options{Alpha: 0.05, Gates: gates})
	failed := map[string]bool{}
	for _, ch := range r.Cells[0].Changes {
		if ch.Failed != nil {
			failed[ch.Metric.Name] = true
		}
		if ch.Metric.Name == "success" && ch.Significant() {
			t.Error("equal success ratios called a significant change")
		}
	}
	if !failed["throughput"] || !failed["p50"] || len(failed) != 2 {
		t.Errorf("gates failed on %v, want throughput and p50", failed)
	}
}

func TestResourcesAreComparedOnlyWhenRecorded(t *testing.T) {
	names := func(r Result) string {
		var s []string
		for _, ch := range r.Cells[0].Changes {
			s = append(s, ch.Metric.Name)
		}
		return strings.Join(s, " ")
	}
	old, new := trials(5, 20*time.Millisecond, true), trials(5, 20*time.Millisecond, true)
	if got := names(Compare("a", old, "b", new, Options{Alpha: 0.05})); got != "throughput success p50 p99 p99.9" {
		t.Errorf("without resources: %s", got)
	}
	for i := range new {
		new[i].CPUCores, new[i].MemoryPeak = 0.9, 300<<20
	}
	if got := names(Compare("a", old, "b", new, Options{Alpha: 0.05})); got != "throughput success p50 p99 p99.9 cpu memory" {
		t.Errorf("with resources in one file: %s", got)
	}
}

// A shift that separates every trial (p = 0.008 with 5 a side) is significant only when it is at
// least the noise threshold.
func TestNoiseThreshold(t *testing.T) {
	base := 20 * time.Millisecond
	for _, c := range []struct {
		name       string
		shift      time.Duration // of every new trial over the slowest old one: 200 µs moves the median p50 +2%, 2 ms +11%
		noise      float64
		wantSignif bool
		wantNoise  bool
	}{
		{"2% under a 3% threshold", 200 * time.Microsecond, 3, false, true},
		{"2% without a threshold", 200 * time.Microsecond, 0, true, false},
		{"11% over a 3% threshold", 2 * time.Millisecond, 3, true, false},
		{"no shift", 0, 3, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := trials(5, base, true)
			new := trials(5, base+c.shift, true)
			if c.shift > 0 {
				// every new trial above every old one
				for i := range new {
					new[i].LatencyP50 = old[len(old)-1].LatencyP50 + c.shift + time.Duration(i)*time.Microsecond
				}
			}
			gates, _ := ParseGates("p50:+0.5%")
			r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, NoisePct: c.noise, Gates: gates})
			for _, ch := range r.Cells[0].Changes {
				if ch.Metric.Name != "p50" {
					continue
				}
				if ch.Significant() != c.wantSignif || ch.WithinNoise != c.wantNoise || (ch.Failed != nil) != c.wantSignif {
					t.Errorf("p50 %+.2f%% p=%.3f: significant %v within noise %v failed %v; want %v, %v, %v",
						ch.Percent, ch.Comparison.P, ch.Significant(), ch.WithinNoise, ch.Failed, c.wantSignif, c.wantNoise, c.wantSignif)
				}
			}
		})
	}
}

// searchSteps are the steps of find-max searches of target t, one search per maximum: each a
// fresh container (its own start-up time), confirming its maximum twice (the second step going on
// from the first, without a warm-up) and failing above it twice.
func searchSteps(maxima ...int) []results.Row {
	var rows []results.Row
	for i, m := range maxima {
		for _, s := range []struct {
			rate   int
			valid  bool
			warmup time.Duration
		}{{m / 2, true, time.Second}, {m, true, time.Second}, {m, true, 0}, {m + m/10, false, time.Second}, {m + m/10, false, time.Second}} {
			r := results.Row{Scenario: "io-heavy" + results.FindMaxSuffix, Target: "t", Trial: len(rows) + 1, Mode: "open", Warmup: s.warmup,
				RequestedRPS: s.rate, Connections: s.rate / 4, Valid: s.valid, Startup: time.Duration(900+i) * time.Millisecond, ThroughputRPS: float64(s.rate)}
			if !s.valid {
				r.InvalidReason = "slo not met: p99 300ms ≥ 100ms"
			}
			rows = append(rows, r)
		}
	}
	results.Upgrade(rows) // written as an older iotbench did: searches and kinds from the file
	return rows
}

// TestFindMaxCellsCompareTheirMaxima: a find-max cell is compared on its searches' maxima: with
// two searches a side, their range and no significance; with five, the Mann–Whitney test and the
// gate on max, as any metric. The steps' own rates, connections and warm-ups are no mismatch.
func TestFindMaxCellsCompareTheirMaxima(t *testing.T) {
	gates, _ := ParseGates("max:-10%")
	for _, c := range []struct {
		name       string
		old, new   []int
		wantSignif bool
		wantText   string
	}{
		{"two searches", []int{1000, 1100}, []int{800, 850}, false, "1050.0 [1000.0–1100.0]"},
		{"five searches", []int{1000, 1020, 1050, 990, 1010}, []int{800, 820, 790, 810, 805}, true, "1010.0 [990.0–1050.0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := append(trials(5, 50*time.Millisecond, true), searchSteps(c.old...)...)
			new := append(trials(5, 50*time.Millisecond, true), searchSteps(c.new...)...)
			r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, NoisePct: 3, Gates: gates})
			if len(r.Cells) != 2 || !r.Cells[1].Search || r.Cells[1].Refused || len(r.Cells[1].Changes) != 1 {
				t.Fatalf("cells %+v, want the fixed-rate cell and the find-max cell compared", r.Cells)
			}
			ch := r.Cells[1].Changes[0]
			if ch.Metric.Name != "max" || ch.Significant() != c.wantSignif || (ch.Failed != nil) != c.wantSignif {
				t.Errorf("max change %+v, want significant and gated %v", ch, c.wantSignif)
			}
			var b strings.Builder
			if err := Write(&b, r, "table"); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"max (rps)", c.wantText, "are compared on the maxima of their searches"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}
