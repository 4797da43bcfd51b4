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
// fresh container (its own start-up time), confirming its maximum twice and failing above it twice.
func searchSteps(maxima ...int) []results.Row {
	var rows []results.Row
	for i, m := range maxima {
		for _, s := range []struct {
			rate  int
			valid bool
		}{{m / 2, true}, {m, true}, {m + m/10, false}, {m + m/10, false}, {m, true}} {
			r := results.Row{Scenario: "io-heavy" + results.FindMaxSuffix, Target: "t", Trial: len(rows) + 1, Mode: "open",
				RequestedRPS: s.rate, Connections: s.rate / 4, Valid: s.valid, Startup: time.Duration(900+i) * time.Millisecond, ThroughputRPS: float64(s.rate)}
			if !s.valid {
				r.InvalidReason = "slo not met: p99 300ms ≥ 100ms"
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestFindMaxCellsCompareTheirMaxima: a find-max cell is compared on its searches' maxima: with
// two searches a side, their range and no significance; with five, the Mann–Whitney test and the
// gate on max, as any metric. The steps' own rates and connections are no mismatch.
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
