package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// Every output shows the calibration the rows carry, once per calibration, and says loudly when
// it missed its limits; rows without one add nothing.
func TestCalibrationNotes(t *testing.T) {
	good := results.Row{Calibrated: true, CalibrationWithin: true, CalibrationP50Error: 120 * time.Microsecond, CalibrationP99Error: -800 * time.Microsecond,
		CalibrationRateRatio: 0.9991, CalibrationOwnDelayP99: 90 * time.Microsecond}
	bad := good
	bad.CalibrationWithin, bad.CalibrationP99Error = false, 4100*time.Microsecond
	got := CalibrationNotes([]results.Row{good, {}, good, bad})
	want := []string{
		"calibration of 2 row(s): against a reference server of known latency, p50 +0.120 ms and p99 -0.800 ms off the truth, 99.91% of its rate sent, own delay p99 0.090 ms: within its limits",
		"calibration of 1 row(s): against a reference server of known latency, p50 +0.120 ms and p99 +4.100 ms off the truth, 99.91% of its rate sent, own delay p99 0.090 ms: MISSED its limits: these rows' figures are suspect",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := CalibrationNotes([]results.Row{{}}); len(n) != 0 {
		t.Errorf("uncalibrated rows: %v", n)
	}

	o, err := Build([]Source{{Path: "a.csv", Rows: []results.Row{{Scenario: "io", Target: "x", Trial: 1, Mode: "open", Requests: 1, Successes: 1, Valid: true, Calibrated: true, CalibrationWithin: true, CalibrationRateRatio: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(o.Scenarios[0].Notes, "\n"); !strings.Contains(notes, "calibration of 1 row(s): ") {
		t.Errorf("the scenario's notes lack the calibration:\n%s", notes)
	}
}
