package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/scenario"
)

// PlanError names the flag of a command-line setting that plan (or loadspec) refused; the plan's
// other errors (the scenario file's, at their lines) are usage errors as they are.
func PlanError(err error) error {
	var oe *plan.OverrideError
	if errors.As(err, &oe) {
		return exitcode.Flag(oe.Setting, oe.Value, oe.Err)
	}
	var le *loadspec.Error
	if errors.As(err, &le) {
		return exitcode.Flag(le.Key.Flag(), le.Value, le.Err)
	}
	return exitcode.With(exitcode.Usage, err)
}

// scenarioPlan plans s on the CPUs allowed, paired with the baseline checkout's when there is one.
func scenarioPlan(s *Scenario, allowed []int) (*plan.Plan, error) {
	f, err := scenario.Load(s.File)
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	name := s.Name
	if name == "" {
		name = f.DefaultScenario
	}
	if name == "" {
		return nil, exitcode.Usagef("no --scenario given and %s has no default_scenario (scenarios: %s)", s.File, strings.Join(f.ScenarioOrder, ", "))
	}
	p, err := plan.Make(f, name, s.Overrides, allowed)
	if err != nil {
		return nil, PlanError(err)
	}
	if s.Baseline != "" {
		return pairWithBaseline(s, p, name, allowed)
	}
	return p, nil
}

// pairWithBaseline plans the same scenario from the baseline checkout's scenarios file, and
// pairs its cells with the candidate's.
func pairWithBaseline(s *Scenario, candidate *plan.Plan, name string, allowed []int) (*plan.Plan, error) {
	if info, err := os.Stat(s.Baseline); err != nil || !info.IsDir() {
		return nil, exitcode.Usagef("--baseline %s: not a folder: give a checkout of the baseline (e.g. git worktree add ../base origin/main)", s.Baseline)
	}
	if filepath.IsAbs(s.File) {
		return nil, exitcode.Usagef("--baseline %s: --file %s is absolute; give it relative to the checkouts, as each holds its own", s.Baseline, s.File)
	}
	f, err := scenario.Load(filepath.Join(s.Baseline, s.File))
	if err != nil {
		return nil, exitcode.Usagef("--baseline: %v", err)
	}
	base, err := plan.Make(f, name, s.Overrides, allowed)
	if err != nil {
		return nil, exitcode.Usagef("--baseline %s: %v", s.Baseline, err)
	}
	p, err := plan.Pair(candidate, base, s.AA)
	if err != nil {
		return nil, exitcode.Usagef("--baseline %s: %v", s.Baseline, err)
	}
	return p, nil
}

// servicePlan plans a run of a service on loopback, paired with its baseline service when there
// is one (both sides are one target: the candidate's name).
func servicePlan(s *Service) (*plan.Plan, error) {
	p, err := plan.MakeAdHoc(s.adHoc(s.URL, s.Name))
	if err != nil {
		return nil, PlanError(err)
	}
	if s.BaselineURL == "" {
		return p, nil
	}
	base, err := plan.MakeAdHoc(s.adHoc(s.BaselineURL, p.Cells[0].Target))
	if err != nil {
		return nil, exitcode.Usagef("--baseline-url: %v", err)
	}
	if p, err = plan.Pair(p, base, s.AA); err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	return p, nil
}
