package run

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// Cleaner removes iotbench's containers: container.Docker, or a fake in tests.
type Cleaner interface {
	RemoveLeftovers(ctx context.Context, c container.Cleanup) ([]container.Found, error)
	Close() error
}

var _ Cleaner = (*container.Docker)(nil)

// ConnectCleaner reaches the environment's engine to remove leftovers.
func ConnectCleaner(ctx context.Context) (Cleaner, error) { return container.Connect(ctx) }

// Clean removes the containers of runs whose process is gone (every iotbench container with
// all; none with dryRun) and prints a line per container on out, its age told against now.
func Clean(ctx context.Context, c Cleaner, all, dryRun bool, now time.Time, out io.Writer) error {
	found, err := c.RemoveLeftovers(ctx, container.Cleanup{Every: all, DryRun: dryRun})
	verb, done := "removed", "removed"
	if dryRun {
		verb, done = "would remove", "to remove"
	}
	for _, f := range found {
		fmt.Fprintf(out, "%s %s\n", verb, f.Describe(now))
	}
	images := 0
	for _, f := range found {
		if f.Image {
			images++
		}
	}
	switch {
	case images > 0:
		fmt.Fprintf(out, "%d container(s) and %d image(s) %s\n", len(found)-images, images, done)
	case len(found) > 0:
		fmt.Fprintf(out, "%d container(s) %s\n", len(found), done)
	case err == nil && all:
		fmt.Fprintln(out, "no iotbench container")
	case err == nil:
		fmt.Fprintln(out, "no container left by a run whose process is gone (--all for every iotbench container)")
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
		what := "a container left by an earlier run"
		if f.Image {
			what = "an image of an earlier build"
		}
		fmt.Fprintf(log, "removed %s: %s\n", what, f.Describe(now))
	}
	if err != nil {
		fmt.Fprintf(log, "warning: leftover containers of earlier runs: %v (`iotbench clean` retries)\n", err)
	}
}

// RemoveMine removes the containers this process started: the last resort of a second Ctrl-C.
func RemoveMine(ctx context.Context) ([]string, error) { return container.RemoveMine(ctx) }
