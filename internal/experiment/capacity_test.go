package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// onOneCPU gives rows a one-CPU cpuset and perRequest of CPU time a request: the CPUs' bound.
func onOneCPU(rows []results.Row, perRequest time.Duration) []results.Row {
	for i := range rows {
		rows[i].CPUSet, rows[i].CPUPerRequest = "1", perRequest
	}
	return rows
}

// A run's design bounds what it can show: io-corrected's 256 connections against 50 ms answers
// pass no more than 5,120 rps, a pool of 200 threads no more than 4,000. A factor beyond what the
// bounds allow, or an order whose worse figure the design held, is not decided by the run.
func TestADesignBoundsWhatARunCanShow(t *testing.T) {
	io := Design{Connections: 256, Service: 50 * time.Millisecond, Pools: map[string]int{"platform": 200}}
	virtual := func() []results.Row {
		return onOneCPU(trials("virtual", 4680, 4690, 4700, 4710, 4695, 4685), 122*time.Microsecond)
	}
	platform := func() []results.Row {
		return onOneCPU(trials("platform", 3940, 3945, 3950, 3955, 3948, 3942), 200*time.Microsecond)
	}
	// 68% of the connections' bound, its CPU ~43% busy: latency at this load, not capacity.
	nest := func() []results.Row {
		return onOneCPU(trials("nest", 3460, 3465, 3470, 3475, 3468, 3462), 126*time.Microsecond)
	}
	ratio := func(of, to string, published float64) *Claim {
		return &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: of, To: to, Published: published}}
	}
	cases := []struct {
		name   string
		design Design
		claim  *Claim
		rows   []results.Row
		want   Verdict
		why    string // a part of Why, Decide and Measured
	}{
		{"a factor beyond the design's bound cannot show", io, ratio("virtual", "platform", 4.6), join(virtual(), platform()), Inconclusive,
			"no factor above 5,120 ÷ 3,947 = 1.30× can show, and the published 4.60× lies beyond"},
		{"the run that could decide it is named", io, ratio("virtual", "platform", 4.6), join(virtual(), platform()), Inconclusive,
			"`iotbench run --scenario s --targets virtual,platform --find-max --rate 5120`, or this run at more connections than 256"},
		{"each figure is printed beside its bound", io, ratio("virtual", "platform", 4.6), join(virtual(), platform()), Inconclusive,
			"bounds: virtual ≤ 5,120 rps (256 connections ÷ 50 ms: the run's design, which held it), platform ≤ 4,000 rps (200 threads ÷ 50 ms: its own)"},
		{"a factor within the bounds is decided", io, ratio("virtual", "platform", 1.19), join(virtual(), platform()), Holds, "lies in the 95% interval"},
		{"a lower figure the design held decides no direction", io, ratio("virtual", "nest", 1.9), join(virtual(), nest()), Inconclusive,
			"nest reached 68% of the run's design bound, 5,120 rps (256 connections ÷ 50 ms), below its own, 7,937 rps (1 CPU ÷ 126 µs of CPU a request)"},
		{"nor a factor that would hold", io, ratio("nest", "virtual", 0.74), join(virtual(), nest()), Inconclusive, "not its capacity"},
		{"without CPU figures nothing says the design held it", io, ratio("virtual", "platform", 4.6),
			join(trials("virtual", 4680, 4690, 4700, 4710), trials("platform", 3940, 3945, 3950, 3955)), Direction, "published 4.60×"},
		{"a winner beaten by figures the design held is not decided", io,
			&Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "virtual"}},
			join(virtual(), onOneCPU(trials("bun", 5040, 5045, 5050, 5044, 5041, 5048), 80*time.Microsecond)), Inconclusive,
			"the run's design, not the target, held the figure of virtual (92% of 5,120 rps (256 connections ÷ 50 ms))"},
		{"a winner over a pool's bound is decided", io,
			&Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "virtual"}},
			join(virtual(), platform()), Holds, "significant"},
		{"a tie the design made is not the targets'", Design{Connections: 100, Service: 500 * time.Millisecond},
			&Claim{Quote: "q", Runs: []string{"r"}, Tie: &Tie{Metric: "throughput_rps", Targets: []string{"flux", "flux-virtual"}}},
			join(onOneCPU(trials("flux", 193, 193.5, 192.8, 193.1), time.Millisecond), onOneCPU(trials("flux-virtual", 193.2, 193, 192.9, 193.3), time.Millisecond)),
			Inconclusive, "equal by construction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", Claims: []*Claim{c.claim}, Runs: []*Run{{Name: "r", Scenario: "s", Design: c.design}}}
			got := Check(e, map[string][]results.Row{"r": c.rows})
			if len(got) != 1 {
				t.Fatalf("%d findings, want 1", len(got))
			}
			text := got[0].Why + " / " + got[0].Decide + " / " + got[0].Measured
			if got[0].Verdict != c.want || !strings.Contains(text, c.why) {
				t.Errorf("verdict %q (%s), want %q with %q", got[0].Verdict, text, c.want, c.why)
			}
		})
	}
}

