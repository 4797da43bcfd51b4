// Package resources measures what a target container uses over a phase, from the container's own
// cgroup (not the host's, not the generator's): CPU time, and memory in use without page cache.
//
// Pressure (PSI) is read where the kernel keeps it for the container: the cgroup's own directory on
// cgroup v2, the unified hierarchy beside the v1 controllers on a hybrid host
// (/sys/fs/cgroup/unified/...); without either, the usage says it was not read.
//
// It reads the cgroup files directly rather than Docker's stats endpoint: a file read costs
// microseconds and no daemon work, while on this machine's engine (20.10) a one-shot stats call
// took 80 ms the first time and ~1 s after (the engine collects once a second), too slow to sample
// memory every 200 ms. Both cgroup versions are read; the container is found by its init process.
package resources

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iotbench/iotbench/internal/periodic"
)

// Sample is one reading of a container's counters.
type Sample struct {
	At time.Time
	// CPU is the CPU time all the container's processes used since it started.
	CPU time.Duration
	// Memory is the memory in use, page cache excluded, as `docker stats` computes it: usage minus
	// inactive file pages (cache the kernel can drop at once).
	Memory uint64
	// CPUStall and MemoryStall are the time since the cgroup began in which some of its tasks
	// waited for a CPU, and for memory (PSI's "some" totals); Stalls says they were read.
	CPUStall, MemoryStall time.Duration
	Stalls                bool
}

// Source reads a container's counters.
type Source interface {
	Sample() (Sample, error)
}

// Cgroup reads one container's cgroup files.
type Cgroup struct {
	v2      bool
	cpuDir  string // v1: the cpuacct controller's directory; v2: the cgroup's
	memDir  string
	statKey string // the inactive file pages in memory.stat
	// psiDir holds cpu.pressure and memory.pressure; empty where the kernel keeps none.
	psiDir string
}

// CgroupOf finds the cgroup of process pid (a container's init process): root is where the
// cgroup filesystems are mounted (/sys/fs/cgroup), proc the proc filesystem (/proc).
func CgroupOf(root, proc string, pid int) (*Cgroup, error) {
	data, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return nil, fmt.Errorf("finding the container's cgroup: %w", err)
	}
	// Line format: hierarchy-id:controllers:path; v2's single hierarchy has id 0 and no controllers.
	paths := map[string]string{}
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	var c *Cgroup
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		dir := filepath.Join(root, paths[""])
		c = &Cgroup{v2: true, cpuDir: dir, memDir: dir, statKey: "inactive_file", psiDir: dir}
	} else {
		cpu, okCPU := paths["cpuacct"]
		mem, okMem := paths["memory"]
		if !okCPU || !okMem {
			return nil, fmt.Errorf("process %d has no cpuacct or memory cgroup (%s): cgroup v1 without those controllers cannot be measured", pid, bytes.TrimSpace(data))
		}
		c = &Cgroup{cpuDir: filepath.Join(root, "cpuacct", cpu), memDir: filepath.Join(root, "memory", mem), statKey: "total_inactive_file"}
		if unified, ok := paths[""]; ok {
			c.psiDir = filepath.Join(root, "unified", unified)
		}
	}
	if _, err := os.Stat(filepath.Join(c.psiDir, "cpu.pressure")); c.psiDir == "" || err != nil {
		c.psiDir = ""
	}
	if _, err := c.Sample(); err != nil {
		return nil, err
	}
	return c, nil
}

// Sample reads the counters now.
func (c *Cgroup) Sample() (Sample, error) {
	s := Sample{At: time.Now()}
	var err error
	if c.v2 {
		var usec uint64
		usec, err = keyed(filepath.Join(c.cpuDir, "cpu.stat"), "usage_usec")
		s.CPU = time.Duration(usec) * time.Microsecond
	} else {
		var ns uint64
		ns, err = single(filepath.Join(c.cpuDir, "cpuacct.usage"))
		s.CPU = time.Duration(ns)
	}
	if err != nil {
		return s, err
	}
	usageFile := "memory.usage_in_bytes"
	if c.v2 {
		usageFile = "memory.current"
	}
	usage, err := single(filepath.Join(c.memDir, usageFile))
	if err != nil {
		return s, err
	}
	inactive, err := keyed(filepath.Join(c.memDir, "memory.stat"), c.statKey)
	if err != nil {
		return s, err
	}
	s.Memory = usage
	if inactive < usage {
		s.Memory = usage - inactive
	}
	if c.psiDir != "" {
		cpu, errCPU := stalled(filepath.Join(c.psiDir, "cpu.pressure"))
		mem, errMem := stalled(filepath.Join(c.psiDir, "memory.pressure"))
		s.CPUStall, s.MemoryStall, s.Stalls = cpu, mem, errCPU == nil && errMem == nil
	}
	return s, nil
}

