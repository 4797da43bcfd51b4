package cli

import (
	"context"
	"time"

	"github.com/iotbench/iotbench/internal/run"
	"github.com/spf13/cobra"
)

// CleanOptions are the flags of `iotbench clean`.
type CleanOptions struct {
	Streams Streams

	All    bool
	DryRun bool

	// Engine reaches the Docker engine; tests give a fake.
	Engine func(ctx context.Context) (run.Cleaner, error)
	// Now is the clock ages are measured against.
	Now func() time.Time
}

// NewCmdClean builds `iotbench clean`; runF replaces the behaviour in tests.
func NewCmdClean(s Streams, runF func(context.Context, *CleanOptions) error) *cobra.Command {
	o := &CleanOptions{
		Streams: s,
		Engine:  run.ConnectCleaner,
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
	return run.Clean(ctx, e, o.All, o.DryRun, o.Now(), o.Streams.Out)
}
