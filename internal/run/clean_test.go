package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// leftoverEngine lists one leftover it removes and one it cannot.
type leftoverEngine struct{ got *container.Cleanup }

func (e *leftoverEngine) RemoveLeftovers(_ context.Context, c container.Cleanup) ([]container.Found, error) {
	e.got = &c
	removed := container.Found{Name: "iotbench-fastify-4242-17", Target: "fastify", RunID: "20260304T093000Z-4242", PID: 4242,
		Created: time.Now().Add(-150 * time.Minute), State: "running", Owner: container.OwnerGone}
	return []container.Found{removed}, errors.New("removing container iotbench-koa-4242-18: engine says no")
}

func (e *leftoverEngine) Close() error { return nil }

// TestRunStartRemovesLeftovers: what a run says as it starts, for each container it removed, and
// a container it could not remove is a warning, not a failure.
func TestRunStartRemovesLeftovers(t *testing.T) {
	var log strings.Builder
	engine := &leftoverEngine{}
	removeLeftovers(context.Background(), engine, &log)
	if engine.got == nil || engine.got.Every || engine.got.DryRun {
		t.Fatalf("cleanup %+v, want leftovers only, removed", engine.got)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "removed a container left by an earlier run: iotbench-fastify-4242-17 (target fastify, run 20260304T093000Z-4242, ") ||
		!strings.Contains(lines[1], "warning: leftover containers of earlier runs: removing container iotbench-koa-4242-18: engine says no") {
		t.Errorf("log:\n%s", log.String())
	}
}
