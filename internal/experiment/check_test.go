package experiment

import (
	"cmp"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
)

// trials makes one valid row per throughput of target.
func trials(target string, rps ...float64) []results.Row {
	var out []results.Row
	for i, v := range rps {
		out = append(out, results.Row{Target: target, Trial: i + 1, Valid: true, ThroughputRPS: v, Requests: 100, Successes: 100, SuccessRatio: 1})
	}
	return out
}

// invalid marks a trial invalid for reason, with the kind an older file's reader gives its words.
func invalid(rows []results.Row, trial int, reason string) []results.Row {
	rows[trial-1].Valid, rows[trial-1].InvalidReason = false, reason
	results.Upgrade(rows[trial-1 : trial])
	return rows
}

func join(groups ...[]results.Row) []results.Row {
	var out []results.Row
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// gen marks trial n of rows as invalid because the generator fell behind with busy % of its CPUs.
func gen(rows []results.Row, n int, busy float64) []results.Row {
	rows = invalid(rows, n, "generator delayed requests: its own p99 delay 300ms exceeds 20ms: the load generator was short of CPU; latencies would carry its delay")
	rows[n-1].GeneratorCPUPercent = busy
	return rows
}

// unsteady marks trial n of rows as valid but not steady (schema 10's self-check).
func unsteady(rows []results.Row, n int) []results.Row {
	rows[n-1].SteadyJudged, rows[n-1].Steady = true, false
	rows[n-1].Warnings = "not steady: p99 rose 1 ms per second over the measured phase"
	return rows
}

// miscalibrated marks trial n of rows as valid but measured by a run whose calibration missed its
// limits.
func miscalibrated(rows []results.Row, n int) []results.Row {
	rows[n-1].Calibrated, rows[n-1].CalibrationWithin = true, false
	rows[n-1].Warnings = "calibration missed its limits: p99 +4.100 ms off the truth"
	return rows
}

// warming marks trial n of rows as valid but measured while its JIT compiled for most of the phase.
func warming(rows []results.Row, n int) []results.Row {
	rows[n-1].Duration, rows[n-1].JITBusy, rows[n-1].JITJudged = 30*time.Second, 33*time.Second, true
	rows[n-1].Warnings = "the JIT compiled for 33s during the measured phase (110.0% of it): the target was still warming up"
	return rows
}

// endedEarly marks trial n of rows as warmed up until steady, ended on its own before its maximum.
func endedEarly(rows []results.Row, n int) []results.Row {
	rows[n-1].WarmupAuto, rows[n-1].Warmup, rows[n-1].WarmupTaken = true, 2*time.Minute, 70*time.Second
	return rows
}

func TestCheck(t *testing.T) {
	ratio := func(published float64) *Claim {
		return &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: published}}
	}
	rank := &Claim{Quote: "q", Runs: []string{"r"}, Ranking: &Ranking{Metric: "throughput_rps", Order: []string{"a", "b", "c"}}}
	win := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "a"}}
	tied := &Claim{Quote: "q", Runs: []string{"r"}, Tie: &Tie{Metric: "throughput_rps", Targets: []string{"a", "b"}}}
	lowLatency := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "latency_mean_ms", Target: "a"}}
	skipped := results.Row{Target: "b", Trial: 1, CPUSet: "1", Fault: fault.Skipped, InvalidReason: "skipped: needs 2 target CPUs; this host gives targets 1"}
	// Skipped on a host with the CPUs the run needs: its start failed; no larger host decides it,
	// whatever the words of its reason.
	startFailures := results.Row{Target: "b", Trial: 1, CPUSet: "1-2", Fault: fault.Skipped, InvalidReason: "skipped: needs 2 target CPUs (words only)"}
	a4, b4 := trials("a", 190, 200, 205, 210), trials("b", 98, 100, 101, 102)
	latency := func(target string, ms ...float64) []results.Row {
		var out []results.Row
		for i, v := range ms {
			out = append(out, results.Row{Target: target, Trial: i + 1, Valid: true, Successes: 9, LatencyMean: time.Duration(v * 1e6)})
		}
		return out
	}

	cases := []struct {
		name  string
		claim *Claim
		rows  []results.Row
		want  Verdict
		why   string // a part of Why and Decide
	}{
		{"ratio in the interval", ratio(2), join(a4, b4), Holds, "lies in the 95% interval"},
		{"ratio in direction, not in size", ratio(4.6), join(a4, b4), Direction, "published 4.60×, measured 2.01×"},
		{"ratio reversed", ratio(2), join(trials("a", 90, 100, 105, 110), trials("b", 190, 200, 205, 210)), DoesNotHold, "does not confirm its direction"},
		{"ratio: the interval holds 1 too", ratio(1.2), join(trials("a", 80, 100, 120, 130), trials("b", 90, 100, 105, 110)), Inconclusive, "holds both 1.20× and 1×"},
		// 3 against 3 can never reach p < 0.05: however far apart, no verdict.
		{"three trials a side decide nothing", ratio(2), join(trials("a", 190, 200, 210), trials("b", 98, 100, 102)), Inconclusive, "the Mann–Whitney test needs 4 a side"},
		{"no holds on an invalid cell", ratio(2), join(invalid(trials("a", 190, 200, 205, 210), 2, "success ratio 0.5 below 0.99"), b4), Inconclusive, "a invalid in 1 of 4 trials (success ratio 0.5 below 0.99)"},
		{"no does-not-hold on an invalid cell", ratio(4.6), join(trials("a", 190, 200, 205, 210, 220), invalid(trials("b", 300, 310, 320, 330), 1, "success ratio 0.08 below 0.99")), Inconclusive, "fails under this load"},
		{"a target failing in one trial of five is not decided on the other four", ratio(2), join(invalid(trials("a", 190, 200, 205, 210, 215), 5, "success ratio 0.9 below 0.99"), b4), Inconclusive, "a invalid in 1 of 5 trials"},
		{"a trial the generator spoiled is left out", ratio(2), join(gen(trials("a", 190, 200, 205, 210, 500), 5, 30), b4), Holds, "lies in the 95% interval"},
		{"a phase that was not steady is left out", ratio(2), join(unsteady(trials("a", 190, 200, 205, 210, 900), 5), b4), Holds, "lies in the 95% interval"},
		{"too few steady trials decide nothing", ratio(2), join(unsteady(trials("a", 190, 200, 205, 210), 4), b4), Inconclusive, "a not steady in 1 of 4 trials (not steady: p99 rose"},
		{"fewer than 6 trials: 6 decide", ratio(2), join(unsteady(trials("a", 190, 200, 205, 210), 4), b4), Inconclusive, "6 trials a side (`iotbench reproduce x --runs r --trials 6`)"},
		{"6 trials left short by unsteady ones: more than 6 decide", ratio(2), join(unsteady(unsteady(unsteady(trials("a", 190, 200, 205, 210, 215, 220), 4), 5), 6), b4), Inconclusive, "12 trials a side (`iotbench reproduce x --runs r --trials 12`)"},
		{"a trial whose calibration missed is left out", ratio(2), join(miscalibrated(trials("a", 190, 200, 205, 210, 900), 5), b4), Holds, "lies in the 95% interval"},
		{"too few calibrated trials decide nothing", ratio(2), join(miscalibrated(trials("a", 190, 200, 205, 210), 4), b4), Inconclusive, "a calibration missed its limits in 1 of 4 trials (calibration missed its limits: p99"},
		{"a JVM still warming up decides nothing", ratio(2), join(warming(trials("a", 190, 200, 205, 210), 4), b4), Inconclusive, "a still warming up in 1 of 4 trials (its JIT busy for over 50% of the measured phase); valid trials: a 3; the Mann–Whitney test needs 4 a side to reach p < 0.05 / a rerun whose warm-up lasts until the JIT has finished compiling"},
		{"a JVM compiling after a warm-up that ended on its own needs a fixed warm-up, not a longer maximum", ratio(2), join(endedEarly(warming(trials("a", 190, 200, 205, 210), 4), 4), b4), Inconclusive, "a rerun with a fixed warm-up past the JIT's compilation (`warmup: 10m`): these warm-ups until steady ended on their own"},
		{"a disturbed generator: a quiet rerun decides", ratio(2), join(a4, gen(trials("b", 98, 100, 101, 102), 1, 23)), Inconclusive, "a rerun on a quiet host"},
		{"a saturated generator needs a larger host", ratio(2), join(a4, gen(trials("b", 98, 100, 101, 102), 1, 97)), LargerHost, "more CPUs for the generator"},
		{"a run skipped for CPUs needs a larger host", ratio(2), append(trials("a", 200), skipped), LargerHost, "a host of 3 CPUs or more"},
		{"a target skipped on a host large enough is not loaded", ratio(2), append(trials("a", 200), startFailures), Inconclusive, "b was not loaded"},
		{"no rows", ratio(2), nil, NotMeasured, "the run holds no rows"},
		{"ranking holds", rank, join(trials("a", 300, 301, 302, 303), trials("b", 200, 201, 202, 203), trials("c", 100, 101, 102, 103)), Holds, "each claimed order significant"},
		{"ranking reversed pair", rank, join(trials("a", 300, 301, 302, 303), trials("b", 100, 101, 102, 103), trials("c", 200, 201, 202, 203)), DoesNotHold, "c is better than b"},
		{"ranking: the test cannot tell", rank, join(trials("a", 300, 301, 302, 303), trials("b", 300, 301, 302, 303), trials("c", 1, 2, 3, 4)), Inconclusive, "cannot tell apart a and b"},
		{"ranking reversed between clean targets, one still warming up", rank, join(trials("a", 100, 101, 102, 103), warming(trials("b", 200, 201, 202, 203), 1), trials("c", 300, 301, 302, 303)), DoesNotHold, "c is better than a (Mann–Whitney, 95%); the run's other cells decide nothing (still warming up (the JIT compiling): b;"},
		{"ranking in order between clean targets, one still warming up", rank, join(trials("a", 300, 301, 302, 303), warming(trials("b", 200, 201, 202, 203), 1), trials("c", 100, 101, 102, 103)), Inconclusive, "b still warming up in 1 of 4 trials"},
		{"ranking reversed between measured targets, one with no rows", rank, join(trials("a", 100, 101, 102, 103), trials("b", 200, 201, 202, 203)), DoesNotHold, "b is better than a (Mann–Whitney, 95%); the run's other cells decide nothing (c has no rows in this run)"},
		{"ranking on ranges apart but two trials", rank, join(trials("a", 300, 310), trials("b", 200, 210), trials("c", 100, 110)), Inconclusive, "valid trials: a 2, b 2, c 2"},
		{"winner over every target of the run", win, join(trials("a", 300, 301, 302, 303), trials("b", 200, 201, 202, 203), trials("c", 100, 101, 102, 103)), Holds, "significant"},
		{"winner beaten", win, join(trials("a", 300, 301, 302, 303), trials("b", 400, 401, 402, 403), trials("c", 100, 101, 102, 103)), DoesNotHold, "b is better than a"},
		{"a winner beaten by a clean target, another still warming up", win, join(trials("a", 300, 301, 302, 303), trials("b", 400, 401, 402, 403), warming(trials("c", 100, 101, 102, 103), 2)), DoesNotHold, "b is better than a (Mann–Whitney, 95%); the run's other cells decide nothing (still warming up (the JIT compiling): c;"},
		{"a winner beating the clean targets, another still warming up", win, join(trials("a", 300, 301, 302, 303), trials("b", 200, 201, 202, 203), warming(trials("c", 100, 101, 102, 103), 2)), Inconclusive, "c still warming up in 1 of 4 trials"},
		{"a tie within the margin", tied, join(trials("a", 100, 101, 102, 103), trials("b", 99, 100, 101, 102)), Holds, "within ±10%"},
		{"a tie refuted", tied, join(trials("a", 100, 101, 102, 103), trials("b", 200, 201, 202, 203)), DoesNotHold, "differ by more than ±10%"},
		{"a tie too noisy to tell", tied, join(trials("a", 80, 100, 120, 140), trials("b", 100, 101, 102, 103)), Inconclusive, "beyond ±10%"},
		{"lower latency is better", lowLatency, join(latency("a", 5, 6, 7, 8), latency("b", 50, 60, 70, 80)), Holds, "significant"},
		{"a latency of no answer is no value", lowLatency, join(
			[]results.Row{{Target: "a", Trial: 1, InvalidReason: "success ratio 0.0000 below 0.99", Requests: 9}},
			latency("b", 50, 60, 70, 80)), Inconclusive, "a invalid in 1 of 1 trials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", Claims: []*Claim{c.claim}, Runs: []*Run{{Name: "r", NeedsCPUs: 2}}}
			var rows map[string][]results.Row
			if c.rows != nil {
				rows = map[string][]results.Row{"r": c.rows}
			}
			got := Check(e, rows)
			if len(got) != 1 {
				t.Fatalf("%d findings, want 1", len(got))
			}
			text := got[0].Why + " / " + got[0].Decide
			if got[0].Verdict != c.want || !strings.Contains(text, c.why) {
				t.Errorf("verdict %q (%s; measured %s), want %q with %q", got[0].Verdict, text, got[0].Measured, c.want, c.why)
			}
			if got[0].Verdict == Inconclusive && got[0].Decide == "" {
				t.Errorf("inconclusive without what would decide it: %s", got[0].Why)
			}
		})
	}
}

