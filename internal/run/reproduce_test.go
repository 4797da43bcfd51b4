package run

import (
	"slices"
	"testing"

	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/scenario"
)

// A run needing N target CPUs runs on any host of N+1 (the page's remedy): its targets get the
// last N CPUs where the automatic split would give fewer; a scenario's own cpuset is kept.
func TestReproduceGivesARunTheCPUsItNeeds(t *testing.T) {
	sf := &scenario.File{Scenarios: map[string]*scenario.Scenario{"s": {}, "pinned": {Settings: scenario.Settings{CPUs: "1"}}}}
	rp := Reproduction{Scenarios: sf}
	cases := []struct {
		name     string
		run      experiment.Run
		allowed  []int
		wantCPUs string
	}{
		{"3 CPUs, needs 2", experiment.Run{Scenario: "s", NeedsCPUs: 2}, []int{0, 1, 2}, "1-2"},
		{"4 CPUs, needs 2", experiment.Run{Scenario: "s", NeedsCPUs: 2}, []int{0, 1, 2, 3}, "2-3"},
		{"2 CPUs, needs 2: none left for the generator", experiment.Run{Scenario: "s", NeedsCPUs: 2}, []int{0, 1}, ""},
		{"8 CPUs: the split already gives 2", experiment.Run{Scenario: "s", NeedsCPUs: 2}, []int{0, 1, 2, 3, 4, 5, 6, 7}, ""},
		{"needs nothing", experiment.Run{Scenario: "s"}, []int{0, 1, 2}, ""},
		{"the scenario's cpuset kept", experiment.Run{Scenario: "pinned", NeedsCPUs: 2}, []int{0, 1, 2}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rp.overrides(&c.run, c.allowed).CPUs; got != c.wantCPUs {
				t.Errorf("cpus %q, want %q", got, c.wantCPUs)
			}
		})
	}
}

// --runs measures the runs it names, in the experiment's order, and no other.
func TestReproduceMeasuresTheRunsNamed(t *testing.T) {
	e := &experiment.Experiment{Runs: []*experiment.Run{{Name: "published"}, {Name: "corrected"}, {Name: "other"}}}
	cases := []struct {
		runs []string
		want []string
	}{
		{nil, []string{"published", "corrected", "other"}},
		{[]string{"corrected"}, []string{"corrected"}},
		{[]string{"other", "published"}, []string{"published", "other"}},
	}
	for _, c := range cases {
		var got []string
		for _, r := range (Reproduction{Runs: c.runs}).measured(e) {
			got = append(got, r.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("runs %v: measured %v, want %v", c.runs, got, c.want)
		}
	}
}
