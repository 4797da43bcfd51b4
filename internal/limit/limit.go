// Package limit names what limited a target in a measured phase, by rules on what iotbench
// measured of it: its cgroup's CPU, memory and pressure (PSI), its database server's CPU, the generator's own
// share (by the row's kind of fault: the generator's rule is the engine's, not a second one), the
// JIT's compile time. Each rule names its threshold; a phase none of them explains is "not found",
// with what was ruled out, so that a maximum comes with what a user can act on, or with the
// honest statement that iotbench could not see it. The rules know nothing of files: results
// gives them a row's figures.
package limit

import (
	"fmt"
	"strings"
	"time"

	"github.com/docker/go-units"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/signals"
)

// Kind is what limited a phase.
type Kind string

const (
	// None: the phase was never loaded; nothing was measured.
	None Kind = ""
	// Generator: the generator's own share explains the phase (its kind of fault blames it).
	Generator Kind = "generator"
	// CPU: the target used its CPUs to BusyShare or more.
	CPU Kind = "cpu"
	// DatabaseCPU: the database server used its CPUs to BusyShare or more.
	DatabaseCPU Kind = "database-cpu"
	// Memory: the target's memory peaked at MemoryShare of its limit or more.
	Memory Kind = "memory"
	// Died: the target died during the phase (out of memory, an exit: the row's reason says).
	Died Kind = "died"
	// Threads: a pool of threads (the server's request threads, virtual threads' carriers, an
	// executor) was busy to PoolBusyShare of its size or more.
	Threads Kind = "threads"
	// Pool: a pool of connections or workers was busy to PoolBusyShare of its size or more.
	Pool Kind = "pool"
	// EventLoop: the event loop was busy LoopBusyShare of the phase or more.
	EventLoop Kind = "event-loop"
	// GC: the collector paused the target GCShare of the phase or more.
	GC Kind = "gc"
	// JIT: the target's JIT compiled through half the phase or more (still warming up).
	JIT Kind = "jit"
	// Unavailable: a service iotbench did not start: none of its signals can be read.
	Unavailable Kind = "unavailable"
	// NotFound: none of the rules explains the phase.
	NotFound Kind = "not-found"
)

// The rules' thresholds.
const (
	// BusyShare of a cpuset's time used over the phase: a runtime at it has no CPU left to give.
	BusyShare = 0.90
	// MemoryShare of the memory limit at peak: the next allocations are the kernel's to refuse.
	MemoryShare = 0.90
	// CPUWaitShare of the phase in which some task of the target waited for a CPU (PSI's "some"):
	// under BusyShare on average, the CPUs were still short in bursts that long.
	CPUWaitShare = 0.20
	// MemoryStallShare of the phase in which some task stalled on memory (reclaim, swap-in): the
	// target was short of memory below its peak's share.
	MemoryStallShare = 0.10
	// PoolBusyShare of a pool's size busy on average over the phase's reads: the work that came
	// while it was full waited for it. Or PoolQueuedShare of its size busy on average with some
	// work waiting for it at PoolWaitedShare of the reads or more: a full pool reads below its
	// size, each connection handed from one holder to the next is free for a moment.
	PoolBusyShare   = 0.90
	PoolQueuedShare = 0.75
	PoolWaitedShare = 0.5
	// LoopBusyShare of the phase the event loop spent running callbacks: what came meanwhile
	// waited for the loop, whatever the CPU (a loop waits on native code, or runs on a CPU
	// it shares).
	LoopBusyShare = 0.90
	// GCShare of the phase the collector held the target's threads.
	GCShare = 0.10
)

// Figures are what the rules read of a phase.
type Figures struct {
	Loaded bool
	Fault  fault.Kind
	// TargetCPUs is the size of the target's cpuset (0: not started by iotbench); CPUCores the
	// cores it used over the phase.
	TargetCPUs int
	CPUCores   float64
	// Memory is the target's limit as the row gives it ("1g"); MemoryPeak its peak, bytes.
	Memory     string
	MemoryPeak int64
	// DBCPUs and DBCPUCores are the database server's cpuset size and cores used; 0: none.
	// DBPressureRead says its cgroup gave the share of the phase in which some of its tasks
	// waited for a CPU (DBCPUPressure).
	DBCPUs         int
	DBCPUCores     float64
	DBPressureRead bool
	DBCPUPressure  float64
	// GeneratorShare is the generator's CPU as a share of its CPUs.
	GeneratorShare float64
	// PressureRead says the target's cgroup gave its pressure: the shares of the phase in which
	// some task waited for a CPU (CPUPressure) and stalled on memory (MemoryPressure).
	PressureRead                bool
	CPUPressure, MemoryPressure float64
	// StillWarming: the JIT compiled through half the phase or more; JITBusy, how long.
	StillWarming bool
	JITBusy      time.Duration
	Duration     time.Duration
	// Signals is what the target's runtime told of the phase (nil: not read, SignalsNote why).
	Signals     *signals.Phase
	SignalsNote string
}

