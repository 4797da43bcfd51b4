package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCmdVersion builds `iotbench version`.
func NewCmdVersion(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print iotbench's version and the commit it was built from",
		Example: "  iotbench version",
		Args:    noArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprint(s.Out, versionLine())
		},
	}
}
