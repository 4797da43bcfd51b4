package run

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// leftovers are what removes iotbench's containers of runs whose process is gone: container.Docker,
// or a fake in tests.
type leftovers interface {
	RemoveLeftovers(ctx context.Context, c container.Cleanup) ([]container.Found, error)
}

// removeLeftovers removes, as a run starts, the containers of runs whose process is gone (a kill
// -9, a crash, a closed terminal): they would hold their targets' ports. One line each on log;
// a failure is a warning, since the run may not need that container's port.
func removeLeftovers(ctx context.Context, c leftovers, log io.Writer) {
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
