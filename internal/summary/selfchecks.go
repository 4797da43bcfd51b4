package summary

import (
	"fmt"
	"strings"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

// Check is one of the instrument's self-checks over a scenario's rows, at a glance: its name,
// whether every row it judged passed, and what it found in a few words (docs/selfcheck.md).
type Check struct {
	Name string `json:"name"`
	// Judged is false when no row was judged (a check older than the file, or skipped).
	Judged bool   `json:"judged"`
	OK     bool   `json:"ok"`
	Text   string `json:"text"`
}

// Mark is the check's sign: ✓ passed, ✗ failed, – not judged.
func (c Check) Mark() string {
	switch {
	case !c.Judged:
		return "–"
	case c.OK:
		return "✓"
	}
	return "✗"
}

// String is the check in one phrase: "steady ✓ 12 of 12 cells".
func (c Check) String() string { return c.Name + " " + c.Mark() + " " + c.Text }

// SelfChecks are the self-checks of rows: the calibration, the steady state, the arrivals and
// the independence of the seconds; none when no row was judged by any (files older than the
// checks).
func SelfChecks(rows []results.Row) []Check {
	var loaded []results.Row
	for _, r := range rows {
		if r.Loaded() && r.Stage == 0 {
			loaded = append(loaded, r)
		}
	}
	checks := []Check{
		calibrationCheck(loaded),
		rowCheck("steady", loaded, "cells steady", "not steady",
			func(r results.Row) (bool, bool) { return r.SteadyJudged, r.Steady }),
		arrivalsCheck(loaded),
		rowCheck("seconds", loaded, "cells' seconds independent", "correlated",
			func(r results.Row) (bool, bool) { return r.SecondsJudged, r.SecondsIndependent }),
	}
	for _, c := range checks {
		if c.Judged {
			return checks
		}
	}
	return nil
}

// arrivalsCheck judges the arrivals of the rows but a find-max step's that failed the SLO on the
// target's account (fault.SLONotMet, by the rule of docs/results.md): a target past its limit
// holds the generator's connections and the sends bunch up behind them, so that step's arrivals
// say nothing of the generator. The text counts them.
func arrivalsCheck(rows []results.Row) Check {
	targetFailed := func(r results.Row) bool { return r.ArrivalJudged && r.Fault == fault.SLONotMet }
	c := rowCheck("arrivals", rows, "open-loop cells sent as intended", "not as intended",
		func(r results.Row) (bool, bool) { return r.ArrivalJudged && !targetFailed(r), r.ArrivalAsIntended })
	n := 0
	for _, r := range rows {
		if targetFailed(r) {
			n++
		}
	}
	if n > 0 {
		c.Text += fmt.Sprintf("; %s that failed the SLO not judged (the target's: sends bunch up behind a target past its limit)", steps(n))
	}
	return c
}

// steps is n find-max steps in words: "1 step", "9 steps".
func steps(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}

// calibrationCheck is the worst calibration the rows carry.
func calibrationCheck(rows []results.Row) Check {
	c := Check{Name: "calibration", Text: "not measured"}
	var worst *results.Row
	calibrated, missed := 0, 0
	for i, r := range rows {
		if !r.Calibrated {
			continue
		}
		calibrated++
		if !r.CalibrationWithin {
			missed++
		}
		if worst == nil || (worst.CalibrationWithin && !r.CalibrationWithin) ||
			(worst.CalibrationWithin == r.CalibrationWithin && abs(r.CalibrationP99Error) > abs(worst.CalibrationP99Error)) {
			worst = &rows[i]
		}
	}
	if worst == nil {
		return c
	}
	c.Judged, c.OK = true, worst.CalibrationWithin
	verdict := "within limits"
	if !c.OK {
		verdict = fmt.Sprintf("MISSED its limits for %d of %d rows; worst", missed, calibrated)
	}
	c.Text = fmt.Sprintf("%s (p50 %+.2f ms, p99 %+.2f ms off a known server, %.1f%% of its rate)", verdict,
		ms(worst.CalibrationP50Error), ms(worst.CalibrationP99Error), 100*worst.CalibrationRateRatio)
	return c
}

func abs[T ~int64](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// rowCheck counts the rows a check judged and passed, naming up to three that failed. A find-max
// step measured again because other work disturbed its CPUs (fault.Repeated) decides nothing:
// its repeat is judged in its place, and the text counts it.
func rowCheck(name string, rows []results.Row, passed, failed string, of func(results.Row) (judged, ok bool)) Check {
	c := Check{Name: name, Text: "not judged"}
	n, ok, repeated := 0, 0, 0
	var bad []string
	for _, r := range rows {
		judged, pass := of(r)
		if !judged {
			continue
		}
		if r.Fault == fault.Repeated {
			repeated++
			continue
		}
		n++
		if pass {
			ok++
		} else if len(bad) < 3 {
			bad = append(bad, fmt.Sprintf("%s trial %d", nameOf(r), r.Trial))
		}
	}
	if n > 0 {
		c.Judged, c.OK = true, ok == n
		c.Text = fmt.Sprintf("%d of %d %s", ok, n, passed)
	}
	if len(bad) > 0 {
		more := ""
		if n-ok > len(bad) {
			more = ", …"
		}
		c.Text += fmt.Sprintf("; %s: %s%s", failed, strings.Join(bad, ", "), more)
	}
	if repeated > 0 {
		whose := "their repeats are"
		if repeated == 1 {
			whose = "its repeat is"
		}
		c.Text += fmt.Sprintf("; %s measured again after a disturbance not judged (%s)", steps(repeated), whose)
	}
	return c
}

// ChecksText is the self-checks in one line, as every format writes them: "self-checks:
// calibration ✓ within limits (…) · steady ✓ 12 of 12 cells steady · …".
func ChecksText(checks []Check) string {
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = c.String()
	}
	return "self-checks: " + strings.Join(parts, " · ")
}
