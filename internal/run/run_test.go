package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/container/containertest"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/summary"
)

// fakeEngine runs every target as an in-process server answering {"ok":true}, but the targets
// named in broken, which answer 500 to every request but their health check.
func fakeEngine(broken ...string) *containertest.Engine {
	return &containertest.Engine{Handler: func(s container.Spec) http.Handler {
		fails := slices.Contains(broken, s.Target)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fails && r.URL.Path != "/health" {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		})
	}}
}

// matrix writes a scenario matrix of two targets into dir: short cells at a low rate.
func matrix(t *testing.T, dir string) string {
	t.Helper()
	ctx := filepath.Join(dir, "t")
	os.MkdirAll(ctx, 0o755)
	os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	path := filepath.Join(dir, "scenarios.yaml")
	err := os.WriteFile(path, []byte(`default_scenario: s
targets:
  a: {build: t, port: 9001}
  b: {build: t, port: 9002}
scenarios:
  s:
    request: {method: GET, path: /x}
    check: {contains: ['"ok"']}
    load: {rate: 50, expected_latency: 50ms}
    warmup: 0s
    duration: 1s
    trials: 2
    targets: [a, b]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// effects are a run's effects on a fake engine and a two-CPU machine; connects counts the engine's
// connections.
func effects(e *containertest.Engine, connects *int) Effects {
	return Effects{
		Connect: func(context.Context, string, string, io.Writer) (Engine, error) {
			*connects++
			return e, nil
		},
		AllowedCPUs: func() ([]int, error) { return []int{0, 1}, nil },
		Pin:         func([]int) error { return nil },
		Executable:  func() (string, error) { return "", errors.New("no shards in these tests") },
		Meta:        func() bench.Meta { return bench.Meta{Version: "test"} },
		Now:         func() time.Time { return time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC) },
		Calibrate:   knownCalibration,
	}
}

// knownCalibration stands for the calibration's measurement (calibrate_test.go measures it):
// figures within every limit, the same at every call.
func knownCalibration(_ context.Context, rate int, _, _ []int) (Calibration, error) {
	return Calibration{Rate: rate, P50Error: 120 * time.Microsecond, P99Error: -800 * time.Microsecond, RateRatio: 0.9991, OwnDelayP99: 90 * time.Microsecond}, nil
}

// TestExecuteLeavesEveryFile: a scenario run on a fake engine records a row a cell, keeps each
// measured phase's timeline and histograms beside its results, removes every target it started,
// and its outcome says whether every cell was valid.
func TestExecuteLeavesEveryFile(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine("b"), 0
	rs := New(effects(e, &connects))
	defer rs.Close()
	var log strings.Builder
	seed := int64(7)
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, Out: filepath.Join(dir, "results"), Seed: &seed, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if out.Path != filepath.Join(dir, "results", "20261125T170000Z.csv") {
		t.Errorf("results in %s, want a file named after the run's start", out.Path)
	}
	if started, removed := e.Counts(); len(out.Rows) != 4 || connects != 1 || started != 4 || removed != 4 {
		t.Fatalf("%d rows, %d connections, %d started, %d removed; want 4 cells on one engine, every target removed", len(out.Rows), connects, started, removed)
	}
	// a's validity depends on this machine's load (the generator's own delay); what it served
	// does not. b fails its check before load and is never loaded.
	for _, row := range out.Rows {
		ok := row.Target == "a" && row.Loaded() && row.Errors == 0 && row.Successes > 0 ||
			row.Target == "b" && !row.Loaded() && strings.HasPrefix(row.InvalidReason, string(fault.VerifyFailed))
		if !ok || row.Seed != seed {
			t.Errorf("%s trial %d: loaded %v, %d successes, %d errors (%s), seed %d", row.Target, row.Trial, row.Loaded(), row.Successes, row.Errors, row.InvalidReason, row.Seed)
		}
	}
	if !errors.Is(out.Err(), exitcode.ErrInvalidCells) {
		t.Errorf("outcome's status %v, want invalid cells (b answers 500)", out.Err())
	}
	rows, _, err := results.ReadFile(out.Path)
	if err != nil || len(rows) != 4 {
		t.Fatalf("the file holds %d rows (%v)", len(rows), err)
	}
	hlogs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(out.Path, ".csv")+".timeline", "*.hlog"))
	if _, err := os.Stat(filepath.Join(strings.TrimSuffix(out.Path, ".csv")+".timeline", "timeline.csv")); err != nil || len(hlogs) == 0 {
		t.Errorf("timeline: %v; %d histogram files", err, len(hlogs))
	}
	// The report reads what the run left: histograms and rows agree.
	if _, err := summary.Load(out.Path); err != nil {
		t.Errorf("the report cannot read the run's files: %v", err)
	}

	// Resumed, the same file is continued: nothing is measured again.
	out2, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, Resume: out.Path, Log: &log})
	if started, _ := e.Counts(); err != nil || len(out2.Rows) != 4 || started != 4 {
		t.Errorf("resumed: %v, %d rows, %d started", err, len(out2.Rows), started)
	}
	// With another seed, it is refused, naming the seed to drop.
	other := int64(8)
	if _, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, Resume: out.Path, Seed: &other}); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "drop --seed") {
		t.Errorf("resumed with another seed: %v", err)
	}
}

// TestASecondRunPlansOnTheCPUsOfTheFirst: a run pins this process to its generator's CPUs, as the
// kernel then reports them; the next run of the same Runs (reproduce runs many) must still plan
// on the CPUs the process had before, not find one CPU and refuse.
func TestASecondRunPlansOnTheCPUsOfTheFirst(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine("b"), 0
	fx := effects(e, &connects)
	affinity := []int{0, 1}
	var pinned [][]int
	fx.AllowedCPUs = func() ([]int, error) { return slices.Clone(affinity), nil }
	fx.Pin = func(cpus []int) error {
		affinity, pinned = slices.Clone(cpus), append(pinned, slices.Clone(cpus))
		return nil
	}
	rs := New(fx)
	defer rs.Close()
	for i := range 2 {
		var log strings.Builder
		out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, fmt.Sprintf("run%d.csv", i)), Log: &log})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, log.String())
		}
		if len(out.Rows) != 4 {
			t.Errorf("run %d: %d rows, want 4", i+1, len(out.Rows))
		}
	}
	if len(pinned) != 2 || !slices.Equal(pinned[1], pinned[0]) || !slices.Equal(pinned[0], []int{0}) {
		t.Errorf("the runs pinned the generator to %v, want CPU 0 both times", pinned)
	}
}

// TestExecuteAMixLeavesEveryRequestsFiles: a mix's request rows have their timeline and
// histograms beside the cell's, which the report reads back whole.
func TestExecuteAMixLeavesEveryRequestsFiles(t *testing.T) {
	dir := t.TempDir()
	ctx := filepath.Join(dir, "t")
	os.MkdirAll(ctx, 0o755)
	os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	err := os.WriteFile(file, []byte(`default_scenario: s
targets:
  a: {build: t, port: 9001}
scenarios:
  s:
    requests:
      - {name: x, path: /x, weight: 3, check: {contains: ['"ok"']}}
      - {name: y, path: /y, weight: 1, check: {contains: ['"ok"']}}
      - {name: probe, path: /health, rate: 10, check: {contains: ['"ok"']}}
    load: {rate: 40, expected_latency: 50ms}
    warmup: 0s
    duration: 1s
    trials: 1
    targets: [a]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	connects := 0
	rs := New(effects(fakeEngine(), &connects))
	defer rs.Close()
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: file}, Out: filepath.Join(dir, "results"), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(out.Rows) != 4 {
		t.Fatalf("%d rows, want the cell's and 3 requests'", len(out.Rows))
	}
	src, err := summary.Load(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range out.Rows {
		k := summary.KeyOf(row)
		if _, ok := src.Histograms[k]; !ok || len(src.Timelines[k].Measure) == 0 {
			t.Errorf("%s: histogram read %v, %d seconds of timeline", row.Scenario, ok, len(src.Timelines[k].Measure))
		}
	}
	if len(src.Notes) > 0 {
		t.Errorf("the report's notes: %q", src.Notes)
	}
}

// TestExecuteTooSmallAHost: a run that needs more target CPUs than the host gives reaches no
// engine; its cells are recorded skipped, with the run's settings.
func TestExecuteTooSmallAHost(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	rs := New(effects(e, &connects))
	var log strings.Builder
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, "x", "big.csv"), NeedsCPUs: 4, Name: "big", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if connects != 0 || len(out.Rows) != 4 || out.Skipped == "" {
		t.Fatalf("%d connections, %d rows, skipped %q", connects, len(out.Rows), out.Skipped)
	}
	for _, row := range out.Rows {
		if row.Loaded() || !strings.HasPrefix(row.InvalidReason, string(fault.Skipped)+": needs 4 target CPUs; this host gives targets 1") || row.Seed == 0 || row.Duration != time.Second {
			t.Errorf("%+v", row)
		}
	}
	if !strings.Contains(log.String(), "  run big: needs a larger host: needs 4 target CPUs") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestReproduceLeavesTimelineAndHistograms: an experiment's runs are runs like any other: each
// leaves its timeline and histograms beside its file, and a second reproduction measures nothing.
func TestReproduceLeavesTimelineAndHistograms(t *testing.T) {
	dir := t.TempDir()
	sfPath := matrix(t, dir)
	efPath := filepath.Join(dir, "experiments.yaml")
	os.WriteFile(efPath, []byte(`experiments:
  first:
    title: First
    source: seeds/000
    runs:
      - {name: published, scenario: s, note: as published, trials: 1}
    claims:
      - {quote: "A wins", runs: [published], winner: {metric: throughput_rps, target: a}}
`), 0o644)
	sf, err := scenario.Load(sfPath)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := experiment.Load(efPath, sf)
	if err != nil {
		t.Fatal(err)
	}
	e, connects := fakeEngine(), 0
	rs := New(effects(e, &connects))
	defer rs.Close()
	done := 0
	rp := Reproduction{Scenarios: sf, ScenariosPath: sfPath, Experiments: ef, Names: []string{"first"}, Out: filepath.Join(dir, "out"),
		Done: func(string) error { done++; return nil }}
	if err := rs.Reproduce(context.Background(), rp); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "out", "first", "published")
	hlogs, _ := filepath.Glob(filepath.Join(base+".timeline", "*.hlog"))
	if _, err := os.Stat(filepath.Join(base+".timeline", "timeline.csv")); err != nil || len(hlogs) != 2 {
		t.Errorf("timeline: %v; %d histogram files, want one a cell", err, len(hlogs))
	}
	err = rs.Reproduce(context.Background(), rp)
	if started, _ := e.Counts(); err != nil || started != 2 || done != 2 {
		t.Errorf("again: %v; %d targets started in all, %d experiments reported", err, started, done)
	}
}

// TestReproductionFindMax: an experiment's find_max takes run --find-max's defaults where it is
// silent, and a reproduction's duration shortens its steps as it shortens every cell.
func TestReproductionFindMax(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        experiment.FindMax
		duration time.Duration
		want     string
	}{
		{"defaults", experiment.FindMax{}, 0, "slo p99<100ms,errors<0.1%, step 10s, warm-up 5s, resolution 10%"},
		{"as written", experiment.FindMax{SLO: "p99<50ms", Step: 4 * time.Second, Resolution: "200"}, 0, "slo p99<50ms, step 4s, warm-up 2s, resolution 200 rps"},
		{"shortened", experiment.FindMax{Step: 20 * time.Second}, 2 * time.Second, "slo p99<100ms,errors<0.1%, step 2s, warm-up 1s, resolution 10%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Reproduction{Duration: tc.duration}.findMax(&tc.m)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("slo %s, step %s, warm-up %s, resolution %s", m.SLO, m.Step, m.StepWarmup, m.Search.Resolution)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
