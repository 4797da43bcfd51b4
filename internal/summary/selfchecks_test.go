package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

func TestSelfChecksAtAGlance(t *testing.T) {
	row := func(trial int) results.Row {
		return results.Row{Scenario: "s", Target: "t", Trial: trial, Valid: true, Requests: 100, Successes: 100, ThroughputRPS: 100,
			SteadyJudged: true, Steady: true, ArrivalJudged: true, ArrivalAsIntended: true, SecondsJudged: true, SecondsIndependent: true,
			Calibrated: true, CalibrationWithin: true, CalibrationP50Error: 120 * time.Microsecond, CalibrationP99Error: -800 * time.Microsecond, CalibrationRateRatio: 0.999}
	}
	rows := []results.Row{row(1), row(2), row(3), row(4), row(5)}
	got := ChecksText(SelfChecks(rows))
	if want := "self-checks: calibration ✓ within limits (p50 +0.12 ms, p99 -0.80 ms off a known server, 99.9% of its rate) · steady ✓ 5 of 5 cells steady · arrivals ✓ 5 of 5 open-loop cells sent as intended · seconds ✓ 5 of 5 cells' seconds independent"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	rows[1].Steady = false
	rows[2].ArrivalAsIntended = false
	rows[3].CalibrationWithin, rows[3].CalibrationP99Error = false, 7*time.Millisecond
	for i := range rows {
		rows[i].SecondsJudged = false
	}
	checks := SelfChecks(rows)
	for i, want := range []string{
		"calibration ✗ MISSED its limits for 1 of 5 rows; worst (p50 +0.12 ms, p99 +7.00 ms",
		"steady ✗ 4 of 5 cells steady; not steady: t trial 2",
		"arrivals ✗ 4 of 5 open-loop cells sent as intended; not as intended: t trial 3",
		"seconds – not judged",
	} {
		if !strings.HasPrefix(checks[i].String(), want) {
			t.Errorf("check %d: %q; want it to start %q", i, checks[i], want)
		}
	}

	// A find-max step that failed the SLO on the target's account is not held against the
	// generator's arrivals; one the generator could not send on time is.
	rows = []results.Row{row(1), row(2), row(3), row(4)}
	for i := range rows {
		rows[i].Search = 1
	}
	rows[1].ArrivalAsIntended = false
	rows[1].SetFault(fault.SLONotMet, "slo not met: p99 2.3s ≥ 100ms")
	rows[3].ArrivalAsIntended = false
	rows[3].SetFault(fault.SLONotMet, "slo not met: p99 150ms ≥ 100ms")
	if got, want := SelfChecks(rows)[2].String(), "arrivals ✓ 2 of 2 open-loop cells sent as intended; 2 steps that failed the SLO not judged (the target's: sends bunch up behind a target past its limit)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	rows[0].ArrivalAsIntended = false
	rows[0].SetFault(fault.GeneratorLimited, "generator-limited: its own p99 delay 12ms above 10ms")
	if got, want := SelfChecks(rows)[2].String(), "arrivals ✗ 1 of 2 open-loop cells sent as intended; not as intended: t trial 1; 2 steps that failed the SLO not judged"; !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s…", got, want)
	}

	// A step measured again because other work disturbed it decides nothing, in any check: its
	// repeat is judged in its place.
	rows = []results.Row{row(1), row(2), row(3)}
	for i := range rows {
		rows[i].Search = 1
	}
	rows[1].ArrivalAsIntended, rows[1].Steady = false, false
	rows[1].SetFault(fault.Repeated, "repeated: failed while disturbed (see warnings)")
	checks = SelfChecks(rows)
	for i, want := range []string{
		"steady ✓ 2 of 2 cells steady; 1 step measured again after a disturbance not judged (its repeat is)",
		"arrivals ✓ 2 of 2 open-loop cells sent as intended; 1 step measured again after a disturbance not judged (its repeat is)",
	} {
		if got := checks[i+1].String(); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	rows[2].ArrivalAsIntended = false
	rows[2].SetFault(fault.Repeated, "repeated: failed while disturbed (see warnings)")
	rows[0].ArrivalAsIntended = false
	if got, want := SelfChecks(rows)[2].String(), "arrivals ✗ 0 of 1 open-loop cells sent as intended; not as intended: t trial 1; 2 steps measured again after a disturbance not judged (their repeats are)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// A file older than the checks: nothing to show.
	old := results.Row{Scenario: "s", Target: "t", Trial: 1, Valid: true, Requests: 1, Successes: 1}
	if c := SelfChecks([]results.Row{old}); c != nil {
		t.Errorf("an older file's checks: %v; want none", c)
	}
}
