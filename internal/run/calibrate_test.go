package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/reference"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
)

// Every loaded row of a run carries the calibration measured before its first cell, in the
// file as in the outcome; the log shows it, and the one after the last cell.
func TestEveryRowCarriesTheCalibration(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine("b"), 0
	fx := effects(e, &connects)
	calls := 0
	var placed, watchedAt [][]int
	fx.Calibrate = func(ctx context.Context, rate int, cpus, watched []int) (Calibration, error) {
		calls++
		placed, watchedAt = append(placed, cpus), append(watchedAt, watched)
		return knownCalibration(ctx, rate, cpus, watched)
	}
	rs := New(fx)
	defer rs.Close()
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, Out: filepath.Join(dir, "results"), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	rows, _, err := results.ReadFile(out.Path)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
	for i, row := range rows {
		want := row.Loaded() // a cell never loaded measured nothing to calibrate
		if row.Calibrated != want || want && (!row.CalibrationWithin || row.CalibrationP50Error != 120*time.Microsecond ||
			row.CalibrationP99Error != -800*time.Microsecond || row.CalibrationRateRatio != 0.9991 || row.CalibrationOwnDelayP99 != 90*time.Microsecond) {
			t.Errorf("%s trial %d (loaded %v): calibration %v within %v, %v %v %v %v", row.Target, row.Trial, row.Loaded(), row.Calibrated, row.CalibrationWithin,
				row.CalibrationP50Error, row.CalibrationP99Error, row.CalibrationRateRatio, row.CalibrationOwnDelayP99)
		}
		if o := out.Rows[i]; o.Calibrated != row.Calibrated || o.CalibrationP99Error != row.CalibrationP99Error {
			t.Errorf("outcome's row %d differs from the file's: %v %v", i, o.Calibrated, o.CalibrationP99Error)
		}
	}
	if calls != 2 || out.CalibrationsMissed != 0 {
		t.Errorf("%d calibrations, %d missed; want one before, one after, none missed", calls, out.CalibrationsMissed)
	}
	// Placed as the targets are: on their CPUs (the plan gives the last of the two); the
	// generator's and the targets' watched for other work.
	for i, cpus := range placed {
		if !slices.Equal(cpus, []int{1}) || !slices.Equal(watchedAt[i], []int{0, 1}) {
			t.Errorf("the reference was placed on CPUs %v, want the targets' [1]; CPUs %v watched, want [0 1]", cpus, watchedAt[i])
		}
	}
	for _, line := range []string{
		"calibration before the first cell: p50 +0.120 ms, p99 -0.800 ms off the truth, 99.91% of 500 rps sent, own delay p99 0.09 ms: within limits",
		"calibration after the last cell: p50 +0.120 ms",
	} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, log.String())
		}
	}

	// Skipped, nothing is calibrated and the columns stay empty.
	calls = 0
	out, err = rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, "skip.csv"), SkipCalibration: true, Log: &log})
	if err != nil || calls != 0 {
		t.Fatalf("%v, %d calibrations", err, calls)
	}
	for _, row := range out.Rows {
		if row.Calibrated {
			t.Errorf("%s trial %d: calibrated with the calibration skipped", row.Target, row.Trial)
		}
	}
}

// A calibration that misses its limits says so loudly, and its rows are marked.
func TestAMissedCalibrationMarksTheRows(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	fx := effects(e, &connects)
	fx.Calibrate = func(_ context.Context, rate int, _, _ []int) (Calibration, error) {
		c := Calibration{Rate: rate, P50Error: 300 * time.Microsecond, P99Error: 5100 * time.Microsecond, RateRatio: 0.97}
		c.judge()
		return c, nil
	}
	rs := New(fx)
	defer rs.Close()
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, "r.csv"), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	const missed = "calibration missed its limits: p99 off by 5.100 ms (limit 5.00 ms); 97.00% of the rate sent (limit 99.5%)"
	for _, row := range out.Rows {
		if !row.Calibrated || row.CalibrationWithin || !strings.Contains(row.Warnings, missed) {
			t.Errorf("%s trial %d: calibrated %v within %v, warnings %q", row.Target, row.Trial, row.Calibrated, row.CalibrationWithin, row.Warnings)
		}
	}
	if out.CalibrationsMissed != 2 || !strings.Contains(log.String(), "CALIBRATION BEFORE THE FIRST CELL MISSED ITS LIMITS: ") {
		t.Errorf("%d missed; log:\n%s", out.CalibrationsMissed, log.String())
	}
	// The one after the last cell is in the log and the outcome, for the run's end.
	_, last, _ := strings.Cut(log.String(), "CALIBRATION AFTER THE LAST CELL MISSED ITS LIMITS: ")
	if !strings.Contains(last, "since the calibration before it are suspect (their rows written again") ||
		!strings.HasPrefix(out.LastCalibrationMissed, "p50 +0.300 ms, p99 +5.100 ms off the truth") {
		t.Errorf("after the last cell: log %q, outcome %q", last, out.LastCalibrationMissed)
	}
}

