package run

import (
	"context"
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/kube"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
)

// A run on Kubernetes (--kube, docs/scale.md): the targets are pods on the cluster's target node,
// its load comes from shards in Jobs on its generator nodes, and the images are built by this
// machine's engine and loaded into the nodes (kube.Cluster).

// kubeEngine is a cluster with the local engine that builds its images.
type kubeEngine struct {
	*kube.Cluster
	local *container.Docker
}

// Close removes the run's objects from the cluster, then releases the local engine.
func (k kubeEngine) Close() error {
	err := k.Cluster.Close()
	k.local.Close()
	return err
}

// ConnectKube reaches the cluster o names, with this machine's engine (dial) to build images.
func ConnectKube(ctx context.Context, dial func(context.Context, string) (*container.Docker, error), o kube.Options, caBundle string, log io.Writer) (Engine, error) {
	// A context that is not there is said before the engine is reached.
	c, err := kube.Dial(o)
	if err != nil {
		return nil, exitcode.Flag("kube", o.Context, err)
	}
	local, err := ConnectDocker(ctx, dial, container.LocalEngine, caBundle, log)
	if err != nil {
		return nil, err
	}
	o.RunID = local.RunID
	cl, err := kube.Connect(ctx, c, o, local, log)
	if err != nil {
		local.Close()
		return nil, exitcode.Flag("kube", o.Context, err)
	}
	return kubeEngine{cl, local}, nil
}

// kubeShards is what a run on Kubernetes asks of its engine for its generator shards.
type kubeShards interface {
	GeneratorNodes() int
	Shards(n int) shard.Starter
	UseShardImage(ctx context.Context, bin string, log io.Writer) error
}

var _ kubeShards = kubeEngine{}

// GeneratorNodes counts the cluster's generator nodes.
func (k kubeEngine) GeneratorNodes() int { return k.Cluster.Generators }

// UseShardImage builds the shard image of bin on the local engine and loads it into the nodes.
func (k kubeEngine) UseShardImage(ctx context.Context, bin string, log io.Writer) error {
	return k.Cluster.UseShardImage(ctx, k.local, bin, log)
}

// useKubeShards has r measure every cell over n shards (0: one a generator node) in Jobs on the
// cluster's generator nodes: a run on Kubernetes loads its targets from there, never from here.
func (rs *Runs) useKubeShards(ctx context.Context, r *bench.Runner, p *plan.Plan, k kubeShards, n int, log io.Writer) error {
	if n == 0 {
		n = k.GeneratorNodes()
	}
	if err := checkSplit(p, n); err != nil {
		return err
	}
	for _, c := range p.Cells {
		if pr := c.Load.Request.Protocol; pr.TLS() {
			return exitcode.Flag("kube", "", fmt.Errorf("%s: %s runs over TLS, whose certificates this process makes for the run and cannot hand to shards in the cluster: use --protocol http1 or h2c", c.Target, pr))
		}
	}
	bin, err := rs.Effects.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary for the generator shard image: %w", err)
	}
	if err := k.UseShardImage(ctx, bin, log); err != nil {
		return err
	}
	fmt.Fprintf(log, "  %d generator shard(s) a cell, in an indexed Job on the generator nodes\n", n)
	r.Load = shard.Runner{Count: n, Start: k.Shards(n)}.Run
	r.Generators = n
	return nil
}
