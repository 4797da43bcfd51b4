package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/report"
	"github.com/iotbench/iotbench/internal/shard"
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
			defer load.GeneratorGC()()
			switch {
			case merge != "":
				return printMerged(s, merge)
			case specFile != "":
				return runShardFile(cmd.Context(), specFile, index, start, out)
			}
			return shard.Serve(cmd.Context(), in, s.Out)
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

func runShardFile(ctx context.Context, specFile string, index int, start, out string) error {
	b, err := os.ReadFile(specFile)
	if err != nil {
		return usageError{err}
	}
	var spec shard.Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return usagef("--spec %s: %v", specFile, err)
	}
	if index < 0 || index >= spec.Count {
		return flagErr("index", fmt.Sprint(index), fmt.Errorf("the spec has %d shards: 0 to %d", spec.Count, spec.Count-1))
	}
	at, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		return flagErr("start", start, errors.New("not an RFC 3339 time, e.g. 2026-11-23T20:00:00Z"))
	}
	spec.Index = index
	return shard.RunFile(ctx, spec, at, out)
}

func printMerged(s Streams, dir string) error {
	res, err := shard.MergeDir(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%d requests, %d successes, %d errors at %.1f rps of %d; p50 %s p99 %s p99.9 %s; generator delay p99 %s (worst shard)\n",
		res.Requests, res.Successes, res.Errors, res.AchievedRate(), res.RequestedRate,
		report.Millis(res.Latency.P50), report.Millis(res.Latency.P99), report.Millis(res.Latency.P999), report.Millis(res.OwnDelay.P99))
	if !res.Valid {
		fmt.Fprintf(s.Out, "INVALID: %s\n", res.InvalidReason)
		return errInvalidCells
	}
	return nil
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
	r.Load, r.Generators = sr.Run, n
	return nil
}
