package run

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/kube"
	"github.com/iotbench/iotbench/internal/plan"
)

// DefaultCABundle is the PEM bundle image builds trust unless told otherwise: the host's.
const DefaultCABundle = container.DefaultCABundle

// CheckEngine refuses an engine address that names no engine (before anything is built).
func CheckEngine(engine string) error {
	_, err := container.ResolveEngine(engine)
	return err
}

// Engine is a Docker engine as a run uses it: the targets' lifecycle, and its host's facts when
// it is another host's.
type Engine interface {
	container.Lifecycle
	// Version is the engine's version, recorded in every row.
	Version(ctx context.Context) string
	// Remote is its host's address when that is another host; empty: this machine.
	Remote() string
	// Facts are its host's CPU, kernel and CPU count.
	Facts(ctx context.Context) (container.HostFacts, error)
	Close() error
}

var _ Engine = (*container.Docker)(nil)

// Effects are what a run does to the world besides measuring: tests replace them.
type Effects struct {
	// Connect reaches the engine named (empty: the environment's), ready for a run: image builds
	// trust caBundle, the leftovers of earlier runs are removed, another host's engine has the
	// root image. log hears what it did.
	Connect func(ctx context.Context, engine, caBundle string, log io.Writer) (Engine, error)
	// ConnectKube reaches a Kubernetes cluster, ready for a run (kube.go).
	ConnectKube func(ctx context.Context, o kube.Options, caBundle string, log io.Writer) (Engine, error)
	// Dial reaches a Docker engine as it is (container.LocalEngine: this machine's), for what
	// a run does there besides its targets: generator shards on other engines, and the images
	// they and another host's targets are copied from.
	Dial func(ctx context.Context, engine string) (*container.Docker, error)
	// AllowedCPUs are the CPUs this process may use.
	AllowedCPUs func() ([]int, error)
	// Pin pins this process (the generator) to cpus.
	Pin func(cpus []int) error
	// Executable is this binary, which generator shards run.
	Executable func() (string, error)
	// Meta is what every row records of this machine and iotbench.
	Meta func() bench.Meta
	// Now is the clock that names a new results file.
	Now func() time.Time
	// Calibrate measures the reference servers at rate, placed on targetCPUs (nil: in this
	// process), watching watchedCPUs for other work (nil: none; calibrate.go).
	Calibrate func(ctx context.Context, rate int, targetCPUs, watchedCPUs []int) (Calibration, error)
}

// Docker are the effects of a real run: the Docker engine, this machine, this binary.
func Docker() Effects {
	return Effects{
		Connect: func(ctx context.Context, engine, caBundle string, log io.Writer) (Engine, error) {
			return ConnectDocker(ctx, container.ConnectTo, engine, caBundle, log)
		},
		ConnectKube: func(ctx context.Context, o kube.Options, caBundle string, log io.Writer) (Engine, error) {
			return ConnectKube(ctx, container.ConnectTo, o, caBundle, log)
		},
		Dial:        container.ConnectTo,
		AllowedCPUs: hostinfo.AllowedCPUs,
		Pin:         hostinfo.PinProcess,
		Executable:  os.Executable,
		Meta: func() bench.Meta {
			return bench.Meta{Version: hostinfo.Version, Commit: hostinfo.Commit(), HostCPU: hostinfo.CPUModel(), Kernel: hostinfo.Kernel()}
		},
		Now: time.Now,
		Calibrate: func(ctx context.Context, rate int, targetCPUs, watchedCPUs []int) (Calibration, error) {
			exe, _ := os.Executable()
			return Calibrate(ctx, rate, DefaultCalibration, exe, targetCPUs, watchedCPUs)
		},
	}
}

// Runs executes runs with one set of effects. It connects each engine once, when a run first
// needs it, and keeps it for the next runs (reproduce runs many); Close releases them.
type Runs struct {
	Effects Effects
	engines map[string]Engine
}

// New returns a Runs with effects e; those e leaves nil are Docker's.
func New(e Effects) *Runs {
	d := Docker()
	if e.Connect == nil {
		e.Connect = d.Connect
	}
	if e.Dial == nil {
		e.Dial = d.Dial
	}
	if e.ConnectKube == nil {
		e.ConnectKube = d.ConnectKube
	}
	if e.AllowedCPUs == nil {
		e.AllowedCPUs = d.AllowedCPUs
	}
	if e.Pin == nil {
		e.Pin = d.Pin
	}
	if e.Executable == nil {
		e.Executable = d.Executable
	}
	if e.Meta == nil {
		e.Meta = d.Meta
	}
	if e.Now == nil {
		e.Now = d.Now
	}
	if e.Calibrate == nil {
		e.Calibrate = d.Calibrate
	}
	// The first run pins this process to its generator's CPUs: every later run (reproduce runs
	// many) plans on the CPUs this process had before that, not on the generator's.
	e.AllowedCPUs = sync.OnceValues(e.AllowedCPUs)
	return &Runs{Effects: e, engines: map[string]Engine{}}
}

// Close releases the engines.
func (rs *Runs) Close() {
	for k, e := range rs.engines {
		e.Close()
		delete(rs.engines, k)
	}
}

