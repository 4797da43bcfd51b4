package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
	"github.com/spf13/cobra"
)

// NewCmdShard builds the hidden `iotbench shard`: one generator shard of a run with
// --generators, driven by its parent over stdin and stdout (internal/shard).
func NewCmdShard(in io.Reader, s Streams) *cobra.Command {
	return &cobra.Command{
		Use:    "shard",
		Short:  "One load generator shard of a run with --generators (started by iotbench run)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer load.GeneratorGC()()
			return shard.Serve(cmd.Context(), in, s.Out)
		},
	}
}

// useGenerators has r measure every cell over n generator processes of this binary; n ≤ 1
// keeps the one generator in this process.
func useGenerators(r *bench.Runner, p *plan.Plan, n int, log io.Writer) error {
	if n <= 1 {
		return nil
	}
	for _, c := range p.Cells {
		if _, err := shard.Split(c.Load, n); err != nil {
			return flagErr("generators", fmt.Sprint(n), fmt.Errorf("%s: %w", c.Target, err))
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to start generator shards: %w", err)
	}
	sr := shard.Runner{Count: n, CPUs: p.GeneratorCPUs, Start: shard.Command(bin)}
	switch {
	case len(p.GeneratorCPUs) == 0:
		fmt.Fprintf(log, "%d generators, unpinned\n", n)
	case sr.Shared():
		fmt.Fprintf(log, "%d generators share %d generator CPU(s) %v: each is pinned to all of them, so they add processes, not capacity\n", n, len(p.GeneratorCPUs), p.GeneratorCPUs)
	default:
		fmt.Fprintf(log, "%d generators, each pinned to one of the generator CPUs %v\n", n, p.GeneratorCPUs[:n])
	}
	r.Load = sr.Run
	return nil
}