// stalled reads the "some" total of a PSI file (some avg10=… total=MICROSECONDS): how long some
// task of the group waited for the resource.
func stalled(path string) (time.Duration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: %w", path, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("%s has no \"some\" total", path)
}

func single(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// keyed reads the value of key from a "key value" per line file (cpu.stat, memory.stat).
func keyed(path, key string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, key, err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no %q", path, key)
}

// Usage is what a container used over a phase.
type Usage struct {
	Wall time.Duration
	// CPUCores is the mean number of cores busy: CPU time over wall time.
	CPUCores float64
	// MemoryPeak and MemoryMean are over the samples, page cache excluded.
	MemoryPeak, MemoryMean uint64
	Samples                int
	// CPUPressure and MemoryPressure are the shares of the wall time in which some task waited
	// for a CPU, and for memory (PSI); PressureRead says the kernel gave them.
	CPUPressure, MemoryPressure float64
	PressureRead                bool
}

// Watch samples a Source through a phase.
type Watch struct {
	p     *periodic.Watch[Sample]
	first Sample

	// Under p's lock:
	last    Sample
	peak    uint64
	sum     float64
	samples int
	// seconds holds, for each second from the first sample, its last sample and peak memory.
	seconds []secondSamples
}

type secondSamples struct {
	last Sample
	peak uint64
	seen bool
}

// SecondUsage is what a container used over one second of a phase.
type SecondUsage struct {
	CPUCores float64 // mean cores busy over the second; 0 for the first second without an earlier sample
	Memory   uint64  // peak of the second's samples, page cache excluded
}

// Start takes a first sample at once, then one every interval until Stop.
func Start(src Source, every time.Duration) (*Watch, error) {
	w := &Watch{}
	p, err := periodic.Start(every, src.Sample, w.add)
	if err != nil {
		return nil, err
	}
	w.p = p
	return w, nil
}

func (w *Watch) add(s Sample) {
	if w.samples == 0 {
		w.first = s
	}
	w.last = s
	w.peak = max(w.peak, s.Memory)
	w.sum += float64(s.Memory)
	w.samples++
	i := int(max(s.At.Sub(w.first.At), 0) / time.Second)
	for len(w.seconds) <= i {
		w.seconds = append(w.seconds, secondSamples{})
	}
	sec := &w.seconds[i]
	sec.last, sec.peak, sec.seen = s, max(sec.peak, s.Memory), true
}

// PerSecond is the usage of each second since the first sample, from the samples taken (every
// interval given to Start): CPU between the last sample of the second before and the second's
// own last, memory the second's peak. A second without a sample repeats the one before.
func (w *Watch) PerSecond() (out []SecondUsage) {
	w.p.Locked(func() { out = w.perSecond() })
	return out
}

func (w *Watch) perSecond() []SecondUsage {
	out := make([]SecondUsage, len(w.seconds))
	prev := w.first
	var prevMem uint64
	for i, sec := range w.seconds {
		if !sec.seen {
			out[i] = SecondUsage{Memory: prevMem}
			continue
		}
		if d := sec.last.At.Sub(prev.At); d > 0 {
			out[i].CPUCores = float64(sec.last.CPU-prev.CPU) / float64(d)
		}
		out[i].Memory = sec.peak
		prev, prevMem = sec.last, sec.peak
	}
	return out
}

// Stop takes a last sample and returns the usage between the first and the last. A sample that
// failed (the container went away) is an error: the usage would miss part of the phase.
func (w *Watch) Stop() (Usage, error) {
	if err := w.p.Stop(); err != nil {
		return Usage{}, err
	}
	u := Usage{Wall: w.last.At.Sub(w.first.At), MemoryPeak: w.peak, MemoryMean: uint64(w.sum / float64(w.samples)), Samples: w.samples}
	if u.Wall > 0 {
		u.CPUCores = float64(w.last.CPU-w.first.CPU) / float64(u.Wall)
		if u.PressureRead = w.first.Stalls && w.last.Stalls; u.PressureRead {
			u.CPUPressure = float64(w.last.CPUStall-w.first.CPUStall) / float64(u.Wall)
			u.MemoryPressure = float64(w.last.MemoryStall-w.first.MemoryStall) / float64(u.Wall)
		}
	}
	return u, nil
}

// OwnCPU is the CPU time this process has used (user and system), from getrusage.
func OwnCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// OOMKills is how many processes of the cgroup the kernel has killed at its memory limit, from
// memory.events (v2) or memory.oom_control (v1). A container whose main process survives (a
// worker of a cluster killed instead) is counted too.
func (c *Cgroup) OOMKills() (int64, error) {
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	n, err := keyed(filepath.Join(c.memDir, file), "oom_kill")
	return int64(n), err
}
