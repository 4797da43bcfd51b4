package main

import (
	"time"

	"github.com/iotbench/iotbench/internal/resources"
)

// disturbedAt is the share of a core, taken on the client's and the server's CPUs by other
// processes or by the hypervisor, above which a step measured the neighbours too: iotbench run's
// own bar (bench.Disturbed).
const disturbedAt = 0.05

// maxAttempts bounds how often an open-loop step that fails is run (see repeatWhy).
const maxAttempts = 3

// cpuWatch reads, around a step, what some CPUs spent on work that was neither the client's nor
// the server's.
type cpuWatch struct {
	cpus   []int
	before resources.HostCPU
	ok     bool
}

func watchCPUs(cpus ...int) cpuWatch {
	h, err := resources.ReadHostCPU(resources.CgroupRoot, resources.ProcStat, cpus)
	return cpuWatch{cpus: cpus, before: h, ok: err == nil}
}

// others is the cores that other processes (all but those whose CPU time is own) and the
// hypervisor (steal) took over wall; ok is false when the counters cannot be read (cgroup v2
// counts the whole machine only).
func (w cpuWatch) others(own, wall time.Duration) (float64, bool) {
	if !w.ok || wall <= 0 {
		return 0, false
	}
	now, err := resources.ReadHostCPU(resources.CgroupRoot, resources.ProcStat, w.cpus)
	if err != nil {
		return 0, false
	}
	// Read a few µs apart from the processes' own counters: never below zero.
	others := max(now.Busy-w.before.Busy-own, 0) + now.Steal - w.before.Steal
	return cores(others, wall), true
}
