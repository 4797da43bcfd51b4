package cli

import (
	"io"

	"github.com/iotbench/iotbench/internal/run"
	"github.com/spf13/cobra"
)

// NewCmdShard builds the hidden `iotbench shard`: one generator shard of a run with
// --generators, driven by its parent over stdin and stdout (internal/shard); with --spec, a shard
// of an indexed Job that starts at --start and writes to --out; with --merge, the merge of such
// shards' results.
func NewCmdShard(in io.Reader, s Streams) *cobra.Command {
	var specFile, out, merge string
	var index int
	var start string
	cmd := &cobra.Command{
		Use:    "shard",
		Short:  "One load generator shard of a run with --generators (started by iotbench run, or by iotbench k8s's Job)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case merge != "":
				return run.PrintMergedShards(merge, s.Out)
			case specFile != "":
				return run.ShardOfJob(cmd.Context(), specFile, index, start, out)
			}
			return run.ServeShard(cmd.Context(), in, s.Out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&specFile, "spec", "", "a shard's spec (JSON, as iotbench k8s renders it)")
	f.IntVar(&index, "index", 0, "--spec: this shard's index, from 0")
	f.StringVar(&start, "start", "", "--spec: when the measured phase starts (RFC 3339)")
	f.StringVar(&out, "out", ".", "--spec: the folder its result and interval log go to")
	f.StringVar(&merge, "merge", "", "merge the results the shards left in this folder and print them")
	return cmd
}
