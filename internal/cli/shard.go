package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/shard"
	"github.com/iotbench/iotbench/internal/units"
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
				return printMergedShards(merge, s.Out)
			case specFile != "":
				return shardOfJob(cmd.Context(), specFile, index, start, out)
			}
			return serveShard(cmd.Context(), in, s.Out)
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

// serveShard is one shard of a run, driven by its parent over in and out (internal/shard).
func serveShard(ctx context.Context, in io.Reader, out io.Writer) error {
	defer load.GeneratorGC()()
	return shard.Serve(ctx, in, out)
}

// shardOfJob runs shard index of the indexed Job whose spec is in specFile (as iotbench k8s
// renders it): its measured phase starts at start (RFC 3339), its result goes to the folder out.
func shardOfJob(ctx context.Context, specFile string, index int, start, out string) error {
	defer load.GeneratorGC()()
	b, err := os.ReadFile(specFile)
	if err != nil {
		return exitcode.With(exitcode.Usage, err)
	}
	var spec shard.Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return exitcode.Usagef("--spec %s: %v", specFile, err)
	}
	if index < 0 || index >= spec.Count {
		return exitcode.Flag("index", fmt.Sprint(index), fmt.Errorf("the spec has %d shards: 0 to %d", spec.Count, spec.Count-1))
	}
	at, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		return exitcode.Flag("start", start, errors.New("not an RFC 3339 time, e.g. 2026-11-23T20:00:00Z"))
	}
	spec.Index = index
	return shard.RunFile(ctx, spec, at, out)
}

// printMergedShards merges the results the shards of a Job left in dir and prints them.
func printMergedShards(dir string, out io.Writer) error {
	res, err := shard.MergeDir(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d requests, %d successes, %d errors at %.1f rps of %d; p50 %s p99 %s p99.9 %s; generator delay p99 %s (worst shard)\n",
		res.Requests, res.Successes, res.Errors, res.AchievedRate(), res.RequestedRate,
		units.Millis(res.Latency.P50), units.Millis(res.Latency.P99), units.Millis(res.Latency.P999), units.Millis(res.OwnDelay.P99))
	if !res.Valid {
		fmt.Fprintf(out, "INVALID: %s\n", safetext.Terminal(res.InvalidReason))
		return exitcode.ErrInvalidCells
	}
	return nil
}
