package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// fixedRateRows are trials valid trials of each target at p99 ms, open loop, judged steady.
func fixedRateRows(trials int, p99 map[string]time.Duration) []results.Row {
	var rows []results.Row
	for name, d := range p99 {
		for i := range trials {
			rows = append(rows, results.Row{Scenario: "io", Target: name, Trial: i + 1, Mode: "open", RequestedRPS: 100,
				Requests: 1000, Successes: 1000, Valid: true, LatencyP99: d + time.Duration(i)*time.Microsecond, Steady: true, SteadyJudged: true})
		}
	}
	return rows
}

// A trial that was not steady is marked and never ranked: with it, a target falls short of the
// trials a ranking needs.
func TestNotSteadyTrialsAreNeverRanked(t *testing.T) {
	rows := fixedRateRows(MinTrialsToRank, map[string]time.Duration{"fast": 2 * time.Millisecond, "slow": 9 * time.Millisecond})
	o, err := Build([]Source{{Path: "a.csv", Rows: rows}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := o.Scenarios[0]; sc.RankedBy.Name == "" || sc.Targets[0].Name != "fast" {
		t.Fatalf("steady trials: ranked by %q, first %s; want fast ranked first", sc.RankedBy.Name, sc.Targets[0].Name)
	}

	for i := range rows {
		if rows[i].Target == "fast" && rows[i].Trial == 2 {
			rows[i].Steady, rows[i].Warnings = false, "not steady: p99 rose 1 ms per second over the measured phase"
		}
	}
	o, err = Build([]Source{{Path: "a.csv", Rows: rows}})
	if err != nil {
		t.Fatal(err)
	}
	sc := o.Scenarios[0]
	if sc.RankedBy.Name != "" || len(sc.Unranked) != 1 || sc.Unranked[0] != "fast 4" {
		t.Errorf("ranked by %q, unranked %v; want fast short of steady trials", sc.RankedBy.Name, sc.Unranked)
	}
	if notes := strings.Join(sc.Notes, "\n"); !strings.Contains(notes, "not ranked as steady-state figures: valid trials whose measured phase was not steady (fast 1)") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, tg := range sc.Targets {
		for _, c := range tg.Cells {
			want := "valid"
			if tg.Name == "fast" && c.Row.Trial == 2 {
				want = "not-steady"
			}
			if c.Verdict != want {
				t.Errorf("%s trial %d: verdict %s, want %s", tg.Name, c.Row.Trial, c.Verdict, want)
			}
		}
	}
}
