// Package bench executes a plan: it builds the images, then for each cell starts a fresh target,
// verifies it, loads it, records the row and removes the target, whatever happens.
package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/report"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/verify"
)

// Meta is what every row records about the machine and iotbench.
type Meta struct {
	Version, Commit, HostCPU, Kernel, DockerVersion string
}

// Runner runs plans.
type Runner struct {
	Lifecycle container.Lifecycle
	// Log receives progress: one line per step, a line every few seconds during load.
	Log io.Writer
	// Record is called with each row as soon as its cell is done.
	Record func(results.Row) error
	Meta   Meta
	// ProgressEvery is how often load progress is printed; 0 means 5 s.
	ProgressEvery time.Duration
	// Seed shuffles the order of the targets within each round of trials (see ordered); every
	// row records it, so that the order can be replayed.
	Seed int64
}

// Run measures every cell of p and returns the rows. It stops early only when ctx is cancelled
// or a row cannot be recorded; a cell that fails is recorded as invalid and the run goes on.
func (r *Runner) Run(ctx context.Context, p *plan.Plan) ([]results.Row, error) {
	images, err := r.build(ctx, p)
	if err != nil {
		return nil, err
	}
	var rows []results.Row
	for i, c := range ordered(p.Cells, r.Seed) {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		fmt.Fprintf(r.Log, "[%d/%d] %s · %s · trial %d\n", i+1, len(p.Cells), c.Scenario, c.Target, c.Trial)
		row, err := r.cell(ctx, p, c, images[c.Build.Tag()])
		if err != nil {
			return rows, err
		}
		if err := r.Record(row); err != nil {
			return rows, fmt.Errorf("recording %s trial %d: %w", c.Target, c.Trial, err)
		}
		rows = append(rows, row)
		if row.Valid {
			fmt.Fprintf(r.Log, "  %.0f rps ok, success %.2f%%, p50 %s p99 %s, generator delay p99 %s\n", row.ThroughputRPS, 100*row.SuccessRatio, report.Millis(row.LatencyP50), report.Millis(row.LatencyP99), report.Millis(row.GeneratorDelayP99))
		} else {
			fmt.Fprintf(r.Log, "  INVALID: %s\n", row.InvalidReason)
		}
	}
	return rows, nil
}

// build builds p's images and returns their ids by tag.
func (r *Runner) build(ctx context.Context, p *plan.Plan) (map[string]string, error) {
	images := map[string]string{}
	for i, b := range p.Builds {
		fmt.Fprintf(r.Log, "build %d/%d: %s from %s\n", i+1, len(p.Builds), b.Tag(), b.Context)
		begin := time.Now()
		id, err := r.Lifecycle.Build(ctx, b, &stepLines{w: r.Log})
		if err != nil {
			return nil, err
		}
		images[b.Tag()] = id
		fmt.Fprintf(r.Log, "build %d/%d: done in %s\n", i+1, len(p.Builds), time.Since(begin).Round(100*time.Millisecond))
	}
	return images, nil
}

// Verify starts each target of p in turn and checks it against the contract. It returns the
// names of the targets that failed.
func (r *Runner) Verify(ctx context.Context, p *plan.Plan, checks []verify.Check) ([]string, error) {
	images, err := r.build(ctx, p)
	if err != nil {
		return nil, err
	}
	var failed []string
	for i, c := range p.Cells {
		fmt.Fprintf(r.Log, "[%d/%d] verifying %s\n", i+1, len(p.Cells), c.Target)
		spec := c.Spec
		spec.Image = images[c.Build.Tag()]
		inst, err := r.Lifecycle.Start(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				return failed, ctx.Err()
			}
			fmt.Fprintf(r.Log, "  FAIL start: %v\n", err)
			failed = append(failed, c.Target)
			continue
		}
		ok := true
		for _, res := range verify.Run(ctx, inst.URL(), checks) {
			if res.Err != nil {
				ok = false
				fmt.Fprintf(r.Log, "  FAIL %s: %v\n", res.Check, res.Err)
			} else {
				fmt.Fprintf(r.Log, "  ok   %s\n", res.Check)
			}
		}
		if !ok {
			failed = append(failed, c.Target)
			fmt.Fprintf(r.Log, "  last lines of the target's log:\n%s\n", inst.Logs(context.WithoutCancel(ctx), 20))
		}
		if err := inst.Remove(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(r.Log, "  removing the %s container: %v\n", c.Target, err)
		}
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
	}
	return failed, nil
}

