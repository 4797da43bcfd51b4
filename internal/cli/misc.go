package cli

import (
	"fmt"
	"runtime"

	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/spf13/cobra"
)

// NewCmdCompare builds `iotbench compare`, which arrives with the statistics work.
func NewCmdCompare(Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "compare OLD.csv NEW.csv",
		Short:   "Compare two results files (not implemented yet)",
		Example: "  iotbench compare results/old.csv results/new.csv",
		RunE: func(*cobra.Command, []string) error {
			return usagef("compare is not implemented yet: it arrives with the statistics work; until then read the CSVs (docs/results.md)")
		},
	}
}

// NewCmdVersion builds `iotbench version`.
func NewCmdVersion(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print iotbench's version and the commit it was built from",
		Example: "  iotbench version",
		Args:    cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(s.Out, "iotbench %s (commit %s, %s)\n", hostinfo.Version, hostinfo.Commit(), runtime.Version())
		},
	}
}
