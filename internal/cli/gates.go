package cli

import (
	"slices"

	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/run"
)

// The flags of a paired run's gate (--fail-on, --until, --max-trials) and of compare's, read
// into run.Gate: the run judges by typed gates, the command line owns their words.

// parseGates are --fail-on's gates, or the default ones of a paired run; findMax says the run
// searches maxima, which are all its gates may judge (a step's figures are at whatever rate the
// search tried).
func parseGates(failOn string, findMax bool) ([]compare.Gate, error) {
	if failOn == "" {
		failOn = compare.DefaultPairedGates
		if findMax {
			failOn = compare.DefaultPairedMaxGates
		}
	}
	gates, err := compare.ParseGates(failOn)
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	for _, g := range gates {
		switch {
		case g.Percent == 0:
			return nil, exitcode.Usagef("--fail-on %s: a paired run tests equivalence within ±limit: give a limit above 0", g)
		case findMax && g.Metric != "max":
			return nil, exitcode.Usagef("--fail-on %s: a --find-max run is judged on its maxima, its steps being at whatever rate the search tried: gate max (e.g. %s)", g, compare.DefaultPairedMaxGates)
		case !findMax && g.Metric == "max":
			return nil, exitcode.Usagef("--fail-on %s: max is a --find-max run's figure; this run measures at one load", g)
		}
	}
	return gates, nil
}

// newGate checks a paired run's settings: until (empty: none) must name gated metrics, and
// maxTrials leave room to settle anything.
func newGate(failOn, until string, maxTrials int, alpha float64, allowInconclusive, findMax bool) (*run.Gate, error) {
	gates, err := parseGates(failOn, findMax)
	if err != nil {
		return nil, err
	}
	g := &run.Gate{Gates: gates, MaxTrials: maxTrials, Alpha: alpha, AllowInconclusive: allowInconclusive}
	if until == "" {
		return g, nil
	}
	if findMax {
		return nil, exitcode.Usagef("--until adds rounds of cells at one load; a --find-max run's rounds are searches: give --trials instead")
	}
	if g.Until, err = compare.ParseUntil(until); err != nil {
		return nil, exitcode.Usagef("--until %v", err)
	}
	for _, u := range g.Until {
		if !slices.ContainsFunc(gates, func(x compare.Gate) bool { return x.Metric == u.Metric }) {
			return nil, exitcode.Usagef("--until %s: %s is not a gated metric (gates: %s): add it to --fail-on", u, u.Metric, compare.GatesText(gates))
		}
	}
	if maxTrials < compare.MinRounds {
		return nil, exitcode.Usagef("--max-trials %d: at least %d, the fewest rounds that can settle anything", maxTrials, compare.MinRounds)
	}
	return g, nil
}