// An order's measured text says which is better in words: a lower latency is the better one, and
// a sign between the figures would read as comparing them.
func TestOrderSaysWhichIsBetter(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Ranking: &Ranking{Metric: "latency_mean_ms", Order: []string{"a", "b", "c"}}}
	var rows []results.Row
	for target, ms := range map[string][]float64{"a": {5, 6, 7, 8}, "b": {50, 60, 70, 80}, "c": {50, 60, 70, 80}} {
		for i, v := range ms {
			rows = append(rows, results.Row{Target: target, Trial: i + 1, Valid: true, Successes: 9, LatencyMean: time.Duration(v * 1e6)})
		}
	}
	e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
	got := Check(e, map[string][]results.Row{"r": rows})[0].Measured
	if !strings.Contains(got, "better than b") || !strings.Contains(got, "not told apart from c") || strings.ContainsAny(got, "<>~") {
		t.Errorf("measured %q, want a better than b, b not told apart from c, in words", got)
	}
}

// A winner's text lists its comparisons after it: as a chain, "a worse than b better than c" would
// read as b compared with c.
func TestAWinnerIsComparedWithEachOtherInAList(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "a", Over: []string{"b", "c"}}}
	var rows []results.Row
	for target, rps := range map[string][]float64{"a": {200, 201, 202, 203, 204}, "b": {300, 301, 302, 303, 304}, "c": {100, 101, 102, 103, 104}} {
		for i, v := range rps {
			rows = append(rows, results.Row{Target: target, Trial: i + 1, Valid: true, Successes: 9, ThroughputRPS: v})
		}
	}
	e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
	got := Check(e, map[string][]results.Row{"r": rows})[0].Measured
	if want := "a 202: worse than b 302, better than c 102"; !strings.Contains(got, want) {
		t.Errorf("measured %q, want %q", got, want)
	}
}

