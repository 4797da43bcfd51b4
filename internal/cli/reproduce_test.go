package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/run"
)

const (
	testScenarios   = "../experiment/testdata/scenarios.yaml"
	testExperiments = "../experiment/testdata/valid.yaml"
)

// A run this host is too small for is recorded as skipped in seconds, without reaching the engine,
// and its claims need a larger host; run again, it is already recorded.
func TestReproduceTooSmallAHostIsSkipped(t *testing.T) {
	out := t.TempDir()
	reached := false
	reproduce := func() (string, string, error) {
		s, stdout, stderr := streams()
		err := runReproduce(context.Background(), &ReproduceOptions{
			Streams: s, File: testScenarios, Experiments: testExperiments, Names: []string{"second"}, Out: out,
			Effects: run.Effects{
				AllowedCPUs: func() ([]int, error) { return []int{0, 1}, nil },
				Connect: func(context.Context, string, string, io.Writer) (run.Engine, error) {
					reached = true
					return nil, errors.New("no engine in this test")
				},
			},
		})
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := reproduce()
	if err != nil {
		t.Fatal(err)
	}
	if reached {
		t.Error("the engine was reached for a run this host cannot measure")
	}
	if !strings.Contains(stderr, "run big: needs a larger host: needs 4 target CPUs; this host gives targets 1") {
		t.Errorf("stderr does not say why:\n%s", stderr)
	}
	rows, _, err := results.ReadFile(filepath.Join(out, "second", "big.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 || rows[0].Loaded() || !strings.HasPrefix(rows[0].InvalidReason, string(fault.Skipped)+": needs 4 target CPUs") {
		t.Errorf("rows %+v, want 3 trials of the scenario's 3 targets recorded skipped", len(rows))
	}
	if !strings.Contains(stdout, "not loaded") {
		t.Errorf("the report does not show the skipped cells:\n%s", stdout)
	}
	_, stderr, err = reproduce()
	if err != nil || !strings.Contains(stderr, "all 9 cell(s) recorded") {
		t.Errorf("run again: %v\n%s", err, stderr)
	}
}

func TestReproduceRefusesBeforeRunning(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown experiment", []string{"reproduce", "ghost"}, `no experiment "ghost"`},
		{"all and a name", []string{"reproduce", "all", "first"}, "not both"},
		{"no name", []string{"reproduce"}, "name an experiment of experiments.yaml, or all"},
		{"bad trials", []string{"reproduce", "first", "--trials", "0"}, "--trials 0: must be at least 1"},
		{"bad duration", []string{"reproduce", "first", "--duration", "10ms"}, "--duration 10ms"},
		{"unknown run", []string{"reproduce", "first", "--runs", "corrected,ghost"}, "--runs ghost: no such run in first (its runs: published, corrected)"},
		{"bad format", []string{"claims", "all", "--format", "html"}, "--format html: give table or markdown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, stderr := streams()
			args := append(c.args, "--file", testScenarios, "--experiments", testExperiments)
			if got := Main(context.Background(), args, s); got != ExitUsage {
				t.Errorf("exit %d, want %d", got, ExitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

func TestListShowsTheExperiments(t *testing.T) {
	s, stdout, _ := streams()
	if got := Main(context.Background(), []string{"list", "--file", testScenarios, "--experiments", testExperiments}, s); got != ExitOK {
		t.Fatalf("exit %d", got)
	}
	for _, want := range []string{"experiments (iotbench reproduce NAME|all):", "first", "corrected", "big", "(needs 4 target CPUs)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
}

// docs/experiments.md is `iotbench claims all --format markdown` of the committed run files: it
// must regenerate byte for byte, without Docker.
func TestExperimentsDocRegenerates(t *testing.T) {
	want, err := os.ReadFile("../../docs/experiments.md")
	if err != nil {
		t.Fatal(err)
	}
	s, stdout, stderr := streams()
	err = runClaims(&ClaimsOptions{Streams: s, File: "../../scenarios.yaml", Experiments: "../../experiments.yaml",
		Names: []string{"all"}, Results: "../../docs/experiments", Format: "markdown"})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stdout.String() != string(want) {
		t.Error("docs/experiments.md differs from what its run files give: run make experiments-doc, and commit both")
	}
}
