package experiment

import (
	"fmt"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bounds"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/stats"
)

// Design is what a run's load and its targets bound: the figures a run can show (bounds). Load
// fills it from the scenario file; a zero Design bounds nothing.
type Design struct {
	// Connections of a closed loop; Rate of an open one (a find-max search: neither).
	Connections, Rate int
	// Service is the least time a request takes: the scenario's check.min_latency.
	Service time.Duration
	// Pools are the targets' pools (scenario.Target.Pool), by name.
	Pools map[string]int
	// SingleThreaded are the targets that run their work on one thread.
	SingleThreaded map[string]bool
}

// designOf is the design of run r in sf.
func designOf(r *Run, sf *scenario.File) Design {
	d := Design{Pools: map[string]int{}, SingleThreaded: map[string]bool{}}
	for name, t := range sf.Targets {
		if t.Pool > 0 {
			d.Pools[name] = t.Pool
		}
		if t.SingleThreaded {
			d.SingleThreaded[name] = true
		}
	}
	s := sf.Scenarios[r.Scenario]
	if s == nil || s.Mixed() || r.FindMax != nil {
		// A mix's requests wait differently, and a search loads to capacity: no one bound.
		return d
	}
	d.Service = s.Check.MinLatency
	switch {
	case r.Connections > 0:
		d.Connections = r.Connections
	case r.Rate > 0:
		d.Rate = r.Rate
	case s.Load.Connections > 0:
		d.Connections = s.Load.Connections
	default:
		d.Rate = s.Load.Rate
	}
	return d
}

// capacity is what a throughput figure of the run says of its target's capacity: its valid
// trials' median, under the lowest of the run's bounds (the design's, the target's pool, its CPUs).
func (d Design) capacity(f Figure, rows []results.Row) bounds.Capacity {
	design := bounds.Connections(d.Connections, d.Service)
	if d.Rate > 0 {
		design = bounds.Offered(float64(d.Rate))
	}
	return bounds.Capacity{Measured: validMedian(f), Design: design,
		Own: bounds.Lowest(bounds.Pool(d.Pools[f.Target], d.Service), cpuBound(f.Target, rows))}
}

// cpuBound is the target's CPUs over its CPU a request, the median of its trials' over the
// trials a verdict rests on: each trial's throughput is at most its own bound, so the figure's
// median is at most this one.
func cpuBound(target string, rows []results.Row) bounds.Bound {
	var rates []float64
	var per []float64
	cpus := 0
	for _, r := range rows {
		if r.Target != target || !r.Valid || r.Distrust() != "" || disturbed(r) || r.CPUPerRequest <= 0 {
			continue
		}
		set, err := cpuset.Parse(r.CPUSet, cpuset.MaxCPUs)
		if err != nil || len(set) == 0 {
			continue
		}
		cpus = len(set)
		rates = append(rates, float64(cpus)/r.CPUPerRequest.Seconds())
		per = append(per, float64(r.CPUPerRequest))
	}
	if len(rates) == 0 {
		return bounds.Unbounded
	}
	b := bounds.CPU(float64(cpus), time.Duration(stats.Summarize(per).Median))
	b.Rate = stats.Summarize(rates).Median
	return b
}

// capacities are the capacities of figs by target when the claim is on throughput, the only
// figure a design bounds; nil otherwise.
func (d Design) capacities(m *Metric, figs []Figure, rows []results.Row) map[string]bounds.Capacity {
	if m.Key != "throughput_rps" {
		return nil
	}
	out := map[string]bounds.Capacity{}
	for _, f := range figs {
		if f.Valid() > 0 {
			out[f.Target] = d.capacity(f, rows)
		}
	}
	return out
}

