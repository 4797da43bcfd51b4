package cli

import (
	"fmt"
	"runtime"

	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/spf13/cobra"
)

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
