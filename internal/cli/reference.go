package cli

import (
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/reference"
	"github.com/spf13/cobra"
)

// NewCmdReference builds the hidden `iotbench reference`: a reference server of known latency
// for a run's calibration, pinned where the run's targets run; it prints its URL and serves
// until its stdin closes (reference.Serve).
func NewCmdReference(in io.Reader, s Streams) *cobra.Command {
	var shape reference.Shape
	var cpuList string
	cmd := &cobra.Command{
		Use:    "reference",
		Short:  "A reference server of known latency for a run's calibration (started by iotbench run)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cpus, err := pinnedTo(cpuList)
			if err != nil {
				return err
			}
			return reference.Serve(shape, cpus, in, s.Out)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&shape.Delay, "delay", 2*time.Millisecond, "every answer's wait")
	f.DurationVar(&shape.Freeze, "freeze", 0, "a freeze every --period, holding what arrives meanwhile")
	f.DurationVar(&shape.Period, "period", 0, "how often it freezes")
	f.IntVar(&shape.Workers, "workers", 0, "serve at most this many requests at once, the others queued: a target at its capacity, workers ÷ delay a second (0: no limit)")
	f.StringVar(&cpuList, "cpus", "", "the CPUs it is pinned to (empty: not pinned)")
	return cmd
}

// pinnedTo reads a helper's --cpus: the CPUs it is pinned to, none when empty.
func pinnedTo(list string) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	cpus, err := cpuset.Parse(list, cpuset.MaxCPUs)
	if err != nil {
		return nil, flagErr("cpus", list, err)
	}
	return cpus, nil
}
