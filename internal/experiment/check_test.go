package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// trials makes one valid row per throughput of target.
func trials(target string, rps ...float64) []results.Row {
	var out []results.Row
	for i, v := range rps {
		out = append(out, results.Row{Target: target, Trial: i + 1, Valid: true, ThroughputRPS: v, Requests: 100, Successes: 100, SuccessRatio: 1})
	}
	return out
}

func invalid(rows []results.Row, trial int, reason string) []results.Row {
	rows[trial-1].Valid, rows[trial-1].InvalidReason = false, reason
	return rows
}

func join(groups ...[]results.Row) []results.Row {
	var out []results.Row
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func TestCheck(t *testing.T) {
	ratio := func(published float64) *Claim {
		return &Claim{Quote: "q", Runs: []string{"r"}, Ratio: &Ratio{Metric: "throughput_rps", Of: "a", To: "b", Published: published}}
	}
	rank := &Claim{Quote: "q", Runs: []string{"r"}, Ranking: &Ranking{Metric: "throughput_rps", Order: []string{"a", "b", "c"}}}
	win := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "throughput_rps", Target: "a"}}
	tied := &Claim{Quote: "q", Runs: []string{"r"}, Tie: &Tie{Metric: "throughput_rps", Targets: []string{"a", "b"}}}
	lowLatency := &Claim{Quote: "q", Runs: []string{"r"}, Winner: &Winner{Metric: "latency_mean_ms", Target: "a"}}
	skipped := results.Row{Target: "b", Trial: 1, InvalidReason: "skipped: needs 2 target CPUs; this host gives targets 1"}

	cases := []struct {
		name  string
		claim *Claim
		rows  []results.Row
		want  Verdict
		why   string // a part of Why
	}{
		{"ratio in the range", ratio(2), join(trials("a", 190, 200, 210), trials("b", 98, 100, 102)), Holds, "lies in the range"},
		{"ratio outside, same direction", ratio(4.6), join(trials("a", 190, 200, 210), trials("b", 98, 100, 102)), DoesNotHold, "the direction holds"},
		{"ratio reversed", ratio(2), join(trials("a", 90, 100, 110), trials("b", 190, 200, 210)), DoesNotHold, "outside"},
		{"ratio range holds 1 too", ratio(1.2), join(trials("a", 80, 100, 130), trials("b", 90, 100, 110)), Inconclusive, "cannot tell"},
		{"a claim never holds on an invalid cell", ratio(2), join(invalid(trials("a", 190, 200, 210), 2, "success ratio 0.5 below 0.99"), trials("b", 98, 100, 102)), Inconclusive, "invalid cells: a 1 of 3 (success ratio 0.5 below 0.99)"},
		{"the generator's fault is this host's", ratio(4.6), join(trials("a", 190, 200, 210), invalid(trials("b", 98, 100, 102), 1, "generator delayed requests")), Untestable, "generator delayed"},
		{"contradicted even on invalid cells", ratio(4.6), join(invalid(trials("a", 190, 200, 210), 1, "success ratio 0.9"), trials("b", 98, 100, 102)), DoesNotHold, "and on invalid cells"},
		{"a skipped target cannot be tested here", ratio(2), append(trials("a", 200), skipped), Untestable, "skipped: needs 2 target CPUs"},
		{"no rows", ratio(2), nil, NotRun, "no rows"},
		{"ranking holds, ranges apart", rank, join(trials("a", 300, 310), trials("b", 200, 210), trials("c", 100, 110)), Holds, "each is better"},
		{"ranking reversed pair", rank, join(trials("a", 300, 310), trials("b", 100, 110), trials("c", 200, 210)), DoesNotHold, "c is better than b"},
		{"ranking overlap with few trials", rank, join(trials("a", 300, 310), trials("b", 200, 305), trials("c", 100, 110)), Inconclusive, "a and b overlap"},
		{"ranking tie with enough trials", rank, join(trials("a", 300, 301, 302, 303, 304), trials("b", 300, 301, 302, 303, 304), trials("c", 1, 2, 3, 4, 5)), DoesNotHold, "a and b tie"},
		{"winner over every target of the run", win, join(trials("a", 300, 310), trials("b", 200, 210), trials("c", 100, 110)), Holds, "better than every"},
		{"winner beaten", win, join(trials("a", 300, 310), trials("b", 400, 410), trials("c", 100, 110)), DoesNotHold, "b is better"},
		{"a tie within the margin", tied, join(trials("a", 100, 102), trials("b", 97, 98)), Holds, "within ±10%"},
		{"a tie refuted", tied, join(trials("a", 100, 101, 102), trials("b", 200, 201, 202)), DoesNotHold, "differ by more than ±10%"},
		{"a tie too noisy to tell", tied, join(trials("a", 80, 120), trials("b", 100, 101)), Inconclusive, "beyond ±10%"},
		{"lower latency is better", lowLatency, join(
			[]results.Row{{Target: "a", Trial: 1, Valid: true, Successes: 9, LatencyMean: 5e6}, {Target: "a", Trial: 2, Valid: true, Successes: 9, LatencyMean: 6e6}},
			[]results.Row{{Target: "b", Trial: 1, Valid: true, Successes: 9, LatencyMean: 50e6}, {Target: "b", Trial: 2, Valid: true, Successes: 9, LatencyMean: 60e6}}), Holds, "better than every"},
		{"a latency of no answer is no value", lowLatency, join(
			[]results.Row{{Target: "a", Trial: 1, InvalidReason: "success ratio 0.0000 below 0.99", Requests: 9}},
			[]results.Row{{Target: "b", Trial: 1, Valid: true, Successes: 9, LatencyMean: 50e6}}), Inconclusive, "a has no value: trial 1: no successful answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Experiment{Claims: []*Claim{c.claim}}
			var rows map[string][]results.Row
			if c.rows != nil {
				rows = map[string][]results.Row{"r": c.rows}
			}
			got := Check(e, rows)
			if len(got) != 1 {
				t.Fatalf("%d findings, want 1", len(got))
			}
			if got[0].Verdict != c.want || !strings.Contains(got[0].Why, c.why) {
				t.Errorf("verdict %q (%s; measured %s), want %q with %q", got[0].Verdict, got[0].Why, got[0].Measured, c.want, c.why)
			}
		})
	}
}

func TestUntestableClaimNeedsNoRows(t *testing.T) {
	e := &Experiment{Claims: []*Claim{{Quote: "q", Untestable: "needs a driver"}}}
	got := Check(e, nil)
	if len(got) != 1 || got[0].Verdict != Untestable || got[0].Why != "needs a driver" {
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
	rows := join(trials("a", 190, 200, 210), invalid(trials("b", 98, 100, 102), 2, "success ratio 0.5 below 0.99"), trials("c", 50, 60, 70))
	for i := range rows {
		rows[i].HostCPU, rows[i].GitCommit, rows[i].Duration = "Test CPU, 2 cores", "abc123", 5e9
		rows[i].StartedAt = time.Date(2026, 11, 23, 19, 0, i, 0, time.UTC)
		rows[i].LatencyMean = time.Duration(i+1) * time.Millisecond
	}
	big := []results.Row{{Target: "a", Trial: 1, InvalidReason: "skipped: needs 4 target CPUs; this host gives targets 1"}}
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
