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

func TestFindMaxStepsAreNotCompared(t *testing.T) {
	steps := func(rates ...int) []results.Row {
		rows := trials(len(rates), 50*time.Millisecond, true)
		for i := range rows {
			rows[i].Scenario, rows[i].Mode, rows[i].RequestedRPS = "io-heavy"+results.FindMaxSuffix, "open", rates[i]
		}
		return rows
	}
	old := append(trials(5, 50*time.Millisecond, true), steps(500, 1000, 2000)...)
	new := append(trials(5, 50*time.Millisecond, true), steps(500, 1000)...)
	r := Compare("old.csv", old, "new.csv", new, Options{Alpha: 0.05, NoisePct: 3})
	if len(r.Cells) != 1 || r.Cells[0].Scenario != "s" || r.Cells[0].Refused {
		t.Errorf("cells %+v, want the fixed-rate cell compared alone", r.Cells)
	}
	if strings.Join(r.Searches, " ") != "io-heavy.find-max/t" || len(r.OnlyOld)+len(r.OnlyNew) != 0 {
		t.Errorf("searches %v, only old %v, only new %v; want the find-max cell set aside once", r.Searches, r.OnlyOld, r.OnlyNew)
	}
	if notes := strings.Join(r.Notes(), "\n"); !strings.Contains(notes, "not compared: io-heavy.find-max/t, the steps of --find-max searches") || strings.Contains(notes, "REFUSED") {
		t.Errorf("notes:\n%s", notes)
	}
}