// newRow is c's row before any measurement: its settings and where it runs.
func (r *Runner) newRow(p *plan.Plan, c plan.Cell, image string) results.Row {
	row := results.Row{
		Scenario: c.Scenario, Target: c.Target, Trial: c.Trial, Mode: string(c.Load.Model.Mode()),
		RequestedRPS: c.Load.Model.Rate, Connections: c.Load.Model.InFlightLimit(),
		Duration: c.Load.Duration, Warmup: c.Load.Warmup,
		CPUSet: c.Spec.CPUSet, Memory: p.Memory, ImageID: image,
		Version: r.Meta.Version, GitCommit: r.Meta.Commit, HostCPU: r.Meta.HostCPU,
		Kernel: r.Meta.Kernel, DockerVersion: r.Meta.DockerVersion, StartedAt: time.Now(),
		Seed: r.Seed, PayloadSHA: payloadSHA(c),
	}
	row.GeneratorCPUSet = cpuset.Format(p.GeneratorCPUs)
	return row
}

// cell measures one cell. Errors are returned only for cancellation; failures become invalid rows.
func (r *Runner) cell(ctx context.Context, p *plan.Plan, c plan.Cell, image string) (results.Row, error) {
	row := r.newRow(p, c, image)
	fail := func(reason string) (results.Row, error) {
		row.Valid, row.InvalidReason = false, reason
		return row, nil
	}

	spec := c.Spec
	spec.Image = image
	begin := time.Now()
	inst, err := r.Lifecycle.Start(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		fmt.Fprintf(r.Log, "  %v\n", err)
		return fail("start failed: " + firstLine(err.Error()))
	}
	// Removal must happen even when ctx is cancelled (Ctrl-C).
	defer func() {
		if err := inst.Remove(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(r.Log, "  removing the %s container: %v\n", c.Target, err)
		}
	}()
	m := observe(&row, inst, c.Spec, p.GeneratorCPUs)
	defer m.discard()
	fmt.Fprintf(r.Log, "  healthy in %s; warm-up %s, then %s measured\n", time.Since(begin).Round(100*time.Millisecond), c.Load.Warmup, c.Load.Duration)

	cfg := c.Load
	cfg.Request.URL = inst.URL() + c.Path
	check := scenarioCheck(p)
	if err := verifyCell(ctx, inst.URL(), cfg, check); err != nil {
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		fmt.Fprintf(r.Log, "  last lines of the target's log:\n%s\n", inst.Logs(context.WithoutCancel(ctx), 20))
		return fail(results.VerifyFailed + ": " + err.Error())
	}
	// Stored rows are counted over the measured phase alone: the warm-up's requests have all
	// finished when it starts.
	rows := countRows(check.StoresRows, inst.URL())
	cfg.Measuring = func() {
		rows.start(ctx)
		m.start()
	}
	every := r.ProgressEvery
	if every == 0 {
		every = 5 * time.Second
	}
	var last time.Duration
	cfg.Progress = func(pr load.Progress) {
		if pr.Elapsed-last >= every {
			last = pr.Elapsed
			fmt.Fprintf(r.Log, "  %s/%s: %d done, %d failed\n", pr.Elapsed.Truncate(time.Second), pr.Duration, pr.Completed, pr.Failures)
		}
	}
	row.StartedAt = time.Now().Add(cfg.Warmup)
	res, err := load.Run(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return row, ctx.Err()
		}
		return fail("load failed: " + err.Error())
	}
	m.record(&row, res)
	for kind, n := range res.ErrorKinds {
		fmt.Fprintf(r.Log, "  %d × %s\n", n, kind)
	}
	if err := rows.check(ctx, res.Successes, res.Errors); err != nil {
		invalidate(&row, "stored rows: "+err.Error())
	}
	if !row.Valid && res.SuccessRatio() < load.MinSuccessRatio {
		fmt.Fprintf(r.Log, "  last lines of the target's log:\n%s\n", inst.Logs(context.WithoutCancel(ctx), 20))
	}
	return row, nil
}

