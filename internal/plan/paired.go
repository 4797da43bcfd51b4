package plan

import (
	"fmt"
	"slices"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/results"
)

// BaselineTagSuffix tells a baseline checkout's images from the candidate's: both are built in
// one run, from folders of the same names.
const BaselineTagSuffix = "base"

// Pair makes a paired plan of a candidate plan and a baseline plan of the same scenario: every
// round measures the baseline and the candidate of each target back to back (bench shuffles
// which goes first), so that what drifts between rounds hits both alike. aa adds rounds that
// measure the baseline against itself (an A/A control: the noise floor of this machine and run),
// spread evenly among the others. Every target of the candidate must be in the baseline.
func Pair(candidate, baseline *Plan, aa int) (*Plan, error) {
	type key struct {
		scenario, target string
		trial            int
	}
	base := map[key]Cell{}
	for _, c := range baseline.Cells {
		if c.Build.Context != "" {
			c.Build.Suffix = BaselineTagSuffix
		}
		c.Variant = results.VariantBase
		base[key{c.Scenario, c.Target, c.Trial}] = c
	}
	rounds := 0
	for _, c := range candidate.Cells {
		rounds = max(rounds, c.Trial)
	}
	// The order of rounds: A/A round j follows paired round ⌈j·rounds/(aa+1)⌉, so that the
	// controls sample the whole run's drift, not only its start or its end.
	pairedRound, aaRound := map[int]int{}, map[int]int{}
	next := 1
	for t := 1; t <= rounds; t++ {
		pairedRound[t] = next
		next++
		for j := 1; j <= aa; j++ {
			if (j*rounds+aa)/(aa+1) == t {
				aaRound[j] = next
				next++
			}
		}
	}

	p := *candidate
	p.Cells, p.Builds = nil, nil
	p.Paired = true
	for _, c := range candidate.Cells {
		b, ok := base[key{c.Scenario, c.Target, c.Trial}]
		if !ok {
			return nil, fmt.Errorf("target %s (scenario %s, trial %d) is not in the baseline: measure targets both sides have", c.Target, c.Scenario, c.Trial)
		}
		c.Variant = results.VariantCandidate
		c.Round, b.Round = pairedRound[c.Trial], pairedRound[c.Trial]
		p.Cells = append(p.Cells, b, c)
	}
	for j := 1; j <= aa; j++ {
		for _, c := range baseline.Cells {
			if c.Trial != 1 {
				continue
			}
			if c.Build.Context != "" {
				c.Build.Suffix = BaselineTagSuffix
			}
			c.Trial, c.Round = j, aaRound[j]
			for _, v := range []string{results.VariantAA1, results.VariantAA2} {
				c.Variant = v
				p.Cells = append(p.Cells, c)
			}
		}
	}
	for _, c := range p.Cells {
		if c.Build.Context != "" && !slices.ContainsFunc(p.Builds, func(b container.BuildSpec) bool { return b.Tag() == c.Build.Tag() }) {
			p.Builds = append(p.Builds, c.Build)
		}
	}
	return &p, nil
}

// AddRound adds one more paired round after every round planned: the baseline and the candidate
// of each target, as their first round measured them. It returns the round's trial number.
func (p *Plan) AddRound() int {
	trial, round := 0, 0
	var first []Cell
	for _, c := range p.Cells {
		round = max(round, c.Round)
		if c.Variant == results.VariantAA1 || c.Variant == results.VariantAA2 {
			continue
		}
		trial = max(trial, c.Trial)
		if c.Trial == 1 {
			first = append(first, c)
		}
	}
	for _, c := range first {
		c.Trial, c.Round = trial+1, round+1
		p.Cells = append(p.Cells, c)
	}
	return trial + 1
}

// Rounds is the number of paired rounds planned (A/A rounds aside).
func (p *Plan) Rounds() int {
	n := 0
	for _, c := range p.Cells {
		if c.Variant != results.VariantAA1 && c.Variant != results.VariantAA2 {
			n = max(n, c.Trial)
		}
	}
	return n
}
