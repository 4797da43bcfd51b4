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

// A trial the self-checks distrust (not steady, its calibration missed its limits, still warming
// up) is never ranked: without it, a target falls short of the trials a ranking needs, and the
// note says what would rank it. With a spare trial, the targets are ranked without it, and the
// note names it.
func TestDistrustedTrialsAreNeverRanked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spoil   func(*results.Row)
		note    string
		left    string // in the note of the ranking with a spare trial
		verdict string
	}{
		{"not steady", func(r *results.Row) {
			r.Steady, r.Warnings = false, "not steady: p99 rose 1 ms per second over the measured phase"
		}, "not ranked: a ranking needs 5 valid trials per target that the self-checks trust (fast 4); run with --trials 6 or more; a trial not steady says which figure moved: a longer warm-up, or a leak", "fast 1 not steady", "not-steady"},
		{"calibration missed", func(r *results.Row) {
			r.Calibrated, r.CalibrationWithin = true, false
		}, "not ranked: a ranking needs 5 valid trials per target that the self-checks trust (fast 4); run with --trials 6 or more; the calibration missed its limits: measure again on a quiet machine", "fast 1 calibration missed its limits", "valid"},
		{"still warming up", func(r *results.Row) {
			r.Duration, r.JITBusy, r.JITJudged = 10*time.Second, 10*time.Second, true
		}, "not ranked: a ranking needs 5 valid trials per target that the self-checks trust (fast 4); run with --trials 6 or more; a target still warming up needs a longer warm-up (warmup: auto:15m)", "fast 1 still warming up", "still-warming"},
		{"still warming up after a warm-up until steady at its maximum", func(r *results.Row) {
			r.Duration, r.JITBusy, r.JITJudged = 10*time.Second, 10*time.Second, true
			r.WarmupAuto, r.Warmup, r.WarmupTaken = true, 10*time.Minute, 10*time.Minute
		}, "not ranked: a ranking needs 5 valid trials per target that the self-checks trust (fast 4); run with --trials 6 or more; a target still warming up needs a longer warm-up (warmup: auto:15m)", "fast 1 still warming up", "still-warming"},
		// Steady by the test, yet compiling: a longer maximum would end at the same point.
		{"still warming up after a warm-up until steady that ended early", func(r *results.Row) {
			r.Duration, r.JITBusy, r.JITJudged = 10*time.Second, 10*time.Second, true
			r.WarmupAuto, r.Warmup, r.WarmupTaken = true, 10*time.Minute, 4*time.Minute
		}, "not ranked: a ranking needs 5 valid trials per target that the self-checks trust (fast 4); run with --trials 6 or more; a target still warming up after a warm-up until steady that ended before its maximum needs a fixed warm-up past its JIT's compilation (warmup: 10m)", "fast 1 still warming up", "still-warming"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := fixedRateRows(MinTrialsToRank, map[string]time.Duration{"fast": 2 * time.Millisecond, "slow": 9 * time.Millisecond})
			for i := range rows {
				rows[i].Calibrated, rows[i].CalibrationWithin = true, true
			}
			o, err := Build([]Source{{Path: "a.csv", Rows: rows}})
			if err != nil {
				t.Fatal(err)
			}
			if sc := o.Scenarios[0]; sc.RankedBy.Name == "" || sc.Targets[0].Name != "fast" {
				t.Fatalf("trusted trials: ranked by %q, first %s; want fast ranked first", sc.RankedBy.Name, sc.Targets[0].Name)
			}

			for i := range rows {
				if rows[i].Target == "fast" && rows[i].Trial == 2 {
					tc.spoil(&rows[i])
				}
			}
			o, err = Build([]Source{{Path: "a.csv", Rows: rows}})
			if err != nil {
				t.Fatal(err)
			}
			sc := o.Scenarios[0]
			if sc.RankedBy.Name != "" || len(sc.Unranked) != 1 || sc.Unranked[0] != "fast 4" {
				t.Errorf("ranked by %q, unranked %v; want fast short of trusted trials", sc.RankedBy.Name, sc.Unranked)
			}
			if notes := strings.Join(sc.Notes, "\n"); sc.RankNote != tc.note || !strings.Contains(notes, tc.note) {
				t.Errorf("rank note %q, notes:\n%s\nwant %q among them", sc.RankNote, notes, tc.note)
			}
			for _, tg := range sc.Targets {
				for _, c := range tg.Cells {
					want := "valid"
					if tg.Name == "fast" && c.Row.Trial == 2 {
						want = tc.verdict
					}
					if c.Verdict != want {
						t.Errorf("%s trial %d: verdict %s, want %s", tg.Name, c.Row.Trial, c.Verdict, want)
					}
				}
			}

			spare := append(rows, fixedRateRows(1, map[string]time.Duration{"fast": 2 * time.Millisecond, "slow": 9 * time.Millisecond})...)
			for i := len(rows); i < len(spare); i++ {
				spare[i].Trial = MinTrialsToRank + 1
				spare[i].Calibrated, spare[i].CalibrationWithin = true, true
			}
			o, err = Build([]Source{{Path: "a.csv", Rows: spare}})
			if err != nil {
				t.Fatal(err)
			}
			sc = o.Scenarios[0]
			if want := "without the valid trials the self-checks distrust (" + tc.left + ")"; sc.RankedBy.Name == "" || !strings.HasSuffix(sc.RankNote, want) {
				t.Errorf("with a spare trial: ranked by %q, rank note %q; want ranked, the note ending %q", sc.RankedBy.Name, sc.RankNote, want)
			}
		})
	}
}