// scenarioCheck is the check of p's scenario; none for a plan without one.
func scenarioCheck(p *plan.Plan) scenario.Check {
	if p.Scenario == nil {
		return scenario.Check{}
	}
	return p.Scenario.Check
}

// verifyCell sends the scenario's request a few times before any load and checks the answers as
// the scenario says; when the scenario stores rows, /stats must have grown by one per request.
func verifyCell(ctx context.Context, baseURL string, cfg load.Config, check scenario.Check) error {
	expect := verify.Expect{Check: cfg.Check, ContentType: check.ContentType, JSONFields: check.JSONFields, MinLatency: check.MinLatency}
	rows := countRows(check.StoresRows, baseURL)
	if err := rows.start(ctx); err != nil {
		return err
	}
	if err := verify.Request(ctx, cfg.Request, expect, cfg.Timeout); err != nil {
		return err
	}
	return rows.check(ctx, verify.Tries, 0)
}

// storedRows counts the rows a target stores over a measured phase; nil when the scenario stores none.
type storedRows struct {
	url    string
	before int64
	err    error
}

func countRows(stores bool, baseURL string) *storedRows {
	if !stores {
		return nil
	}
	return &storedRows{url: baseURL}
}

// start reads /stats as the measured phase begins; check returns its error too.
func (s *storedRows) start(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.before, s.err = verify.StoredRows(ctx, s.url)
	return s.err
}

// check reads /stats after the measured phase and holds the growth against its writes: at least
// successes, at most successes + failures.
func (s *storedRows) check(ctx context.Context, successes, failures int64) error {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	after, err := verify.StoredRows(ctx, s.url)
	if err != nil {
		return err
	}
	return verify.RowsGrew(s.before, after, successes, failures)
}

func fill(row *results.Row, res load.Result) {
	row.Mode = string(res.Mode)
	row.Connections = res.InFlightLimit
	row.PeakInFlight = res.PeakInFlight
	row.AchievedRPS = res.AchievedRate()
	row.ThroughputRPS = res.Throughput()
	row.Requests, row.Successes, row.Errors, row.Timeouts = res.Requests, res.Successes, res.Errors, res.Timeouts
	row.SuccessRatio = res.SuccessRatio()
	row.StatusCodes = load.FormatCodes(res.Codes)
	l := res.Latency
	row.LatencyMean, row.LatencyP50, row.LatencyP90, row.LatencyP99, row.LatencyP999, row.LatencyMax = l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max
	row.SendLagP99, row.SendLagMax = res.SendLag.P99, res.SendLag.Max
	row.GeneratorDelayP99 = res.OwnDelay.P99
	row.Valid, row.InvalidReason = res.Valid, res.InvalidReason
}

// invalidate marks row invalid for reason, after any reason it already has.
func invalidate(row *results.Row, reason string) {
	if !row.Valid && row.InvalidReason != "" {
		reason = row.InvalidReason + "; " + reason
	}
	row.Valid, row.InvalidReason = false, reason
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// stepLines passes on the "Step n/m" lines of a classic build that do work, so a long build shows
// progress and a cached one stays quiet.
type stepLines struct {
	w       io.Writer
	part    string
	pending string
}

func (s *stepLines) Write(p []byte) (int, error) {
	text := s.part + string(p)
	lines := strings.Split(text, "\n")
	s.part = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "Step "):
			s.pending = l
		case s.pending != "" && strings.Contains(l, "Using cache"):
			s.pending = ""
		case s.pending != "" && strings.HasPrefix(l, " ---> "):
			fmt.Fprintf(s.w, "  %s\n", s.pending)
			s.pending = ""
		}
	}
	return len(p), nil
}
