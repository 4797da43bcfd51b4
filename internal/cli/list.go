package cli

import (
	"fmt"
	"strings"

	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// NewCmdList builds `iotbench list`.
func NewCmdList(s Streams) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the scenarios and targets of the scenario matrix, one line each",
		Example: "  iotbench list\n  iotbench list --file my-scenarios.yaml",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			f, err := scenario.Load(file)
			if err != nil {
				return usageError{err}
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
				fmt.Fprintf(s.Out, " %s %-16s %-6s %-20s %-16s %s [%s]\n", mark, name, sc.Request.Method, sc.Request.Path, model, sc.Description, strings.Join(sc.Targets, ","))
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
	return cmd
}