// A run resumed early may hold the winner's rows only: beating nobody is not a finding.
func TestAWinnerWithNoOtherTargetIsNotMeasured(t *testing.T) {
	claim := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "a"}}
	var rows []results.Row
	for i, v := range []float64{200, 201, 202, 203, 204} {
		rows = append(rows, results.Row{Target: "a", Trial: i + 1, Valid: true, Successes: 9, ThroughputRPS: v})
	}
	e := &Experiment{Name: "x", Claims: []*Claim{claim}, Runs: []*Run{{Name: "r"}}}
	f := Check(e, map[string][]results.Row{"r": rows})[0]
	if f.Verdict != NotMeasured || f.Measured != "a 202" {
		t.Errorf("got %s, measured %q; want %s, measured %q", f.Verdict, f.Measured, NotMeasured, "a 202")
	}
}

// The source's own figures: Little's law and the core count decide a claim on any host, with the
// arithmetic printed, whatever the runs measured.
func TestImpossibleAsPublished(t *testing.T) {
	e := &Experiment{Name: "x",
		Runs: []*Run{{Name: "wrk", Connections: 2000}, {Name: "single", Connections: 2000}},
		Rows: []*PublishedRow{
			{Run: "wrk", Target: "a", As: "Stack A", Values: map[string]float64{"throughput_rps": 18303, "latency_mean_ms": 186}},
			{Run: "wrk", Target: "b", Values: map[string]float64{"throughput_rps": 3970, "latency_mean_ms": 156}},
			{Run: "single", Target: "b", Values: map[string]float64{"throughput_rps": 247.32}},
			{Run: "wrk", Target: "c", Values: map[string]float64{"throughput_rps": 1000, "latency_mean_ms": 150}, Connections: 100},
		},
	}
	ratio := func(of, to string) *Claim {
		return &Claim{Quote: "q", Runs: []string{"wrk"}, Ratio: &Ratio{Metric: "throughput_rps", Of: of, To: to, Published: 2}}
	}
	cores := ratio("b", "a")
	cores.Cores = &CoresBound{Run: "wrk", Of: "b", BaseRun: "single", Base: "b", Cores: 8, Why: "8 workers"}
	cases := []struct {
		name  string
		claim *Claim
		want  string // the arithmetic; empty: possible
	}{
		{"Little's law broken", ratio("a", "b"), "“Stack A” at 18,303 req/s and 186 ms mean latency has 3,404 requests in flight, on 2,000 connections"},
		{"within Little's law", &Claim{Quote: "q", Runs: []string{"wrk"}, Tie: &Tie{Metric: "throughput_rps", Targets: []string{"b", "b2"}}}, ""},
		{"a row's own connections", ratio("c", "b"), "has 150 requests in flight, on 100 connections"},
		{"a winner rests on every row of its run", &Claim{Quote: "q", Runs: []string{"wrk"}, Winner: &Winner{Metric: "throughput_rps", Target: "b"}}, "3,404 requests in flight"},
		{"the core count", cores, "3,970 req/s is 16× 247.32 req/s on the same work, where 8 cores give at most 8× (8 workers): 2.01× beyond it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CheckClaim(e, c.claim, nil)
			impossible := len(got) > 0 && got[0].Verdict == Impossible
			switch {
			case c.want == "" && impossible:
				t.Errorf("called impossible: %s", got[0].Measured)
			case c.want != "" && (!impossible || !strings.Contains(got[0].Measured, c.want)):
				t.Errorf("got %+v, want impossible with %q", got, c.want)
			}
			if c.want != "" && Overall(got) != Impossible {
				t.Errorf("overall %q, want impossible as published", Overall(got))
			}
		})
	}
}

