package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/run"
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
	// Protocols narrow the protocols checked; empty: each target's declared ones.
	Protocols []string
	// DockerHost is the engine the targets run on, as run's --docker-host.
	DockerHost string
	// Effects reach the containers' engine; those left nil are Docker's (run.Docker).
	Effects run.Effects
}

// NewCmdVerify builds `iotbench verify`; runF replaces the behaviour in tests.
func NewCmdVerify(s Streams, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	o := &VerifyOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check targets against every endpoint of the contract (docs/contract.md)",
		Long: `Build and start each target in turn, as a run would, and check every endpoint of the contract
with the exact values it fixes (Monte Carlo, matrix trace, primes, fib, page rows, stored rows…).
A target that passes does the same work as the others. Each target is checked over every protocol
its image declares (http1, https, h2, h2c: docs/protocols.md), in a fresh container each, with
certificates made for this run. Exit status 1 when any target fails.
With --docker-host, the targets run on that engine, as run's do (over clear-text protocols only).`,
		Example: "  iotbench verify\n  iotbench verify --targets spring-mvc-platform,fastify\n  iotbench verify --protocol http1   # plaintext only\n  iotbench verify --db postgres   # every target on PostgreSQL: its rows counted in the server too\n  iotbench verify --docker-host ssh://bench@10.0.0.2",
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
	fl.StringVar(&o.DockerHost, "docker-host", "", "the Docker `ENGINE` the targets run on, as for run (default: the environment's)")
	fl.StringSliceVar(&o.Protocols, "protocol", nil, "protocols to check, comma-separated, of those each target declares (default: all)")
	addCABundleFlag(fl, &o.CABundle)
	return cmd
}

func runVerify(ctx context.Context, o *VerifyOptions) error {
	only := make([]protocol.Protocol, len(o.Protocols))
	for i, name := range o.Protocols {
		only[i] = protocol.Protocol(name).Or()
		if err := protocol.Check(only[i]); err != nil {
			return exitcode.Flag("protocol", strings.Join(o.Protocols, ","), err)
		}
	}
	doc, err := os.ReadFile(o.Payload)
	if err != nil {
		return usagef("--payload: %v", err)
	}
	runs := run.New(o.Effects)
	defer runs.Close()
	failed, total, err := runs.Verify(ctx, run.Verification{File: o.File, Targets: o.Targets, Payload: doc,
		Overrides: plan.Overrides{CPUs: o.CPUs, Memory: o.Memory, DB: o.DB, DBCPUs: o.DBCPUs, DBPool: o.DBPool},
		Engine:    o.DockerHost, CABundle: o.CABundle, Protocols: only, Log: o.Streams.ErrOut})
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		fmt.Fprintf(o.Streams.Out, "%d of %d target(s) fail the contract: %s\n", len(failed), total, strings.Join(failed, ", "))
		return exitcode.ErrInvalidCells
	}
	fmt.Fprintf(o.Streams.Out, "all %d target(s) pass every contract check\n", total)
	return nil
}
