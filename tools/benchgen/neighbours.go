package main

import (
	"time"

	"github.com/iotbench/iotbench/internal/resources"
)

// maxAttempts bounds how often an open-loop step that fails is run (see repeatWhy).
const maxAttempts = 3

// cpuWatch reads, around a step, what the client's and the server's CPUs spent on work that was
// neither's; nil when their counters cannot be read (cgroup v2 counts the whole machine only).
type cpuWatch struct{ w *resources.HostWatch }

func watchCPUs(cpus ...int) cpuWatch {
	w, err := resources.WatchHost(resources.CgroupRoot, resources.ProcStat, cpus)
	if err != nil {
		return cpuWatch{}
	}
	return cpuWatch{&w}
}

// others is the cores that other processes (all but those whose CPU time is own) and the
// hypervisor (steal) took over wall; ok is false when it cannot be told.
func (c cpuWatch) others(own, wall time.Duration) (float64, bool) {
	if c.w == nil || wall <= 0 {
		return 0, false
	}
	others, steal, err := c.w.Others(own)
	if err != nil {
		return 0, false
	}
	return cores(others+steal, wall), true
}
