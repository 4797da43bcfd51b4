package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
)

// Generator hosts (--generator-host ENGINE, repeatable): every cell's generator shards run as
// containers of an iotbench image on those engines instead of as processes here. The shards are
// dealt out in turn, shard i to host i mod H, so that --generators N (by default one shard per
// host) spreads evenly; each host's shards are pinned to CPUs of their own there when it has as
// many, or share all of them.

// genHost is a generator engine as the layout needs it.
type genHost struct {
	// Engine is the address it was given as; Remote its host's address when that is another
	// host (empty: this machine).
	Engine, Remote string
	// CPUs are those its shards may use: this machine's generator CPUs, or all of another host's.
	CPUs []int
}

// shardPlace is where one shard runs: its host (an index into the hosts) and its cpuset there.
type shardPlace struct {
	Host   int
	CPUSet string
}

// layoutShards deals n shards out to hosts in turn and pins each host's shards: one CPU each
// when the host has as many, all of them shared otherwise, none when it has none to give.
func layoutShards(n int, hosts []genHost) ([]shardPlace, error) {
	if len(hosts) == 0 {
		return nil, errors.New("no generator host")
	}
	if n < len(hosts) {
		return nil, fmt.Errorf("%d generator(s) for %d generator hosts: give each host one at least", n, len(hosts))
	}
	per := make([]int, len(hosts))
	for i := range n {
		per[i%len(hosts)]++
	}
	places := make([]shardPlace, n)
	for i := range places {
		h := i % len(hosts)
		cpus := hosts[h].CPUs
		switch j := i / len(hosts); {
		case per[h] <= len(cpus):
			places[i] = shardPlace{h, cpuset.Format(cpus[j : j+1])}
		default:
			places[i] = shardPlace{h, cpuset.Format(cpus)}
		}
	}
	return places, nil
}

// checkGeneratorHost refuses a generator host whose shards could not load the targets, or would
// share their CPUs: another host reaches no target on this machine's loopback, and the targets'
// own host is no generator host.
func checkGeneratorHost(remote, targetHost string) error {
	switch {
	case remote == "":
		return nil
	case targetHost == "":
		return fmt.Errorf("is another host (%s), and the targets listen on this machine's loopback, which it cannot reach: run the targets on an engine of their own host (--docker-host), or give a generator engine on this machine (%s)", remote, container.LocalEngine)
	case remote == targetHost:
		return fmt.Errorf("is the targets' host %s: its shards would take the targets' CPUs; give another host", remote)
	}
	return nil
}

// shardEngine starts shard containers: container.Docker, or a fake in tests.
type shardEngine interface {
	StartShard(ctx context.Context, s container.ShardSpec) (container.Attached, error)
}

var _ shardEngine = (*container.Docker)(nil)

// shardStarter starts shard i as a container on its place's engine (engines[h], of image
// images[h] and remote address remotes[h]).
func shardStarter(places []shardPlace, engines []shardEngine, images, remotes []string) shard.Starter {
	return func(ctx context.Context, i int) (shard.Process, error) {
		pl := places[i]
		a, err := engines[pl.Host].StartShard(ctx, container.ShardSpec{Image: images[pl.Host], Index: i, CPUSet: pl.CPUSet, Memory: container.ShardMemory})
		if err != nil {
			return shard.Process{}, err
		}
		return shard.Process{In: a.In, Out: a.Out, Wait: a.Wait, Contained: true, Host: remotes[pl.Host]}, nil
	}
}

// useGeneratorHosts has r measure every cell over n shards in containers on the engines named;
// it connects to each (removing the leftovers of earlier runs there), checks it, and builds the
// shard image there unless it has it. The returned func closes the connections.
func (rs *Runs) useGeneratorHosts(ctx context.Context, r *bench.Runner, p *plan.Plan, engines []string, n int, log io.Writer) (func(), error) {
	if err := checkSplit(p, n); err != nil {
		return nil, err
	}
	for _, c := range p.Cells {
		if pr := c.Load.Request.Protocol; pr.TLS() {
			// The run's CA is made here and not serialised (load.Request.TLS).
			return nil, exitcode.Flag("generator-host", strings.Join(engines, ","), fmt.Errorf("%s: %s runs over TLS, whose certificates this process makes for the run: load it from this machine (no --generator-host), or use --protocol http1 or h2c", c.Target, pr))
		}
	}
	bin, err := rs.Effects.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary for the generator shard image: %w", err)
	}
	if err := container.StaticBinary(bin); err != nil {
		return nil, err
	}
	runID := newRunID(time.Now())
	if d, ok := r.Lifecycle.(*container.Docker); ok {
		runID = d.RunID
	}
	var opened []*container.Docker
	closeAll := func() {
		for _, d := range opened {
			d.Close()
		}
	}
	local, err := rs.Effects.Dial(ctx, container.LocalEngine)
	if err != nil {
		return nil, fmt.Errorf("the local engine, whose %s generator hosts get: %w", container.RootImage, err)
	}
	opened = append(opened, local)
	hosts := make([]genHost, len(engines))
	starters := make([]shardEngine, len(engines))
	images, remotes := make([]string, len(engines)), make([]string, len(engines))
	for i, e := range engines {
		d, err := rs.Effects.Dial(ctx, e)
		if err != nil {
			closeAll()
			return nil, exitcode.Flag("generator-host", e, err)
		}
		opened = append(opened, d)
		d.RunID = runID
		removeLeftovers(ctx, d, log)
		h := genHost{Engine: e, Remote: d.Remote(), CPUs: p.GeneratorCPUs}
		if err := checkGeneratorHost(h.Remote, r.RemoteHost); err != nil {
			closeAll()
			return nil, exitcode.Flag("generator-host", e, err)
		}
		if h.Remote != "" {
			facts, err := d.Facts(ctx)
			if err != nil {
				closeAll()
				return nil, exitcode.Flag("generator-host", e, fmt.Errorf("asking the engine about its host: %w", err))
			}
			h.CPUs = allCPUs(facts.CPUs)
		}
		image, built, err := d.ShardImage(ctx, local, bin)
		if err != nil {
			closeAll()
			return nil, exitcode.Flag("generator-host", e, err)
		}
		how := "had it"
		if built {
			how = "built there"
		}
		fmt.Fprintf(log, "generator host %s: shards run as containers of %s (%s)\n", e, image, how)
		hosts[i], starters[i], images[i], remotes[i] = h, d, image, h.Remote
	}
	places, err := layoutShards(n, hosts)
	if err != nil {
		closeAll()
		return nil, exitcode.Flag("generators", fmt.Sprint(n), err)
	}
	for i, pl := range places {
		fmt.Fprintf(log, "  generator shard %d of %d on %s, cpuset %s\n", i+1, n, hosts[pl.Host].Engine, or(pl.CPUSet, "none"))
	}
	r.Load = shard.Runner{Count: n, Start: shardStarter(places, starters, images, remotes)}.Run
	r.Generators = n
	return closeAll, nil
}

func or(s, otherwise string) string {
	if strings.TrimSpace(s) == "" {
		return otherwise
	}
	return s
}
