package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/spf13/cobra"
)

// CleanOptions are the flags of `iotbench clean`.
type CleanOptions struct {
	Streams Streams

	All    bool
	DryRun bool

	// Engine reaches the Docker engine; tests give a fake.
	Engine func(ctx context.Context) (Cleaner, error)
	// Now is the clock ages are measured against.
	Now func() time.Time
}

// Cleaner removes iotbench's containers: container.Docker, or a fake in tests.
type Cleaner interface {
	RemoveLeftovers(ctx context.Context, c container.Cleanup) ([]container.Found, error)
	Close() error
}

var _ Cleaner = (*container.Docker)(nil)

// NewCmdClean builds `iotbench clean`; runF replaces the behaviour in tests.
func NewCmdClean(s Streams, runF func(context.Context, *CleanOptions) error) *cobra.Command {
	o := &CleanOptions{
		Streams: s,
		Engine:  func(ctx context.Context) (Cleaner, error) { return container.Connect(ctx) },
		Now:     time.Now,
	}
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the containers of iotbench runs whose process is gone",
		Long: `Remove the target containers that iotbench runs left behind: those whose iotbench process no
longer runs on this host (killed, crashed, its terminal closed). Every run does this when it
starts; clean does it on demand. Containers of runs in progress are kept, and so are those without
an owner label (an older iotbench's) or started from another host, unless --all.

One line per container: its name, target, run, age, state and whose it is.
Exit status: 0 done (or nothing to do); 1 a container could not be removed.`,
		Example: `  iotbench clean
  iotbench clean --dry-run      # list what would be removed
  iotbench clean --all          # every iotbench container, those of runs in progress too`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return cleanRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.All, "all", false, "remove every iotbench container, those of runs in progress too")
	f.BoolVar(&o.DryRun, "dry-run", false, "list the containers that would be removed, remove nothing")
	return cmd
}

func cleanRun(ctx context.Context, o *CleanOptions) error {
	e, err := o.Engine(ctx)
	if err != nil {
		return err
	}
	defer e.Close()
	found, err := e.RemoveLeftovers(ctx, container.Cleanup{Every: o.All, DryRun: o.DryRun})
	verb, done := "removed", "removed"
	if o.DryRun {
		verb, done = "would remove", "to remove"
	}
	now := o.Now()
	for _, f := range found {
		fmt.Fprintf(o.Streams.Out, "%s %s\n", verb, f.Describe(now))
	}
	switch {
	case len(found) > 0:
		fmt.Fprintf(o.Streams.Out, "%d container(s) %s\n", len(found), done)
	case err == nil && o.All:
		fmt.Fprintln(o.Streams.Out, "no iotbench container")
	case err == nil:
		fmt.Fprintln(o.Streams.Out, "no container left by a run whose process is gone (--all for every iotbench container)")
	}
	if err != nil {
		return fmt.Errorf("%w\n(retry `iotbench clean`, or remove it with `docker rm -f NAME`)", err)
	}
	return nil
}

// removeLeftovers removes, as a run starts, the containers of runs whose process is gone (a kill
// -9, a crash, a closed terminal): they would hold their targets' ports. One line each on log;
// a failure is a warning, since the run may not need that container's port.
func removeLeftovers(ctx context.Context, c Cleaner, log io.Writer) {
	found, err := c.RemoveLeftovers(ctx, container.Cleanup{})
	now := time.Now()
	for _, f := range found {
		fmt.Fprintf(log, "removed a container left by an earlier run: %s\n", f.Describe(now))
	}
	if err != nil {
		fmt.Fprintf(log, "warning: leftover containers of earlier runs: %v (`iotbench clean` retries)\n", err)
	}
}

// newRunID names a run in its containers' labels: its start (UTC, as the results file) and
// this process.
func newRunID(start time.Time) string {
	return fmt.Sprintf("%s-%d", start.UTC().Format("20060102T150405Z"), os.Getpid())
}