// "1.9× faster than the best JavaScript option" is tested against the run's best of them, not
// the one the source's table ranked first.
func TestANamedComparisonIsTheOneTested(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "java", To: "nest", ToBestOf: []string{"nest", "bun", "express"}, Published: 1.9}}
	java, nest, bun := trials("java", 190, 200, 205, 210), trials("nest", 98, 100, 101, 102), trials("bun", 240, 250, 255, 260)
	cases := []struct {
		name string
		rows []results.Row
		want Verdict
		why  string
	}{
		{"the best of them measured", join(java, nest, bun, trials("express", 120, 121, 122, 123)), DoesNotHold, "against the best in this run of the 3 targets the claim's comparison names (to_best_of): bun 252"},
		{"one of them with no valid trial might be the best", join(java, nest, bun, invalid(trials("express", 300, 310, 320, 330), 1, "success ratio 0.5 below 0.99")), Inconclusive, "express invalid in 1 of 4 trials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r", Targets: []string{"java", "nest", "bun", "express"}}}}
			got := Check(e, map[string][]results.Row{"r": c.rows})[0]
			if got.Verdict != c.want || !strings.Contains(got.Why, c.why) {
				t.Errorf("verdict %q (%s; measured %s), want %q with %q", got.Verdict, got.Why, got.Measured, c.want, c.why)
			}
		})
	}
}

// A runtime of several threads against a single-threaded one on one target CPU, where the source
// had 8: the verdict line names the condition and what it changes; on as many CPUs as the
// source, or between runtimes alike, there is none.
func TestOneCPUIsACondition(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "java", To: "node", Published: 2}}
	rows := func(cpus string) []results.Row {
		out := join(trials("java", 190, 200, 205, 210), trials("node", 98, 100, 101, 102))
		for i := range out {
			out[i].CPUSet = cpus
		}
		return out
	}
	single := Design{SingleThreaded: map[string]bool{"node": true}}
	cases := []struct {
		name       string
		sourceCPUs int
		design     Design
		rows       []results.Row
		cond, why  string // empty: no condition
	}{
		{"one CPU where the source had 8", 8, single, rows("1"), "on 1 target CPU; the source had 8",
			"java runs several threads (request threads or a pool, the JVM's JIT and GC) on it, one after another where the source ran them side by side; node runs one thread, which uses one CPU wherever it runs. On the source's 8 CPUs java could use up to 8× what node used"},
		{"as many CPUs as the source", 2, single, rows("0-1"), "", ""},
		{"the source's CPUs unknown", 0, single, rows("1"), "", ""},
		{"two runtimes of several threads", 8, Design{}, rows("1"), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", SourceCPUs: c.sourceCPUs, Claims: []*Claim{claim}, Runs: []*Run{{Name: "r", Design: c.design}}}
			got := Check(e, map[string][]results.Row{"r": c.rows})[0]
			if got.Condition != c.cond || !strings.Contains(got.Why, c.why) || got.Verdict != Holds {
				t.Errorf("condition %q, verdict %q (%s); want %q, holds, with %q", got.Condition, got.Verdict, got.Why, c.cond, c.why)
			}
		})
	}
}

// closedLoop makes rows of a closed loop of conns connections over phase.
func closedLoop(rows []results.Row, conns int, phase time.Duration) []results.Row {
	for i := range rows {
		rows[i].Mode, rows[i].Connections, rows[i].Duration = "closed", conns, phase
	}
	return rows
}

