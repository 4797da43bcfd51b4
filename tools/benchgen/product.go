package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// productRow runs `iotbench run --url` at rate (answers holding contains, expected within expected)
// as a user runs it, pinned to the client CPU as the
// engine's steps are: the whole process (its recording, timelines, self-checks and Go runtime),
// not the engine alone. Its figures are its results row's, over the measured phase; the server's
// CPU is over the whole process's run (warm-up and start included).
func productRow(ctx context.Context, o options, srv server, url, contains string, rate int, expected time.Duration) (row, error) {
	dir, err := os.MkdirTemp("", "benchgen-run-")
	if err != nil {
		return row{}, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, "taskset", "-c", strconv.Itoa(o.clientCPU), o.iotbench, "run",
		"--url", url, "--contains", contains, "--rate", strconv.Itoa(rate), "--expected-latency", expected.String(),
		"--duration", o.step.String(), "--warmup", o.warmup.String(), "--calibration=false", "--out", dir)
	before, watch, began := srv.cpu(), watchCPUs(o.clientCPU, o.serverCPU), time.Now()
	out, runErr := cmd.CombinedOutput()
	wall := time.Since(began)
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return row{}, fmt.Errorf("iotbench run at %d rps: %w", rate, runErr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) != 1 {
		return row{}, fmt.Errorf("iotbench run at %d rps left %d results files (%v):\n%s", rate, len(files), runErr, out)
	}
	rows, _, err := results.ReadFile(files[0])
	if err != nil || len(rows) != 1 {
		return row{}, fmt.Errorf("iotbench run at %d rps: its results file %s: %d rows, %v", rate, files[0], len(rows), err)
	}
	res, server := rows[0], srv.cpu()-before
	own := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	others, known := watch.others(own+server, wall)
	r := row{
		client: "iotbench run", load: fmt.Sprintf("open %d", rate), requested: rate, isOpen: true, isProduct: true,
		rps: res.ThroughputRPS, achieved: res.AchievedRPS / float64(rate),
		clientCPU: res.GeneratorCPUCores, serverCPU: cores(server, wall),
		p50: res.LatencyP50, p99: res.LatencyP99, p999: res.LatencyP999, lagP99: res.SendLagP99, ownP99: res.GeneratorDelayP99,
		valid: "yes", others: others, othersKnown: known,
	}
	if !res.Valid {
		r.valid = "no: " + res.InvalidReason
	}
	return r, nil
}