// Limit is what limited a phase, with the figures that show it and what was ruled out.
type Limit struct {
	Kind     Kind
	Evidence string
	RuledOut []string
}

// String is the limit in one line: "CPU: 0.97 of its 1 CPU", "not found (ruled out: …)".
func (l Limit) String() string {
	if len(l.RuledOut) == 0 {
		return l.Evidence
	}
	return l.Evidence + " (ruled out: " + strings.Join(l.RuledOut, "; ") + ")"
}

// Of applies the rules to f, in order: the generator, a service without signals, a target that
// died, the target's CPU, its runtime's signals (a pool full, the event loop busy, GC), its CPU
// in bursts, the database server's CPU, memory, the JIT; the first that holds names the limit. A
// pool full or a busy loop comes before CPU in bursts: a pool that is full queues the work
// whatever the CPU, and its threads' waking makes the bursts.
func Of(f Figures) Limit {
	if !f.Loaded {
		return Limit{}
	}
	var out []string
	if f.Fault.Generator() {
		return Limit{Kind: Generator, Evidence: fmt.Sprintf("the generator: %s, at %.2f of its CPUs", f.Fault, f.GeneratorShare)}
	}
	out = append(out, fmt.Sprintf("the generator (%.2f of its CPUs, its own delay within bounds)", f.GeneratorShare))
	if f.TargetCPUs == 0 {
		return Limit{Kind: Unavailable, Evidence: "signals unavailable: a service iotbench did not start has no cgroup of its to read", RuledOut: out}
	}
	if f.Fault == fault.TargetDied {
		return Limit{Kind: Died, Evidence: "the target died (its reason says how: out of memory, an exit)", RuledOut: out}
	}
	share := f.CPUCores / float64(f.TargetCPUs)
	if share >= BusyShare {
		return Limit{Kind: CPU, Evidence: fmt.Sprintf("CPU: %.2f of its %s", share, cpus(f.TargetCPUs)), RuledOut: out}
	}
	if l, found := runtime(f.Signals, share, &out); found {
		return l
	}
	if f.PressureRead && f.CPUPressure >= CPUWaitShare {
		return Limit{Kind: CPU, Evidence: fmt.Sprintf("CPU in bursts: %.2f of its %s on average, but some task waited for it %.0f%% of the phase", share, cpus(f.TargetCPUs), 100*f.CPUPressure), RuledOut: out}
	}
	out = append(out, fmt.Sprintf("CPU (%.2f of its %s, under %.2f%s)", share, cpus(f.TargetCPUs), BusyShare, waited(f)))
	if f.DBCPUs > 0 {
		share := f.DBCPUCores / float64(f.DBCPUs)
		if share >= BusyShare {
			return Limit{Kind: DatabaseCPU, Evidence: fmt.Sprintf("the database server's CPU: %.2f of its %s", share, cpus(f.DBCPUs)), RuledOut: out}
		}
		if f.DBPressureRead && f.DBCPUPressure >= CPUWaitShare {
			return Limit{Kind: DatabaseCPU, Evidence: fmt.Sprintf("the database server's CPU in bursts: %.2f of its %s on average, but some task waited for it %.0f%% of the phase", share, cpus(f.DBCPUs), 100*f.DBCPUPressure), RuledOut: out}
		}
		out = append(out, fmt.Sprintf("the database server's CPU (%.2f of its %s)", share, cpus(f.DBCPUs)))
	}
	if limit, err := units.RAMInBytes(f.Memory); err == nil && limit > 0 && f.MemoryPeak > 0 {
		share := float64(f.MemoryPeak) / float64(limit)
		if share >= MemoryShare {
			return Limit{Kind: Memory, Evidence: fmt.Sprintf("memory: peak %.0f%% of its %s limit", 100*share, f.Memory), RuledOut: out}
		}
		out = append(out, fmt.Sprintf("memory (peak %.0f%% of its %s limit)", 100*share, f.Memory))
	}
	if f.PressureRead && f.MemoryPressure >= MemoryStallShare {
		return Limit{Kind: Memory, Evidence: fmt.Sprintf("memory: some task stalled on it %.0f%% of the phase", 100*f.MemoryPressure), RuledOut: out}
	}
	if f.PressureRead {
		out = append(out, fmt.Sprintf("memory stalls (%.0f%% of the phase)", 100*f.MemoryPressure))
	}
	if f.StillWarming {
		return Limit{Kind: JIT, Evidence: fmt.Sprintf("the JIT: compiling for %s of the %s phase", f.JITBusy.Round(100*time.Millisecond), f.Duration), RuledOut: out}
	}
	if f.Signals == nil {
		note := f.SignalsNote
		if note == "" {
			note = "not read"
		}
		return Limit{Kind: NotFound, Evidence: "not found; the runtime's own signals (GC, threads, event loop, pools): " + note, RuledOut: out}
	}
	return Limit{Kind: NotFound, Evidence: "not found", RuledOut: out}
}