// The calibration after the last cell, when it alone misses its limits, marks the rows measured
// since the calibration before it, in the file and in the outcome, and no others.
func TestAMissedLastCalibrationMarksTheRowsSinceTheOneBefore(t *testing.T) {
	// matrix's 4 cells.
	for _, c := range []struct {
		name         string
		every, calls int
		marked       int // the last rows marked
	}{
		{"calibrated before the first cell only", 20, 2, 4},
		{"calibrated after the third cell too", 3, 3, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, file, calls, _ := calibratedRun(t, c.every, func(call int, cal *Calibration) {
				if call == c.calls { // the one after the last cell
					cal.P99Error = 5100 * time.Microsecond
				}
			})
			if calls != c.calls {
				t.Fatalf("%d calibrations, want %d", calls, c.calls)
			}
			for _, rows := range []struct {
				where string
				rows  []results.Row
			}{{"file", file}, {"outcome", out.Rows}} {
				if len(rows.rows) != 4 {
					t.Fatalf("%s: %d rows, want 4", rows.where, len(rows.rows))
				}
				for i, row := range rows.rows {
					want := i >= 4-c.marked
					if row.CalibrationWithin == want || strings.Contains(row.Warnings, "p99 off by 5.100 ms") != want {
						t.Errorf("%s row %d: within %v, warnings %q; want marked %v", rows.where, i+1, row.CalibrationWithin, row.Warnings, want)
					}
				}
			}
		})
	}
}

// A calibration that cannot be measured leaves the rows uncalibrated and the run going.
func TestAFailedCalibrationIsALine(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	fx := effects(e, &connects)
	fx.Calibrate = func(context.Context, int, []int, []int) (Calibration, error) {
		return Calibration{}, errors.New("no port")
	}
	rs := New(fx)
	defer rs.Close()
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, "r.csv"), Log: &log})
	if err != nil || len(out.Rows) != 4 || out.Rows[0].Calibrated {
		t.Fatalf("%v, %d rows", err, len(out.Rows))
	}
	if !strings.Contains(log.String(), "calibration before the first cell: not measured: no port") {
		t.Errorf("log:\n%s", log.String())
	}
}

