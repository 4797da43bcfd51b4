package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/verify"
	"github.com/spf13/cobra"
)

// VerifyOptions are the flags of `iotbench verify`.
type VerifyOptions struct {
	Streams  Streams
	File     string
	Targets  []string
	CPUs     string
	Memory   string
	DB       string
	DBCPUs   string
	DBPool   []int
	Payload  string
	CABundle string
	// Engine reaches the containers' engine; nil: the Docker engine of the environment.
	Engine func(ctx context.Context, caBundle string, log io.Writer) (container.Lifecycle, func(), error)
}

// NewCmdVerify builds `iotbench verify`; runF replaces the behaviour in tests.
func NewCmdVerify(s Streams, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	o := &VerifyOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check targets against every endpoint of the contract (docs/contract.md)",
		Long: `Build and start each target in turn, as a run would, and check every endpoint of the contract
with the exact values it fixes (Monte Carlo, matrix trace, primes, fib, page rows, stored rows…).
A target that passes does the same work as the others. Exit status 1 when any target fails.`,
		Example: "  iotbench verify\n  iotbench verify --targets spring-mvc-platform,fastify\n  iotbench verify --db postgres   # every target on PostgreSQL: its rows counted in the server too",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runVerify(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.File, "file", "scenarios.yaml", "scenario matrix naming the targets")
	fl.StringSliceVar(&o.Targets, "targets", nil, "targets to verify, comma-separated (default: all)")
	fl.StringVar(&o.CPUs, "cpus", "", "targets' cpuset (default: as for run)")
	fl.StringVar(&o.Memory, "memory", "", "targets' memory limit (default: the file's defaults, else 1g)")
	addDBFlags(fl, &o.DB, &o.DBCPUs, &o.DBPool)
	fl.StringVar(&o.Payload, "payload", "payloads/iot-reading.json", "the standard reading document")
	addCABundleFlag(fl, &o.CABundle)
	return cmd
}

func runVerify(ctx context.Context, o *VerifyOptions) error {
	f, err := scenario.Load(o.File)
	if err != nil {
		return usageError{err}
	}
	doc, err := os.ReadFile(o.Payload)
	if err != nil {
		return usagef("--payload: %v", err)
	}
	allowed, err := hostinfo.AllowedCPUs()
	if err != nil {
		return err
	}
	p, err := plan.Targets(f, o.Targets, plan.Overrides{CPUs: o.CPUs, Memory: o.Memory, DB: o.DB, DBCPUs: o.DBCPUs, DBPool: o.DBPool}, allowed)
	if err != nil {
		return planError(err)
	}
	engine := o.Engine
	if engine == nil {
		engine = dockerEngine
	}
	lifecycle, release, err := engine(ctx, o.CABundle, o.Streams.ErrOut)
	if err != nil {
		return err
	}
	defer release()
	r := &bench.Runner{Lifecycle: lifecycle, Log: o.Streams.ErrOut}
	failed, err := r.Verify(ctx, p, verify.Contract(doc))
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		fmt.Fprintf(o.Streams.Out, "%d of %d target(s) fail the contract: %s\n", len(failed), len(p.Cells), strings.Join(failed, ", "))
		return errInvalidCells
	}
	fmt.Fprintf(o.Streams.Out, "all %d target(s) pass every contract check\n", len(p.Cells))
	return nil
}

// dockerEngine is the Docker engine of the environment, as a lifecycle; log hears of the
// leftovers it removes.
func dockerEngine(ctx context.Context, caBundle string, log io.Writer) (container.Lifecycle, func(), error) {
	d, err := connectDocker(ctx, "", caBundle, log)
	if err != nil {
		return nil, nil, err
	}
	return d, func() { d.Close() }, nil
}

// connectDocker reaches the engine, sets the CA bundle for image builds and the run's id for its
// containers' labels, and removes the containers of runs whose process is gone.
func connectDocker(ctx context.Context, host, caBundle string, log io.Writer) (*container.Docker, error) {
	d, err := container.ConnectTo(ctx, host)
	if err != nil {
		return nil, err
	}
	d.CABundle = caBundle
	d.RunID = newRunID(time.Now())
	removeLeftovers(ctx, d, log)
	if d.Remote() != "" {
		if err := useRemoteEngine(ctx, d, log); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// useRemoteEngine prepares a run on another host's engine: load may go to that host (and only
// there besides loopback), and the root image the targets' Dockerfiles start from is copied to it
// from the local engine when it lacks it (it cannot pull it either).
func useRemoteEngine(ctx context.Context, d *container.Docker, log io.Writer) error {
	load.AllowRemoteHost(d.Remote())
	local, err := container.ConnectTo(ctx, container.LocalEngine)
	if err != nil {
		return fmt.Errorf("copying the root image %s to the engine at %s: %w", container.RootImage, d.Remote(), err)
	}
	defer local.Close()
	fmt.Fprintf(log, "targets on the engine at %s: they listen on %s; copying %s there unless it has it\n", d.Engine(), d.Remote(), container.RootImage)
	return d.Transfer(ctx, local, container.RootImage)
}