// runtime applies the rules on the runtime's own signals, in order: a pool full, the event loop
// busy, the collector; what they rule out joins out. cpu is the target's share of its CPUs.
func runtime(s *signals.Phase, cpu float64, out *[]string) (Limit, bool) {
	if s == nil {
		return Limit{}, false
	}
	for _, p := range s.Pools {
		full := p.BusyMean >= PoolBusyShare*float64(p.Size) ||
			p.WaitingRead && p.Waited >= PoolWaitedShare && p.BusyMean >= PoolQueuedShare*float64(p.Size)
		if !full {
			continue
		}
		kind, what := Pool, "the pool"
		if p.Kind == "threads" {
			kind, what = Threads, "threads"
		}
		return Limit{Kind: kind, Evidence: fmt.Sprintf("%s: %s, with CPU at %.2f", what, poolUse(p), cpu), RuledOut: *out}, true
	}
	if busiest, ok := s.Busiest(); ok {
		*out = append(*out, "pools (busiest: "+poolUse(busiest)+")")
	}
	if s.LoopRead && s.Utilization >= LoopBusyShare {
		return Limit{Kind: EventLoop, Evidence: fmt.Sprintf("the event loop: busy %.2f of the phase with CPU at %.2f%s", s.Utilization, cpu, delay(s)), RuledOut: *out}, true
	}
	if s.LoopRead {
		*out = append(*out, fmt.Sprintf("the event loop (busy %.2f of the phase%s)", s.Utilization, delay(s)))
	}
	if s.GCRead && s.GCShare >= GCShare {
		return Limit{Kind: GC, Evidence: fmt.Sprintf("GC: paused the target %.0f%% of the phase, pauses up to %s", 100*s.GCShare, ms(s.GCMaxPause)), RuledOut: *out}, true
	}
	if s.GCRead {
		*out = append(*out, fmt.Sprintf("GC (%.0f%% of the phase, pauses up to %s)", 100*s.GCShare, ms(s.GCMaxPause)))
	}
	return Limit{}, false
}

// poolUse is a pool over the phase in words: "hikari 10 of 10 busy (9.6 on average), work
// waiting at 80% of the reads, 140 at most", or "…, none waiting".
func poolUse(p signals.PoolUse) string {
	text := fmt.Sprintf("%s %d of %d busy (%.1f on average)", p.Name, p.BusyMax, p.Size, p.BusyMean)
	switch {
	case !p.WaitingRead:
	case p.WaitingMax == 0:
		text += ", none waiting"
	case p.Waited < 0.005:
		text += fmt.Sprintf(", work waiting at under 1%% of the reads, %d at most", p.WaitingMax)
	default:
		text += fmt.Sprintf(", work waiting at %.0f%% of the reads, %d at most", 100*p.Waited, p.WaitingMax)
	}
	return text
}

func delay(s *signals.Phase) string {
	if !s.DelayRead {
		return ""
	}
	return fmt.Sprintf("; delay p99 up to %s", ms(s.Delay))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// waited is what the CPU's pressure adds to its ruled-out line: how long some task waited for
// it, or that the host keeps no pressure for the target's cgroup.
func waited(f Figures) string {
	if !f.PressureRead {
		return "; pressure not read"
	}
	return fmt.Sprintf("; some task waited for it %.0f%% of the phase", 100*f.CPUPressure)
}

func cpus(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return fmt.Sprintf("%d CPUs", n)
}
