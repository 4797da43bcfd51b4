package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/results"
)

// sides plans trials of targets as Make would, from build folders under dir.
func sides(dir string, targets []string, trials int) *Plan {
	p := &Plan{Name: "s"}
	for trial := 1; trial <= trials; trial++ {
		for _, t := range targets {
			b := container.BuildSpec{Context: dir + "/targets/" + t}
			p.Cells = append(p.Cells, Cell{Scenario: "s", Target: t, Trial: trial, Build: b, Spec: container.Spec{Target: t}})
			if trial == 1 {
				p.Builds = append(p.Builds, b)
			}
		}
	}
	return p
}

// layout writes a plan's cells in order as variant:trial@round per target.
func layout(p *Plan) string {
	var s []string
	for _, c := range p.Cells {
		s = append(s, fmt.Sprintf("%s/%s:%d@%d", c.Target, c.Variant, c.Trial, c.Round))
	}
	return strings.Join(s, " ")
}

func TestPair(t *testing.T) {
	cases := []struct {
		name       string
		candidate  *Plan
		baseline   *Plan
		aa         int
		wantCells  string
		wantBuilds string
		wantErr    string
	}{
		{"two rounds", sides("cand", []string{"a"}, 2), sides("../base", []string{"a"}, 2), 0,
			"a/base:1@1 a/candidate:1@1 a/base:2@2 a/candidate:2@2",
			"iotbench/a:base iotbench/a:latest", ""},
		// A/A round j after paired round ⌈j·rounds/(aa+1)⌉: rounds 2 and 4 of 6, each the
		// baseline twice.
		{"A/A spread", sides("cand", []string{"a"}, 6), sides("../base", []string{"a"}, 6), 2,
			"a/base:1@1 a/candidate:1@1 a/base:2@2 a/candidate:2@2 a/base:3@4 a/candidate:3@4 a/base:4@5 a/candidate:4@5 a/base:5@7 a/candidate:5@7 a/base:6@8 a/candidate:6@8 a/aa1:1@3 a/aa2:1@3 a/aa1:2@6 a/aa2:2@6",
			"iotbench/a:base iotbench/a:latest", ""},
		{"missing in the baseline", sides("cand", []string{"a", "b"}, 1), sides("../base", []string{"a"}, 1), 0, "", "",
			"target b (scenario s, trial 1) is not in the baseline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Pair(c.candidate, c.baseline, c.aa)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var builds []string
			for _, b := range p.Builds {
				builds = append(builds, b.Tag())
			}
			if got := layout(p); got != c.wantCells || strings.Join(builds, " ") != c.wantBuilds || !p.Paired {
				t.Errorf("cells %s\nwant  %s\nbuilds %v, want %s; paired %v", got, c.wantCells, builds, c.wantBuilds, p.Paired)
			}
			for _, cell := range p.Cells {
				if base := cell.Variant != results.VariantCandidate; base != strings.HasPrefix(cell.Build.Context, "../base") {
					t.Errorf("%s/%s is built from %s", cell.Target, cell.Variant, cell.Build.Context)
				}
			}
		})
	}
}

func TestAddRoundFollowsEveryRound(t *testing.T) {
	p, err := Pair(sides("cand", []string{"a", "b"}, 2), sides("../base", []string{"a", "b"}, 2), 1)
	if err != nil {
		t.Fatal(err)
	}
	before := len(p.Cells)
	if n := p.AddRound(); n != 3 || p.Rounds() != 3 {
		t.Fatalf("AddRound = %d, Rounds %d; want 3", n, p.Rounds())
	}
	added := p.Cells[before:]
	if got := layout(&Plan{Cells: added}); got != "a/base:3@4 a/candidate:3@4 b/base:3@4 b/candidate:3@4" {
		t.Errorf("added %s; want both sides of both targets in round 4, after the A/A round", got)
	}
	for _, c := range added {
		if c.Variant == results.VariantBase && c.Build.Suffix != BaselineTagSuffix {
			t.Errorf("an added baseline cell builds %s", c.Build.Tag())
		}
	}
}
