package cli

import (
	"io"

	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/spf13/cobra"
)

// NewCmdDownstream builds the hidden `iotbench downstream`: the downstream service a run's
// targets call, in a process of its own on the generator's CPUs at the lowest priority; it
// prints its URL, answers each line of its stdin with its tally, and serves until its stdin
// closes (downstream.Serve).
func NewCmdDownstream(in io.Reader, s Streams) *cobra.Command {
	var cpuList string
	cmd := &cobra.Command{
		Use:    "downstream",
		Short:  "The downstream service a run's targets call (started by iotbench run)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cpus, err := pinnedTo(cpuList)
			if err != nil {
				return err
			}
			return downstream.Serve(cpus, in, s.Out)
		},
	}
	cmd.Flags().StringVar(&cpuList, "cpus", "", "the CPUs it is pinned to (empty: not pinned)")
	return cmd
}