// Seed 002's count: 100 connections over 2 minutes answer a whole number of 5-s waves, so each
// figure is within ±0.83 rps by the count alone (4% of 20, 8% of 10): no interval is narrower,
// and the factor is the fraction of the medians printed beside it.
func TestACoarseCountWidensTheInterval(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "virtual", To: "tomcat50", Published: 1.88}}
	rows := join(closedLoop(trials("virtual", 20, 20, 20, 20, 20, 20), 100, 2*time.Minute),
		closedLoop(trials("tomcat50", 10, 10, 10, 10, 10, 10), 100, 2*time.Minute))
	e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
	got := Check(e, map[string][]results.Row{"r": rows})[0]
	want := "2.00× [1.77–2.27] (virtual 20 / tomcat50 10, 6 and 6 valid trials), the interval no narrower than the counts resolve (±4% of virtual, ±8% of tomcat50)"
	if got.Verdict != Holds || !strings.Contains(got.Measured, want) {
		t.Errorf("verdict %q, measured %q; want holds, %q", got.Verdict, got.Measured, want)
	}
	if f := FigureOf(rows, "tomcat50", MetricNamed("throughput_rps")); f.Text() != "10 [9.2–10.8]" {
		t.Errorf("figure %q, want 10 [9.2–10.8]: the median's interval as wide as the count's resolution", f.Text())
	}
	// One connection answering every 5 s over 30 s: 6 or 7 answers, ±0.033 rps.
	alone := closedLoop(trials("alone", 0.2, 0.2, 0.2, 0.2, 0.2, 0.2), 1, 30*time.Second)
	if f := FigureOf(alone, "alone", MetricNamed("throughput_rps")); f.Text() != "0.2 [0.167–0.233]" {
		t.Errorf("figure %q, want 0.2 [0.167–0.233]: digits enough for the interval the count resolves", f.Text())
	}
}

// The factor is the fraction of the medians printed beside it, not another estimate (2.90×
// beside 18,883 / 6,639 = 2.84 was a median of pairwise ratios).
func TestTheFactorIsTheFractionBesideIt(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: 2}}
	rows := join(trials("a", 18000, 18883, 19500, 19900, 18800, 18950), trials("b", 6000, 6639, 6700, 6500, 6650, 6620))
	e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
	got := Check(e, map[string][]results.Row{"r": rows})[0].Measured
	if !strings.HasPrefix(got, "2.85× [") || !strings.Contains(got, "(a 18,916 / b 6,630,") {
		t.Errorf("measured %q, want 18,916 / 6,630 = 2.85× beside its fraction", got)
	}
}

// disturb marks trial n of rows as measured while other processes took CPU beside it.
func disturb(rows []results.Row, n int) []results.Row {
	rows[n-1].Warnings, rows[n-1].Disturbed = "disturbed: the hypervisor took 0.19 cores of CPUs 0-1 (steal)", true
	return rows
}

// A disturbed cell is left out of the verdicts and counted: with enough clean trials the claim is
// decided on them, with too few it waits for a quiet rerun.
func TestADisturbedCellIsLeftOut(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: 2}}
	cases := []struct {
		name string
		rows []results.Row
		want Verdict
		why  string
	}{
		// The disturbed trial's 900 would pull the interval past 2.
		{"enough clean trials decide", join(disturb(trials("a", 190, 200, 205, 210, 900), 5), trials("b", 98, 100, 101, 102)), Holds, "(a 202 / b 100, 4 and 4 valid trials)"},
		{"too few clean trials wait for a quiet rerun", join(disturb(trials("a", 190, 200, 205, 210), 2), trials("b", 98, 100, 101, 102)), Inconclusive,
			"a disturbed in 1 of 4 trials (other processes took CPU beside them: left out)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
			got := Check(e, map[string][]results.Row{"r": c.rows})[0]
			text := got.Why + " / " + got.Decide + " / " + got.Measured
			if got.Verdict != c.want || !strings.Contains(text, c.why) {
				t.Errorf("verdict %q (%s), want %q with %q", got.Verdict, text, c.want, c.why)
			}
			if got.Verdict == Inconclusive && !strings.Contains(got.Decide, "quiet host") {
				t.Errorf("decide %q names no quiet rerun", got.Decide)
			}
		})
	}
}
