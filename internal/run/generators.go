package run

import (
	"context"
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
)

// Generators and shards (docs/scale.md): a cell's load comes from its generator, this process,
// or is shared by several generator shards, each sending rate/N on an offset schedule, their
// histograms merged. The shards run as processes of this binary here (useShards) or as
// containers on generator hosts (generatorhost.go).

// useGenerators sets how r's cells are loaded: over s.Generators shards, here or on s's
// generator hosts. The returned func releases what it connected.
func (rs *Runs) useGenerators(ctx context.Context, s Setup, r *bench.Runner, p *plan.Plan) (func(), error) {
	n := s.Generators
	if k, ok := r.Lifecycle.(kubeShards); ok {
		return func() {}, rs.useKubeShards(ctx, r, p, k, n, s.Log)
	}
	if len(s.GeneratorHosts) > 0 {
		if n == 0 {
			n = len(s.GeneratorHosts)
		}
		return rs.useGeneratorHosts(ctx, r, p, s.GeneratorHosts, n, s.Log)
	}
	return func() {}, rs.useShards(r, p, n, s.Log)
}

// checkSplit refuses a shard count some cell's load cannot be shared by.
func checkSplit(p *plan.Plan, n int) error {
	for _, c := range p.Cells {
		if _, err := shard.Split(c.Load, n); err != nil {
			return exitcode.Flag("generators", fmt.Sprint(n), fmt.Errorf("%s: %w", c.Target, err))
		}
	}
	return nil
}

// useShards has r measure every cell over n shard processes of this binary; n ≤ 1 keeps the
// one generator in this process.
func (rs *Runs) useShards(r *bench.Runner, p *plan.Plan, n int, log io.Writer) error {
	if n <= 1 {
		return nil
	}
	if err := checkSplit(p, n); err != nil {
		return err
	}
	bin, err := rs.Effects.Executable()
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

// warnGeneratorCapacity warns when the plan's rate is above what the load generator sustained on
// this machine when `make bench-generator` last measured it (internal/load.Capacity).
func warnGeneratorCapacity(w io.Writer, p *plan.Plan, hostCPU string, allowedCPUs func() ([]int, error)) {
	if len(p.Cells) == 0 {
		return
	}
	cpus := len(p.GeneratorCPUs)
	if cpus == 0 { // a service on loopback: not pinned
		allowed, _ := allowedCPUs()
		cpus = len(allowed)
	}
	if msg := load.CapacityWarning(p.Cells[0].Load.Model.Rate, cpus, hostCPU); msg != "" {
		fmt.Fprintln(w, "warning:", msg)
	}
}