// A claim's one verdict: impossible first, then the least favourable run that decides it.
func TestOverall(t *testing.T) {
	f := func(vs ...Verdict) []Finding {
		var out []Finding
		for _, v := range vs {
			out = append(out, Finding{Verdict: v})
		}
		return out
	}
	cases := []struct {
		in   []Finding
		want Verdict
	}{
		{f(Holds, Holds), Holds},
		{f(Holds, Direction), Direction},
		{f(Holds, DoesNotHold), DoesNotHold},
		{f(Inconclusive, Holds), Holds},
		{f(Impossible, Holds), Impossible},
		{f(Inconclusive, LargerHost), LargerHost},
		{f(Inconclusive, NotMeasured), Inconclusive},
		{f(NotMeasured), NotMeasured},
	}
	for _, c := range cases {
		if got := Overall(c.in); got != c.want {
			t.Errorf("Overall(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUntestableClaimNeedsNoRows(t *testing.T) {
	e := &Experiment{Claims: []*Claim{{Quote: "q", Untestable: "needs a driver"}}}
	got := Check(e, nil)
	if len(got) != 1 || got[0].Verdict != Inconclusive || got[0].Why != "needs a driver" {
		t.Errorf("got %+v", got)
	}
}

// The report is pinned as text and as Markdown: its words are the interface of docs/experiments.md.
func TestWriteIsGolden(t *testing.T) {
	sf := scenarios(t)
	f, err := Load("testdata/valid.yaml", sf)
	if err != nil {
		t.Fatal(err)
	}
	rows := join(trials("a", 190, 200, 210, 205), invalid(trials("b", 98, 100, 102, 101), 2, "success ratio 0.5 below 0.99"), trials("c", 50, 60, 70, 65))
	rows[0].Warnings = "disturbed: other processes used 0.20 cores of CPUs 0-1, the generator's and the target's"
	rows[0].Disturbed = true
	for i := range rows {
		rows[i].HostCPU, rows[i].GitCommit, rows[i].Duration = "Test CPU, 2 cores", "abc123", 5e9
		rows[i].StartedAt = time.Date(2026, 11, 23, 19, 0, i, 0, time.UTC)
		rows[i].LatencyMean = time.Duration(i+1) * time.Millisecond
	}
	big := []results.Row{{Target: "a", Trial: 1, Fault: fault.Skipped, InvalidReason: "skipped: needs 4 target CPUs; this host gives targets 1"}}
	measured := Measured{"first": {"published": rows}, "second": {"big": big}}
	for _, c := range []struct {
		format Format
		file   string
	}{{Text, "testdata/report.txt"}, {Markdown, "testdata/report.md"}} {
		var b strings.Builder
		if err := Write(&b, c.format, f, sf, f.Order, measured); err != nil {
			t.Fatal(err)
		}
		goldenFile(t, c.file, b.String())
	}
}

// The first screen answers: a line a source, in the legend's words and at most AnswerWidth
// characters read, before the verdict rule, and both before any table.
func TestTheAnswersComeFirst(t *testing.T) {
	sf := scenarios(t)
	f, err := Load("testdata/valid.yaml", sf)
	if err != nil {
		t.Fatal(err)
	}
	measured := Measured{"first": {"published": join(trials("a", 190, 200, 210, 205), trials("b", 98, 100, 102, 101), trials("c", 50, 60, 70, 65))}}
	var b strings.Builder
	if err := Write(&b, Markdown, f, sf, f.Order, measured); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	answer := strings.Index(out, "- **[seeds/000](#first)** “A is 2x B”: **impossible as published** — 50,000 req/s at 50 ms is 2,500 requests in flight on 2,000 connections\n")
	legend := strings.Index(out, "## How to read a verdict")
	table := strings.Index(out, "\n|")
	if answer < 0 || legend < answer || table < legend {
		t.Errorf("answer at %d, legend at %d, first table at %d; want them in that order:\n%s", answer, legend, table, out)
	}
	for _, line := range strings.Split(out[:legend], "\n") {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		if n := len([]rune(visible(line))); n > AnswerWidth {
			t.Errorf("an answer of %d characters, over %d: %s", n, AnswerWidth, line)
		}
		for _, word := range []string{"right", "wrong", "not decided"} {
			if strings.Contains(line, "**"+word) {
				t.Errorf("an answer in words not the legend's (%q): %s", word, line)
			}
		}
	}
	if !strings.Contains(out[legend:], "on `published`: **holds** — 2.01× \\[1.86–2.14\\]") {
		t.Errorf("the experiment's answer lacks the run's verdict and its figures:\n%s", out[legend:])
	}
}

func TestHeaderSpanNamesTheLastDay(t *testing.T) {
	at := func(s string) results.Row {
		ts, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return results.Row{StartedAt: ts}
	}
	for _, c := range []struct{ from, to, want string }{
		{"2026-11-23 22:25", "2026-11-27 21:14", "Measured 2026-11-23 22:25 to 2026-11-27 21:14 UTC"},
		{"2026-11-23 19:00", "2026-11-23 21:14", "Measured 2026-11-23 19:00 to 21:14 UTC"},
	} {
		got := header(Measured{"e": {"r": {at(c.to), at(c.from)}}})
		if !strings.Contains(got, c.want) {
			t.Errorf("header %q, want %q in it", got, c.want)
		}
	}
}

// A run's wall time spans its loaded cells, warm-ups included, and the pause of a resumed run; a
// skipped cell's row, written when the run began, does not stretch it.
func TestWallTimeSpansTheLoadedCells(t *testing.T) {
	at := func(s string) time.Time {
		ts, err := time.Parse(time.DateTime, "2026-11-30 "+s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	cell := func(measuredFrom string, warmup time.Duration) results.Row {
		return results.Row{Valid: true, StartedAt: at(measuredFrom), WarmupTaken: warmup, Duration: 30 * time.Second}
	}
	skipped := results.Row{StartedAt: at("09:00:00"), Duration: 30 * time.Second, Fault: fault.Skipped,
		InvalidReason: string(fault.Skipped) + ": needs 2 target CPUs; this host gives targets 1"}
	for _, c := range []struct {
		name string
		rows []results.Row
		want time.Duration
	}{
		{"one cell", []results.Row{cell("10:00:10", 10*time.Second)}, 40 * time.Second},
		{"warm-ups of their own length", []results.Row{cell("10:04:00", 4*time.Minute), cell("10:05:00", 20*time.Second)}, 5*time.Minute + 30*time.Second},
		{"resumed an hour later", []results.Row{cell("10:00:00", 0), cell("11:00:00", 0)}, time.Hour + 30*time.Second},
		{"a skipped row aside", []results.Row{skipped, cell("10:00:00", 0)}, 30 * time.Second},
		{"nothing loaded", []results.Row{skipped}, 0},
	} {
		if got := wallTime(c.rows); got != c.want {
			t.Errorf("%s: wall time %v, want %v", c.name, got, c.want)
		}
	}
}

// A run's coarse counts: each target's first valid row's warning, the targets that read alike on
// one line, in the order the rows give them; invalid rows and other warnings aside.
func TestCoarseCountsGroupTheTargets(t *testing.T) {
	const (
		wide   = "throughput within ±3.33 rps (38%) by the count alone"
		narrow = "throughput within ±3.33 rps (17%) by the count alone"
	)
	row := func(target string, valid bool, warnings string) results.Row {
		return results.Row{Target: target, Valid: valid, Warnings: warnings}
	}
	rows := []results.Row{
		row("tomcat50", false, results.CountCoarse+narrow),
		row("ktor", true, "seconds not independent; "+results.CountCoarse+narrow),
		row("tomcat50", true, results.CountCoarse+wide),
		row("ktor", true, results.CountCoarse+wide), // its second trial: the first speaks for it
		row("fastify", true, "seconds not independent"),
		row("virtual", true, results.CountCoarse+narrow),
	}
	got := coarseCounts(rows)
	want := []coarse{{narrow, []string{"`ktor`", "`virtual`"}}, {wide, []string{"`tomcat50`"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// A target's invalid trials are told by the reason most of them share, figures aside, not by the
// first trial's.
func TestCommonestReasonTellsTheTrials(t *testing.T) {
	const (
		timeouts = "success ratio 0.9103 below 0.99 (2137 errors, 2137 timeouts)"
		oom1     = "target OOM-killed at its 1 GiB limit 31.2 s into the measured phase; success ratio 0.0150 below 0.99 (1003599 errors)"
		oom2     = "target OOM-killed at its 1 GiB limit 35.2 s into the measured phase; success ratio 0.0207 below 0.99 (877806 errors)"
	)
	for _, c := range []struct {
		name      string
		reasons   []string
		trial, n  int
		claimText string
	}{
		{"one", []string{timeouts}, 1, 1, "success ratio 0.9103 below 0.99"},
		{"all of one kind, figures aside", []string{oom1, oom2}, 1, 2, "target OOM-killed at its 1 GiB limit 31.2 s into the measured phase; success ratio 0.0150 below 0.99"},
		{"the most, not the first", []string{timeouts, oom1, oom2}, 2, 2, "target OOM-killed at its 1 GiB limit 31.2 s into the measured phase; success ratio 0.0150 below 0.99, in 2 of them"},
		{"a tie: the first", []string{oom1, timeouts}, 1, 1, "target OOM-killed at its 1 GiB limit 31.2 s into the measured phase; success ratio 0.0150 below 0.99, in 1 of them"},
	} {
		var rows []results.Row
		for i, r := range c.reasons {
			rows = append(rows, results.Row{Target: "t", Trial: i + 1, InvalidReason: r})
		}
		row, n := commonest(rows, invalidReason)
		if row.Trial != c.trial || n != c.n {
			t.Errorf("%s: trial %d, %d alike; want trial %d, %d", c.name, row.Trial, n, c.trial, c.n)
		}
		if got := alike(rows, invalidReason); got != c.claimText {
			t.Errorf("%s: %q, want %q", c.name, got, c.claimText)
		}
	}
}

// More trials are suggested only where chance left a target short (some of its trials
// decided): a target unsteady in every trial needs a longer warm-up, not more of the same.
func TestMoreTrialsOnlyWhereChanceLeftATargetShort(t *testing.T) {
	allUnsteady := func(rows []results.Row) []results.Row {
		for i := range rows {
			unsteady(rows, i+1)
		}
		return rows
	}
	six := func(target string) []results.Row { return trials(target, 190, 200, 205, 210, 215, 220) }
	for _, c := range []struct {
		name   string
		rows   []results.Row
		trials string // the suggestion in Decide; empty: none
	}{
		{"every trial of a unsteady", join(allUnsteady(six("a")), trials("b", 98, 100, 101, 102, 103, 104)), ""},
		{"a unsteady in every trial, b in half", join(allUnsteady(six("a")), unsteady(unsteady(unsteady(trials("b", 98, 100, 101, 102, 103, 104), 1), 3), 5)), "--trials 12"},
		{"b unsteady in 1 of 3", join(trials("a", 190, 200, 205, 210), unsteady(trials("b", 98, 100, 101), 2)), "--trials 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Name: "x", Claims: []*Claim{{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: 2}}}, Runs: []*Run{{Name: "r"}}}
			got := Check(e, map[string][]results.Row{"r": c.rows})[0]
			if got.Verdict != Inconclusive {
				t.Fatalf("verdict %q, want inconclusive", got.Verdict)
			}
			if c.trials == "" && strings.Contains(got.Decide, "--trials") || c.trials != "" && !strings.Contains(got.Decide, c.trials) {
				t.Errorf("decide %q, want %q", got.Decide, cmp.Or(c.trials, "no more trials"))
			}
			if !strings.Contains(got.Decide, "a longer warm-up") && c.name != "b unsteady in 1 of 3" {
				t.Errorf("decide %q: want a longer warm-up", got.Decide)
			}
		})
	}
}

// A run that warms up as the source did (not at all) is not told to warm up longer: the claim's
// runs that warm up until steady are named instead.
func TestUnsteadyAsPublishedPointsAtTheWarmedUpRun(t *testing.T) {
	rows := join(trials("a", 190, 200, 205, 210, 215, 220), trials("b", 98, 100, 101, 102, 103, 104))
	for i := range rows {
		unsteady(rows, i+1)
	}
	claim := &Claim{Quote: "q", Runs: []string{"published", "corrected"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: 2}}
	none, auto := &scenario.Warmup{}, &scenario.Warmup{Warmup: load.Warmup{Length: load.DefaultWarmupMax, Auto: true}}
	for _, c := range []struct {
		name    string
		warmups [2]*scenario.Warmup // published's, corrected's
		want    string
	}{
		{"as published, beside a warmed-up run", [2]*scenario.Warmup{none, auto}, "the claim's runs that warm up until steady (corrected) decide it; this one warms up as the source did"},
		{"both unwarmed", [2]*scenario.Warmup{none, none}, "a longer warm-up"},
		{"warmed up until steady already", [2]*scenario.Warmup{auto, auto}, "a longer warm-up"},
	} {
		e := &Experiment{Name: "x", Claims: []*Claim{claim},
			Runs: []*Run{{Name: "published", Warmup: c.warmups[0]}, {Name: "corrected", Warmup: c.warmups[1]}}}
		got := CheckClaim(e, claim, map[string][]results.Row{"published": rows})[0]
		if got.Verdict != Inconclusive || !strings.Contains(got.Decide, c.want) {
			t.Errorf("%s: %s, decide %q, want inconclusive and %q", c.name, got.Verdict, got.Decide, c.want)
		}
	}
}