// The real calibration measures both references at the rate asked and judges what it found
// (its figures depend on this machine: only their shape is checked).
func TestCalibrateMeasuresTheReferences(t *testing.T) {
	c, err := Calibrate(context.Background(), 500, CalibrationPhases{Duration: 500 * time.Millisecond}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate != 500 || c.RateRatio <= 0 || c.RateRatio > 1.01 || c.OwnDelayP99 <= 0 || c.Where != "in this process" {
		t.Errorf("%+v", c)
	}
	t.Log(c)
}

func TestCalibrationLimits(t *testing.T) {
	for _, c := range []struct {
		cal  Calibration
		want string
	}{
		{Calibration{P50Error: -1500 * time.Microsecond, P99Error: 5 * time.Millisecond, RateRatio: 0.995, OwnDelayP99: 5 * time.Millisecond}, ""},
		{Calibration{OwnDelayP99: 23900 * time.Microsecond, RateRatio: 1}, "own delay p99 23.9 ms (limit 5.00 ms)"},
		{Calibration{P50Error: -1501 * time.Microsecond, RateRatio: 1}, "p50 off by -1.501 ms (limit 1.50 ms)"},
		{Calibration{P99Error: -5100 * time.Microsecond, RateRatio: 0.9949}, "p99 off by -5.100 ms (limit 5.00 ms); 99.49% of the rate sent (limit 99.5%)"},
	} {
		c.cal.judge()
		if got := strings.Join(c.cal.Missed, "; "); got != c.want || c.cal.Within() != (c.want == "") {
			t.Errorf("%+v: missed %q, want %q", c.cal, got, c.want)
		}
	}
}

func TestCalibrationRate(t *testing.T) {
	for _, c := range []struct {
		rates []int
		want  int
	}{{nil, 500}, {[]int{50, 100}, 500}, {[]int{800}, 800}, {[]int{100, 20000}, 2000}} {
		p := planOfRates(c.rates)
		if got := calibrationRate(p); got != c.want {
			t.Errorf("rates %v: %d, want %d", c.rates, got, c.want)
		}
	}
}

// planOfRates is a plan of one cell a rate (0: closed loop).
func planOfRates(rates []int) *plan.Plan {
	p := &plan.Plan{}
	for _, r := range rates {
		p.Cells = append(p.Cells, plan.Cell{Load: load.Config{Model: load.Model{Rate: r}}})
	}
	return p
}

// helperEnv makes this test binary a run's helper (TestMain), as `iotbench reference` and
// `iotbench downstream` are in a run.
const helperEnv = "IOTBENCH_TEST_REFERENCE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "downstream" {
		if err := downstream.Serve(nil, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(helperEnv) == "1" {
		fs := flag.NewFlagSet("reference", flag.ExitOnError)
		var shape reference.Shape
		var cpus string
		fs.DurationVar(&shape.Delay, "delay", 0, "")
		fs.DurationVar(&shape.Freeze, "freeze", 0, "")
		fs.DurationVar(&shape.Period, "period", 0, "")
		fs.StringVar(&cpus, "cpus", "", "")
		fs.Parse(os.Args[2:])
		list, err := cpuset.Parse(cpus, cpuset.MaxCPUs)
		if cpus == "" {
			list, err = nil, nil
		}
		if err == nil {
			err = reference.Serve(shape, list, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The pinned helper serves the reference from a process of its own, pinned to the CPUs given,
// and ends when the calibration is done with it; one that cannot start leaves the calibration
// to this process, which says so.
func TestPinnedHelperServesTheReference(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(helperEnv, "1")
	place := pinnedHelper(exe, []int{0})
	url, stop, err := place.start(freezing)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	stop()
	if string(b) != reference.Body || place.where != "pinned to CPUs 0, the targets'" {
		t.Errorf("answer %q from a helper %s", b, place.where)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the helper still serves after stop")
	}

	c, err := calibrateAt(context.Background(), 500, CalibrationPhases{Duration: 200 * time.Millisecond}, pinnedHelper(filepath.Join(t.TempDir(), "missing"), []int{0}), nil)
	if err != nil || !strings.HasPrefix(c.Where, "in this process: the helper pinned to CPUs 0, the targets' failed: ") {
		t.Errorf("%v, measured %q", err, c.Where)
	}
}

// A long matrix is calibrated again between cells: each row carries the latest calibration
// measured before it was written, in the file as in the outcome, and a recalibration that
// missed its limits marks the rows after it, and counts.
func TestLongMatrixIsCalibratedAgain(t *testing.T) {
	defer func(n int) { calibrateEvery = n }(calibrateEvery)
	calibrateEvery = 2
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	fx := effects(e, &connects)
	calls := 0
	fx.Calibrate = func(ctx context.Context, rate int, cpus, watched []int) (Calibration, error) {
		calls++
		c, err := knownCalibration(ctx, rate, cpus, watched)
		c.P99Error = time.Duration(calls) * time.Millisecond
		if calls == 2 {
			c.Missed = []string{"p99 off by 2 ms (a test)"}
		}
		return c, err
	}
	rs := New(fx)
	defer rs.Close()
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, Out: filepath.Join(dir, "results"), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	rows, _, err := results.ReadFile(out.Path)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
	// Cell 1 carries the calibration before it; cell 2 the one right after it (measured before
	// its row was written); cells 3 and 4 that one too. None after the last cell but the final one.
	want := []time.Duration{1, 2, 2, 2}
	for i, row := range rows {
		if row.CalibrationP99Error != want[i]*time.Millisecond || row.CalibrationWithin != (want[i] == 1) {
			t.Errorf("row %d: calibration p99 error %v within %v; want %v ms", i+1, row.CalibrationP99Error, row.CalibrationWithin, want[i])
		}
		if o := out.Rows[i]; o.CalibrationP99Error != row.CalibrationP99Error || o.CalibrationWithin != row.CalibrationWithin {
			t.Errorf("outcome's row %d differs from the file's", i+1)
		}
	}
	if calls != 3 || out.CalibrationsMissed != 1 || !strings.Contains(log.String(), "CALIBRATION AFTER CELL 2 MISSED ITS LIMITS") {
		t.Errorf("%d calibrations, %d missed; want 3, 1 (after cell 2); log:\n%s", calls, out.CalibrationsMissed, log.String())
	}
}

// A calibration that missed its limits while other work took its CPUs is measured again, as a
// disturbed cell is, up to calibrationAttempts times; a miss without a disturbance stands, and
// a disturbance without a miss changes nothing. One after cells that missed while disturbed in
// every attempt decides nothing (the host's steal, not the instrument); before the first cell it
// stands, as nothing has checked the instrument yet.
func TestADisturbedMissIsMeasuredAgain(t *testing.T) {
	const neighbour = "disturbed: other processes used 0.40 cores of CPUs 0-1, the generator's and the reference server's"
	within := Calibration{Rate: 500, RateRatio: 1, P99Error: time.Millisecond}
	missed := Calibration{Rate: 500, RateRatio: 1, P99Error: 13 * time.Millisecond}
	disturbed := func(c Calibration) Calibration { c.Disturbed = neighbour; return c }
	heldUp := Calibration{Rate: 500, RateRatio: 1, P99Error: 26 * time.Millisecond, OwnDelayP99: 27 * time.Millisecond}
	for _, c := range []struct {
		name       string
		when       string
		attempts   []Calibration // what each attempt measures; the last repeats
		calls      int
		wantWithin bool
		undecided  bool
	}{
		{"missed while disturbed, then within", afterLast, []Calibration{disturbed(missed), within}, 2, true, false},
		{"missed while disturbed every time, after the cells", afterLast, []Calibration{disturbed(missed)}, calibrationAttempts, false, true},
		{"missed while disturbed every time, between cells", afterCell(20), []Calibration{disturbed(missed)}, calibrationAttempts, false, true},
		{"missed while disturbed every time, before the first cell", beforeFirst, []Calibration{disturbed(missed)}, calibrationAttempts, false, false},
		{"missed, undisturbed", afterLast, []Calibration{missed}, 1, false, false},
		{"within, disturbed", afterLast, []Calibration{disturbed(within)}, 1, true, false},
		{"the generator held up, then within", afterLast, []Calibration{heldUp, within}, 2, true, false},
		{"the generator held up every time", afterLast, []Calibration{heldUp}, calibrationAttempts, false, false},
		{"disturbed, then the generator held up", afterLast, []Calibration{disturbed(missed), heldUp}, calibrationAttempts, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			var log strings.Builder
			cal := &calibrator{log: &log, rate: 500, run: func(context.Context, int, []int, []int) (Calibration, error) {
				got := c.attempts[min(calls, len(c.attempts)-1)]
				calls++
				got.judge()
				return got, nil
			}}
			last := cal.measure(context.Background(), c.when)
			if calls != c.calls || last == nil || last.Within() != c.wantWithin || (last.Undecided != "") != c.undecided {
				t.Fatalf("%d measurements, last %+v; want %d, within %v, undecided %v\n%s", calls, last, c.calls, c.wantWithin, c.undecided, log.String())
			}
			// What counts as missed, and stamps the rows after it: a decided miss only.
			if decidedMiss := !c.wantWithin && !c.undecided; (cal.missed == 1) != decidedMiss || (cal.latest == last) != (decidedMiss && c.when != afterLast) {
				t.Errorf("%d missed, latest %p (this one %p); want a decided miss %v counted and kept", cal.missed, cal.latest, last, decidedMiss)
			}
			if again := strings.Count(log.String(), "measured again"); again != c.calls-1 {
				t.Errorf("%d lines say it was measured again, want %d:\n%s", again, c.calls-1, log.String())
			}
			why := "p99 off by 13.000 ms (limit 5.00 ms)) while " + neighbour
			if c.attempts[0].Disturbed == "" {
				why = "p99 off by 26.000 ms (limit 5.00 ms); own delay p99 27.0 ms (limit 5.00 ms)) while the generator was held up (own delay p99 27.0 ms)"
			}
			if c.calls > 1 && !strings.Contains(log.String(), "calibration "+c.when+" missed its limits ("+why+": measured again") {
				t.Errorf("log:\n%s", log.String())
			}
			switch {
			case c.undecided:
				if want := "calibration " + c.when + ": not decided: every attempt missed its limits while " + neighbour + " (p99 off by 13.000 ms (limit 5.00 ms)): the rows keep the calibration before it"; !strings.Contains(log.String(), want) || strings.Contains(log.String(), "MISSED ITS LIMITS") {
					t.Errorf("log, want %q and no miss:\n%s", want, log.String())
				}
			case !c.wantWithin && last.Disturbed != "":
				if !strings.Contains(log.String(), "MISSED ITS LIMITS: p50 +0.000 ms, p99 +13.000 ms off the truth, 100.00% of 500 rps sent, own delay p99 0.00 ms, "+neighbour) {
					t.Errorf("the miss kept does not name its disturbance:\n%s", log.String())
				}
			}
		})
	}
}

// A calibration after cells that the host disturbed in every attempt leaves the rows the
// calibration before it: none is marked, nothing counts as missed, and the run's end is told
// when it was the one after the last cell.
func TestACalibrationTheHostDisturbedAfterCellsMarksNoRow(t *testing.T) {
	const steal = "disturbed: the hypervisor took 0.83 cores of CPUs 0-1 (steal)"
	// matrix's 4 cells; calls counts every attempt.
	for _, c := range []struct {
		name      string
		every     int
		disturbed func(call int) bool
		calls     int
		logged    string
		last      bool // the run's end is told
	}{
		{"after the last cell", 20, func(call int) bool { return call > 1 }, 1 + calibrationAttempts, "calibration after the last cell: not decided", true},
		{"after the third cell", 3, func(call int) bool { return call > 1 && call <= 1+calibrationAttempts }, 2 + calibrationAttempts, "calibration after cell 3: not decided", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, file, calls, log := calibratedRun(t, c.every, func(call int, cal *Calibration) {
				if c.disturbed(call) {
					cal.P99Error, cal.Disturbed = 31*time.Millisecond, steal
				}
			})
			if calls != c.calls {
				t.Fatalf("%d calibrations, want %d", calls, c.calls)
			}
			for _, rows := range [][]results.Row{file, out.Rows} {
				for i, row := range rows {
					if !row.Calibrated || !row.CalibrationWithin || row.CalibrationP99Error != time.Millisecond || strings.Contains(row.Warnings, "calibration") {
						t.Errorf("row %d: calibrated %v, within %v, p99 error %s, warnings %q; want the calibration before it", i+1, row.Calibrated, row.CalibrationWithin, row.CalibrationP99Error, row.Warnings)
					}
				}
			}
			if out.CalibrationsMissed != 0 || out.LastCalibrationMissed != "" || !strings.Contains(log, c.logged) {
				t.Errorf("%d missed, last missed %q; want none, and %q in the log:\n%s", out.CalibrationsMissed, out.LastCalibrationMissed, c.logged, log)
			}
			if told := strings.Contains(out.LastCalibrationUndecided, "every attempt missed its limits while "+steal); told != c.last {
				t.Errorf("the run's end told %q; want told %v", out.LastCalibrationUndecided, c.last)
			}
		})
	}
}

// The real calibration names the work of another process on the CPUs it watches.
func TestTheCalibrationSeesANeighbour(t *testing.T) {
	cpus := spinBeside(t)
	c, err := calibrateAt(context.Background(), 500, CalibrationPhases{Duration: 500 * time.Millisecond}, inProcess, cpus)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Disturbed, "disturbed: other processes used ") || !strings.Contains(c.String(), c.Disturbed) {
		t.Errorf("a shell spinning beside the calibration: disturbed %q, %s", c.Disturbed, c)
	}
}

// A calibration starts once its CPUs are quiet over one look, and measures all the same when
// they never were within the wait, saying which it was.
func TestACalibrationWaitsForItsCPUsToBeQuiet(t *testing.T) {
	const busy = "disturbed: other processes used 0.90 cores of CPUs 0-1, the generator's and the reference server's"
	for _, c := range []struct {
		name          string
		looks         []string // what each look sees; the last repeats
		wantLooks     int
		wantDisturbed string
		wantLine      string // in the log; "" none
	}{
		{"quiet at once", []string{""}, 1, "", ""},
		{"quiet at the third look", []string{busy, busy, ""}, 3, "", "calibration after the last cell: waited 1.5s for other work on its CPUs to stop"},
		{"never quiet", []string{busy}, int(quietWait / quietLook), busy, "calibration after the last cell: its CPUs were not quiet within 10s (" + busy + "): measured all the same"},
	} {
		t.Run(c.name, func(t *testing.T) {
			looks, measured := 0, 0
			look := func(context.Context) string {
				d := c.looks[min(looks, len(c.looks)-1)]
				looks++
				return d
			}
			var log strings.Builder
			cal := &calibrator{log: &log, rate: 500,
				settle: func(ctx context.Context) (time.Duration, string) {
					waited, d := settle(ctx, look, quietWait)
					if d != c.wantDisturbed {
						t.Errorf("settle gave up on %q, want %q", d, c.wantDisturbed)
					}
					return waited, d
				},
				run: func(context.Context, int, []int, []int) (Calibration, error) {
					if looks != c.wantLooks {
						t.Errorf("measured after %d looks, want %d", looks, c.wantLooks)
					}
					measured++
					return Calibration{Rate: 500, RateRatio: 1}, nil
				}}
			if last := cal.measure(context.Background(), afterLast); last == nil || !last.Within() || measured != 1 {
				t.Fatalf("measured %d times: %+v", measured, last)
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if c.wantLine == "" && len(lines) != 1 || c.wantLine != "" && (len(lines) != 2 || lines[0] != c.wantLine) {
				t.Errorf("log:\n%s\nwant its first line %q", log.String(), c.wantLine)
			}
		})
	}
}

// spinBeside starts a shell spinning on this process's CPUs until the test ends, and returns
// them; it skips the test where their CPU time cannot be read.
func spinBeside(t *testing.T) []int {
	t.Helper()
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resources.ThisHost.Watch(cpus); err != nil {
		t.Skipf("this machine's CPU time cannot be read: %v", err)
	}
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spin.Process.Kill(); spin.Wait() })
	return cpus
}

// A look at the CPUs sees a process spinning on them, and stops when the run is cancelled.
func TestALookSeesASpinningProcess(t *testing.T) {
	cpus := spinBeside(t)
	waited, d := quietOn(cpus, 2*quietLook)(context.Background())
	if !strings.HasPrefix(d, "disturbed: other processes used ") || waited != 2*quietLook {
		t.Errorf("a shell spinning: waited %s, %q; want two looks and its disturbance", waited, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waited, _ := quietOn(cpus, quietWait)(ctx); waited != quietLook {
		t.Errorf("cancelled, it looked for %s, want one look", waited)
	}
}

// calibratedRun runs matrix's 4 cells, calibrated before the first, after every every-th and
// after the last, each calibration (each attempt: call, from 1) within its limits but as set
// changes it; it returns the outcome, the file's rows, the calibrations run and the log.
func calibratedRun(t *testing.T, every int, set func(call int, cal *Calibration)) (*Outcome, []results.Row, int, string) {
	t.Helper()
	defer func(n int) { calibrateEvery = n }(calibrateEvery)
	calibrateEvery = every
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	fx := effects(e, &connects)
	calls := 0
	fx.Calibrate = func(_ context.Context, rate int, _, _ []int) (Calibration, error) {
		calls++
		cal := Calibration{Rate: rate, P50Error: 300 * time.Microsecond, P99Error: time.Millisecond, RateRatio: 1}
		set(calls, &cal)
		cal.judge()
		return cal, nil
	}
	rs := New(fx)
	defer rs.Close()
	path := filepath.Join(dir, "r.csv")
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: path, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	file, _, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out, file, calls, log.String()
}

// A run's downstream service is a helper process of this binary, on the generator's CPUs; one
// that cannot start leaves the service to this process, and the run says so.
func TestTheDownstreamServiceRunsInAHelper(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(helperEnv, "1")
	for _, c := range []struct {
		exe   func() (string, error)
		where string
	}{
		{func() (string, error) { return exe, nil }, "a helper process on CPUs 0, the generator's, at the lowest priority"},
		{func() (string, error) { return "", errors.New("no binary") }, "in this process: a helper process on CPUs 0, the generator's, at the lowest priority failed: no binary"},
	} {
		rs := &Runs{Effects: Effects{Executable: c.exe}}
		s, where, err := rs.downstreamHelper([]int{0})()
		if err != nil {
			t.Fatal(err)
		}
		_, helper := s.(*downstream.Helper)
		resp, err := http.Get(s.URL())
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || where != c.where || helper != (c.where[0] == 'a') {
			t.Errorf("where %q, a helper %v, call: %v; want %q", where, helper, err, c.where)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}
