package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/profile"
)

// profileStopSeconds is how long a profiled target has to exit on SIGTERM: the JVM writes its
// symbol map as it exits.
const profileStopSeconds = 10

// profile samples the search's target at rate, its maximum, once the search has ended: in a
// container of its own started with the runtimes' profiling options (profile.Env), so that no
// step that decided ran with them, warmed up and climbed to rate as a search's target is, then
// one step at rate with perf sampling its processes over the measured part. The profile goes to
// Runner.Profiled. A profile that cannot be taken is said in the log; the search's answer stands
// without it. The error is only cancellation.
func (s *searchRun) profile(ctx context.Context, rate int) error {
	r := s.r
	s.in.remove(ctx)
	s.in = nil
	fmt.Fprintf(r.Log, "  profile at %d rps, in a container of its own started with the runtimes' profiling options\n", rate)
	dir, err := os.MkdirTemp("", "iotbench-profile-")
	if err != nil {
		fmt.Fprintf(r.Log, "  no profile: %v\n", err)
		return nil
	}
	defer os.RemoveAll(dir)
	c := s.c
	c.Spec.Env = profile.Env(c.Spec.Env)
	if c.Spec.Tmp, err = profile.TmpDir(dir); err != nil {
		fmt.Fprintf(r.Log, "  no profile: %v\n", err)
		return nil
	}
	in, nl, err := r.start(ctx, s.p, c, s.images, true)
	if err != nil || nl != nil {
		if nl != nil {
			fmt.Fprintf(r.Log, "  no profile: %s\n", nl.reason())
		}
		return err
	}
	s.in = in
	target, ok := in.ctr.(container.Profiled)
	if !ok {
		fmt.Fprintf(r.Log, "  no profile: %s is not a container on this machine\n", s.c.Target)
		return nil
	}
	// Warmed up as the search's target was, then taken up to the rate as an even search is: a
	// fresh JVM met at its maximum would be profiled compiling.
	from, err := s.warmUp(ctx)
	if err != nil {
		return err
	}
	if _, err := r.climb(ctx, in, s.c, from, rate, s.m); err != nil {
		return err
	}
	ps, err := target.Processes(ctx)
	if err != nil {
		fmt.Fprintf(r.Log, "  no profile: %v\n", err)
		return nil
	}
	pids := make([]int, len(ps))
	for i, p := range ps {
		pids[i] = p.HostPID
	}
	cfg := in.config(stepConfig(s.c.Load, rate, s.m.Step))
	cfg.Warmup = s.m.StepWarmup
	var rec *profile.Recording
	var recErr error
	cfg.Measuring = func() { rec, recErr = profile.Start(pids, dir) }
	r.status().Phase("profile")
	res, err := r.load(ctx, cfg)
	var cost profile.Cost
	var stopErr error
	if rec != nil {
		cost, stopErr = rec.Stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(r.Log, "  no profile: the load failed: %v\n", err)
		return nil
	}
	if recErr = cmp.Or(recErr, stopErr); recErr != nil || rec == nil {
		fmt.Fprintf(r.Log, "  no profile: %v\n", recErr)
		return nil
	}
	// The JVM writes its symbol map as it exits; V8's is written already.
	if err := target.Stop(ctx, profileStopSeconds); err != nil {
		fmt.Fprintf(r.Log, "  %v: JIT frames may stay unnamed\n", err)
	}
	named, cleanup, err := profile.Symbols(c.Spec.Tmp, ps)
	if err != nil {
		fmt.Fprintf(r.Log, "  %v: JIT frames stay unnamed\n", err)
	}
	stacks, err := rec.Stacks(ctx)
	cleanup()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(r.Log, "  no profile: %v\n", err)
		return nil
	}
	p := profile.Record{Scenario: s.c.Scenario, Target: searchName(s.c), Search: s.number, Rate: rate,
		Achieved: res.AchievedRate(), P50: res.Latency.P50, P99: res.Latency.P99, Duration: res.Duration,
		Cost: cost, Processes: len(ps), Named: len(named), Stacks: stacks}
	fmt.Fprintf(r.Log, "  profile: %d samples over %s (sent %.0f rps, p99 %s), perf took %.3f cores of the generator's CPUs; most CPU in: %s\n",
		stacks.Total, res.Duration.Round(time.Millisecond), p.Achieved, p.P99.Round(100*time.Microsecond), cost.Cores(), topText(stacks, 3))
	if r.Profiled == nil {
		return nil
	}
	return r.Profiled(p)
}

// topText names a profile's n busiest functions by their own samples.
func topText(p flame.Profile, n int) string {
	var parts []string
	for _, sh := range p.Top(n) {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", flame.Label(sh.Frame), 100*sh.Self))
	}
	if len(parts) == 0 {
		return "no samples"
	}
	return strings.Join(parts, ", ")
}
