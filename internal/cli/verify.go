package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/verify"
	"github.com/spf13/cobra"
)

// NewCmdVerify builds `iotbench verify`.
func NewCmdVerify(s Streams) *cobra.Command {
	var file, cpus, memory, payload, caBundle string
	var targets []string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check targets against every endpoint of the contract (docs/contract.md)",
		Long: `Build and start each target in turn, as a run would, and check every endpoint of the contract
with the exact values it fixes (Monte Carlo, matrix trace, primes, fib, page rows, stored rows…).
A target that passes does the same work as the others. Exit status 1 when any target fails.`,
		Example: "  iotbench verify\n  iotbench verify --targets spring-mvc-platform,fastify",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := scenario.Load(file)
			if err != nil {
				return usageError{err}
			}
			doc, err := os.ReadFile(payload)
			if err != nil {
				return usagef("--payload: %v", err)
			}
			allowed, err := hostinfo.AllowedCPUs()
			if err != nil {
				return err
			}
			p, err := plan.Targets(f, targets, plan.Overrides{CPUs: cpus, Memory: memory}, allowed)
			if err != nil {
				return planError(err)
			}
			d, err := connectDocker(ctx, caBundle)
			if err != nil {
				return err
			}
			defer d.Close()
			r := &bench.Runner{Lifecycle: d, Log: s.ErrOut}
			failed, err := r.Verify(ctx, p, verify.Contract(doc))
			if err != nil {
				return err
			}
			if len(failed) > 0 {
				fmt.Fprintf(s.Out, "%d of %d target(s) fail the contract: %s\n", len(failed), len(p.Cells), strings.Join(failed, ", "))
				return errInvalidCells
			}
			fmt.Fprintf(s.Out, "all %d target(s) pass every contract check\n", len(p.Cells))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "file", "scenarios.yaml", "scenario matrix naming the targets")
	fl.StringSliceVar(&targets, "targets", nil, "targets to verify, comma-separated (default: all)")
	fl.StringVar(&cpus, "cpus", "", "targets' cpuset (default: as for run)")
	fl.StringVar(&memory, "memory", "", "targets' memory limit (default: the file's defaults, else 1g)")
	fl.StringVar(&payload, "payload", "payloads/iot-reading.json", "the standard reading document")
	addCABundleFlag(fl, &caBundle)
	return cmd
}

// connectDocker reaches the engine and sets the CA bundle for image builds.
func connectDocker(ctx context.Context, caBundle string) (*container.Docker, error) {
	d, err := container.Connect(ctx)
	if err != nil {
		return nil, err
	}
	d.CABundle = caBundle
	return d, nil
}
