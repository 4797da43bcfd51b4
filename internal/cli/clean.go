package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/kube"
	"github.com/spf13/cobra"
)

// Cleaner removes iotbench's containers: container.Docker, or a fake in tests.
type Cleaner interface {
	RemoveLeftovers(ctx context.Context, c container.Cleanup) ([]container.Found, error)
	Close() error
}

var _ Cleaner = (*container.Docker)(nil)

// CleanOptions are the flags of `iotbench clean`.
type CleanOptions struct {
	Streams Streams

	All    bool
	DryRun bool
	// Kube, when set, cleans the namespaces of runs on that kubeconfig context's cluster
	// instead; Kubeconfig is the file.
	Kube, Kubeconfig string

	// Engine reaches the Docker engine; tests give a fake.
	Engine func(ctx context.Context) (Cleaner, error)
	// Now is the clock ages are measured against.
	Now func() time.Time
}

// NewCmdClean builds `iotbench clean`; runF replaces the behaviour in tests.
func NewCmdClean(s Streams, runF func(context.Context, *CleanOptions) error) *cobra.Command {
	o := &CleanOptions{
		Streams: s,
		Engine:  func(ctx context.Context) (Cleaner, error) { return container.Connect(ctx) },
		Now:     time.Now,
	}
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the containers (or Kubernetes namespaces) of iotbench runs whose process is gone",
		Long: `Remove the target containers that iotbench runs left behind: those whose iotbench process no
longer runs on this host (killed, crashed, its terminal closed). Every run does this when it
starts; clean does it on demand. Containers of runs in progress are kept, and so are those without
an owner label (an older iotbench's) or started from another host, unless --all.

With --kube CONTEXT, the same of the namespaces runs made on that cluster (iotbench run --kube),
with everything in them.

One line per container: its name, target, run, age, state and whose it is.
Exit status: 0 done (or nothing to do); 1 a container could not be removed.`,
		Example: `  iotbench clean
  iotbench clean --dry-run      # list what would be removed
  iotbench clean --all          # every iotbench container, those of runs in progress too
  iotbench clean --kube prod    # the namespaces of runs on the cluster of context prod`,
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
	f.StringVar(&o.Kube, "kube", "", "clean the namespaces of runs on the Kubernetes cluster of this kubeconfig `CONTEXT` instead")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "--kube: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	return cmd
}

func cleanRun(ctx context.Context, o *CleanOptions) error {
	engine := o.Engine
	switch {
	case o.Kube != "":
		engine = func(context.Context) (Cleaner, error) {
			l, err := kube.ConnectLeftovers(kube.Options{Context: o.Kube, Kubeconfig: o.Kubeconfig})
			if err != nil {
				return nil, flagErr("kube", o.Kube, err)
			}
			return l, nil
		}
	case o.Kubeconfig != "":
		return usagef("--kubeconfig belongs to --kube: give the context to clean")
	}
	e, err := engine(ctx)
	if err != nil {
		return err
	}
	defer e.Close()
	return clean(ctx, e, o.All, o.DryRun, o.Now(), o.Streams.Out)
}

// clean removes the containers of runs whose process is gone (every iotbench container with
// all; none with dryRun) and prints a line per container on out, its age told against now.
func clean(ctx context.Context, c Cleaner, all, dryRun bool, now time.Time, out io.Writer) error {
	found, err := c.RemoveLeftovers(ctx, container.Cleanup{Every: all, DryRun: dryRun})
	verb, done := "removed", "removed"
	if dryRun {
		verb, done = "would remove", "to remove"
	}
	for _, f := range found {
		fmt.Fprintf(out, "%s %s\n", verb, f.Describe(now))
	}
	images, namespaces := 0, 0
	for _, f := range found {
		switch {
		case f.Image:
			images++
		case f.Namespace:
			namespaces++
		}
	}
	switch {
	case namespaces > 0:
		fmt.Fprintf(out, "%d namespace(s) %s\n", namespaces, done)
	case images > 0:
		fmt.Fprintf(out, "%d container(s) and %d image(s) %s\n", len(found)-images, images, done)
	case len(found) > 0:
		fmt.Fprintf(out, "%d container(s) %s\n", len(found), done)
	case err == nil && all:
		fmt.Fprintln(out, "nothing of iotbench's")
	case err == nil:
		fmt.Fprintln(out, "nothing left by a run whose process is gone (--all for everything of iotbench's)")
	}
	if err != nil {
		return fmt.Errorf("%w\n(retry `iotbench clean`, or remove it: a container with `docker rm -f NAME`, a namespace with `kubectl delete namespace NAME`)", err)
	}
	return nil
}