// connect is the engine named, or the cluster when o is set, connected once.
func (rs *Runs) connect(ctx context.Context, engine string, o *kube.Options, caBundle string, log io.Writer) (Engine, error) {
	key := engine
	if o != nil {
		key = "kube:" + o.Kubeconfig + ":" + o.Context + ":" + o.Namespace
	}
	if e := rs.engines[key]; e != nil {
		return e, nil
	}
	connect := rs.Effects.Connect
	if o != nil {
		connect = func(ctx context.Context, _, caBundle string, log io.Writer) (Engine, error) {
			return rs.Effects.ConnectKube(ctx, *o, caBundle, log)
		}
	}
	e, err := connect(ctx, engine, caBundle, log)
	if err != nil {
		return nil, err
	}
	rs.engines[key] = e
	return e, nil
}

// prepare plans s and reaches what runs its targets: the engine (planning again on its host's
// CPUs when it is another host's), or the running service. A run this host is too small for
// reaches nothing: lifecycle is nil.
func (rs *Runs) prepare(ctx context.Context, s Setup) (p *plan.Plan, lifecycle container.Lifecycle, remote string, meta bench.Meta, err error) {
	meta = rs.Effects.Meta()
	if s.Service != nil {
		p, err = servicePlan(s.Service)
		if err != nil {
			return nil, nil, "", meta, err
		}
		u, _ := url.Parse(s.Service.URL)
		return p, container.Running{BaseURL: u.Scheme + "://" + u.Host}, "", meta, nil
	}
	allowed, err := rs.Effects.AllowedCPUs()
	if err != nil {
		return nil, nil, "", meta, err
	}
	if p, err = scenarioPlan(s.Scenario, allowed); err != nil {
		return nil, nil, "", meta, err
	}
	if s.NeedsCPUs > len(p.TargetCPUs) {
		return p, nil, "", meta, nil
	}
	d, err := rs.connect(ctx, s.Engine, s.Kube, s.CABundle, s.Log)
	if err != nil {
		return nil, nil, "", meta, err
	}
	meta.DockerVersion = d.Version(ctx)
	if remote = d.Remote(); remote != "" {
		// The targets' CPUs are the engine host's; this machine is the generator's, all of it.
		facts, err := d.Facts(ctx)
		if err != nil {
			return nil, nil, "", meta, fmt.Errorf("asking the engine at %s about its host: %w", remote, err)
		}
		meta.HostCPU, meta.Kernel, meta.DockerVersion = facts.CPU, facts.Kernel, facts.EngineVersion
		if p, err = scenarioPlan(s.Scenario, allCPUs(facts.CPUs)); err != nil {
			return nil, nil, "", meta, err
		}
		if err := downstreamReachable(p, remote); err != nil {
			return nil, nil, "", meta, err
		}
		p.GeneratorCPUs = allowed
	}
	return p, d, remote, meta, nil
}

// allCPUs are CPUs 0 to n-1.
func allCPUs(n int) []int {
	cpus := make([]int, n)
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// downstreamReachable refuses a remote engine's run whose scenario calls the downstream service:
// iotbench serves it on this machine's loopback, where a target on another host cannot call it.
func downstreamReachable(p *plan.Plan, remote string) error {
	for _, c := range p.Cells {
		if c.Load.Check.CallsDownstream {
			return exitcode.Usagef("scenario %s calls the downstream service, which iotbench serves on this machine's loopback: a target on %s cannot reach it; run this scenario on a local engine", c.Scenario, remote)
		}
	}
	return nil
}

// ConnectDocker reaches the engine by dial, sets the CA bundle for image builds and the run's id
// for its containers' labels, and removes the containers of runs whose process is gone; another
// host's engine gets the root image the targets' Dockerfiles start from.
func ConnectDocker(ctx context.Context, dial func(context.Context, string) (*container.Docker, error), engine, caBundle string, log io.Writer) (*container.Docker, error) {
	d, err := dial(ctx, engine)
	if err != nil {
		return nil, err
	}
	d.CABundle = caBundle
	d.RunID = newRunID(time.Now())
	removeLeftovers(ctx, d, log)
	if d.Remote() != "" {
		if err := copyRootImage(ctx, dial, d, log); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// copyRootImage copies the root image the targets' Dockerfiles start from to another host's
// engine, from the local engine, when it lacks it (it cannot pull it either).
func copyRootImage(ctx context.Context, dial func(context.Context, string) (*container.Docker, error), d *container.Docker, log io.Writer) error {
	local, err := dial(ctx, container.LocalEngine)
	if err != nil {
		return fmt.Errorf("copying the root image %s to the engine at %s: %w", container.RootImage, d.Remote(), err)
	}
	defer local.Close()
	fmt.Fprintf(log, "targets on the engine at %s: they listen on %s; copying %s there unless it has it\n", d.Engine(), d.Remote(), container.RootImage)
	return d.Transfer(ctx, local, container.RootImage)
}

// newRunID names a run in its containers' labels: its start (UTC, as the results file) and
// this process.
func newRunID(start time.Time) string {
	return fmt.Sprintf("%s-%d", start.UTC().Format("20060102T150405Z"), os.Getpid())
}