// boundsText is each figure's ceiling, in the order of figs: "a ≤ 5,120 rps (256 connections ÷
// 50 ms, the run's), b ≤ 4,000 rps (200 threads ÷ 50 ms, its own)".
func boundsText(caps map[string]bounds.Capacity, figs []Figure) string {
	var parts []string
	for _, f := range figs {
		c, ok := caps[f.Target]
		if !ok || !c.Ceiling().Known() {
			continue
		}
		whose := "its own"
		if c.Ceiling().Kind == bounds.Design {
			whose = "the run's design"
		}
		if c.Held() {
			whose += ", which held it"
		}
		parts = append(parts, fmt.Sprintf("%s ≤ %s rps (%s: %s)", f.Target, bounds.Rate(c.Ceiling().Rate), c.Ceiling().Why, whose))
	}
	return strings.Join(parts, ", ")
}

// held is the first of targets whose figure the run's design held, and its ceiling; "" if none.
func held(caps map[string]bounds.Capacity, targets ...string) (string, bounds.Bound) {
	for _, t := range targets {
		if c, ok := caps[t]; ok && c.Held() {
			return t, c.Design
		}
	}
	return "", bounds.Bound{}
}

// capacityRun says which run decides a capacity the run's design held: one that loads each
// target to its capacity.
func (e *Experiment) capacityRun(r *Run, targets []string, d Design) string {
	more := ""
	if d.Connections > 0 {
		more = fmt.Sprintf(", or this run at more connections than %d, so that each target's own pool or CPUs bound it before the connections do", d.Connections)
	}
	start := d.Rate
	if d.Connections > 0 && d.Service > 0 {
		start = int(bounds.Connections(d.Connections, d.Service).Rate)
	}
	from := ""
	if start > 0 {
		from = fmt.Sprintf(" --rate %d", start) // where the search starts: the design's bound
	}
	return fmt.Sprintf("a run that loads each target to its capacity: `iotbench run --scenario %s --targets %s --find-max%s`%s",
		r.Scenario, strings.Join(targets, ","), from, more)
}

// oneCPU is the condition of a run that compares a runtime of several threads with a
// single-threaded one on fewer target CPUs than the source had, and what it changes; "" when it
// does not (the source's CPUs unknown, targets alike, or as many CPUs).
func (e *Experiment) oneCPU(r *Run, figs []Figure, rows []results.Row) (cond, what string) {
	if e.SourceCPUs == 0 {
		return "", ""
	}
	cpus := 0
	for _, row := range rows {
		if set, err := cpuset.Parse(row.CPUSet, cpuset.MaxCPUs); err == nil && row.Loaded() && row.CPUSet != "" {
			cpus = len(set)
			break
		}
	}
	if cpus == 0 || cpus >= e.SourceCPUs {
		return "", ""
	}
	var several, one []string
	for _, f := range figs {
		if f.Loaded == 0 {
			continue
		}
		if r.Design.SingleThreaded[f.Target] {
			one = append(one, f.Target)
		} else {
			several = append(several, f.Target)
		}
	}
	if len(several) == 0 || len(one) == 0 {
		return "", ""
	}
	cond = fmt.Sprintf("on %d target CPU%s; the source had %d", cpus, map[bool]string{true: "s"}[cpus > 1], e.SourceCPUs)
	what = fmt.Sprintf("A condition, not a finding: %s. %s run%s several threads (request threads or a pool, the JVM's JIT and GC) on it, one after another where the source ran them side by side; %s run%s one thread, which uses one CPU wherever it runs. On the source's %d CPUs %s could use up to %d× what %s used; this run decides the comparison CPU for CPU, not on the source's host",
		cond, strings.Join(several, ", "), verbS(several), strings.Join(one, ", "), verbS(one), e.SourceCPUs, strings.Join(several, ", "), e.SourceCPUs/cpus, strings.Join(one, ", "))
	return cond, what
}

// verbS is the s of a verb whose subject is names: "runs" for one, "run" for several.
func verbS(names []string) string {
	if len(names) == 1 {
		return "s"
	}
	return ""
}
