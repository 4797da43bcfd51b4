package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/iotbench/iotbench/internal/experiment"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// NewCmdList builds `iotbench list`.
func NewCmdList(s Streams) *cobra.Command {
	var file, experiments string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the scenarios and targets of the scenario matrix, one line each",
		Example: "  iotbench list\n  iotbench list --file my-scenarios.yaml",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			f, err := scenario.Load(file)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintln(s.Out, "scenarios:")
			for _, name := range f.ScenarioOrder {
				sc := f.Scenarios[name]
				model := fmt.Sprintf("open %d rps", sc.Load.Rate)
				if sc.Load.Connections > 0 {
					model = fmt.Sprintf("closed %d conns", sc.Load.Connections)
				}
				mark := " "
				if name == f.DefaultScenario {
					mark = "*"
				}
				method, path := sc.Request.Method, sc.Request.Path
				if sc.Mixed() {
					method, path = "mix", sc.Streams()
				}
				fmt.Fprintf(s.Out, " %s %-16s %-6s %-20s %-16s %s [%s]\n", mark, name, method, path, model, sc.Description, strings.Join(sc.Targets, ","))
			}
			if err := listExperiments(s, f, experiments); err != nil {
				return err
			}
			fmt.Fprintln(s.Out, "targets:")
			for _, name := range f.TargetOrder {
				t := f.Targets[name]
				fmt.Fprintf(s.Out, "   %-24s :%-5d %s\n", name, t.Port, t.Description)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "file", "scenarios.yaml", "scenario matrix")
	cmd.Flags().StringVar(&experiments, "experiments", "experiments.yaml", "the published experiments (none when absent)")
	return cmd
}

// listExperiments lists the published experiments, one line each and one per run; an absent file
// lists none.
func listExperiments(s Streams, f *scenario.File, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ef, err := experiment.Load(path, f)
	if err != nil {
		return usageError(err)
	}
	fmt.Fprintln(s.Out, "experiments (iotbench reproduce NAME|all):")
	for _, name := range ef.Order {
		e := ef.Experiments[name]
		fmt.Fprintf(s.Out, "   %-24s %s [%s]\n", name, e.Title, e.Source)
		for _, r := range e.Runs {
			needs := ""
			if r.NeedsCPUs > 0 {
				needs = fmt.Sprintf(" (needs %d target CPUs)", r.NeedsCPUs)
			}
			fmt.Fprintf(s.Out, "     %-22s %s: %s%s\n", r.Name, r.Scenario, r.Note, needs)
		}
	}
	return nil
}
