package resources

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
)

// Where this machine's kernel shows cgroups and its CPU statistics.
const (
	CgroupRoot = "/sys/fs/cgroup"
	ProcStat   = "/proc/stat"
	ProcVMStat = "/proc/vmstat"
)

// Host is where a machine's kernel shows its cgroups and its CPU statistics.
type Host struct{ CgroupRoot, ProcStat string }

// ThisHost is the machine iotbench runs on.
var ThisHost = Host{CgroupRoot, ProcStat}

// Watch starts a HostWatch of cpus on h.
func (h Host) Watch(cpus []int) (HostWatch, error) { return WatchHost(h.CgroupRoot, h.ProcStat, cpus) }

// HostOOMKills is how many processes the kernel of this machine has killed for memory since it
// booted, in any cgroup (vmstat's oom_kill, from /proc/vmstat): unlike a cgroup's count, it
// outlives the container whose process was killed.
func HostOOMKills(vmstat string) (int64, error) {
	n, err := keyed(vmstat, "oom_kill")
	return int64(n), err
}

// HostCPU is what some CPUs spent: Busy running any task, Steal taken by the hypervisor for
// other virtual machines.
type HostCPU struct {
	Busy, Steal time.Duration
}

// ReadHostCPU reads the counters of cpus; cgroupRoot is where the cgroup filesystems are mounted
// (/sys/fs/cgroup), procStat the kernel's CPU statistics (/proc/stat).
//
// Busy is the root cgroup's CPU time, exact to the nanosecond like a container's: /proc/stat's
// user and system times are sampled at each clock tick, and on this VM they read 440 and 1110 ms
// over two 2 s spans where the root cgroup and the JVM container on that CPU both counted 711 and
// 738 ms. cgroup v1 counts each CPU; v2 only the whole machine, so there cpus must be all of its
// CPUs. Steal comes from /proc/stat (the hypervisor's own clock, added up at each tick).
func ReadHostCPU(cgroupRoot, procStat string, cpus []int) (HostCPU, error) {
	online, steal, err := readProcStat(procStat, cpus)
	if err != nil {
		return HostCPU{}, err
	}
	h := HostCPU{Steal: steal}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		if len(cpus) != online {
			return HostCPU{}, fmt.Errorf("cgroup v2 counts CPU time for the whole machine only, and CPUs %v are %d of its %d", cpus, len(cpus), online)
		}
		usec, err := keyed(filepath.Join(cgroupRoot, "cpu.stat"), "usage_usec")
		h.Busy = time.Duration(usec) * time.Microsecond
		return h, err
	}
	path := filepath.Join(cgroupRoot, "cpuacct", "cpuacct.usage_percpu")
	data, err := os.ReadFile(path)
	if err != nil {
		return HostCPU{}, err
	}
	perCPU := strings.Fields(string(data))
	for _, c := range cpus {
		if c >= len(perCPU) {
			return HostCPU{}, fmt.Errorf("%s has no CPU %d", path, c)
		}
		ns, err := strconv.ParseUint(perCPU[c], 10, 64)
		if err != nil {
			return HostCPU{}, fmt.Errorf("%s: %w", path, err)
		}
		h.Busy += time.Duration(ns)
	}
	return h, nil
}

// Disturbed is the share of a core, on the CPUs a measurement uses, above which work that is not
// the measurement's (other processes, a build, another VM through steal) makes its figures
// suspect: a run whose neighbours were busy measured the neighbours too.
const Disturbed = 0.05

// Disturbance is the warning, one however many causes, for work on cpus over wall that was not
// the measurement's ("": none): others is the CPUs' busy time less the measurement's own, steal
// what the hypervisor took from them; whose names the CPUs ("the generator's and the target's").
func Disturbance(wall, others, steal time.Duration, cpus []int, whose string) string {
	var causes []string
	cores := func(d time.Duration) float64 { return d.Seconds() / wall.Seconds() }
	if c := cores(others); c > Disturbed {
		causes = append(causes, fmt.Sprintf("other processes used %.2f cores of CPUs %s, %s", c, cpuset.Format(cpus), whose))
	}
	if c := cores(steal); c > Disturbed {
		causes = append(causes, fmt.Sprintf("the hypervisor took %.2f cores of CPUs %s (steal)", c, cpuset.Format(cpus)))
	}
	if len(causes) == 0 {
		return ""
	}
	return "disturbed: " + strings.Join(causes, ", and ") // not "; ", which parts a row's warnings
}

// HostWatch reads, over a measured phase, what some CPUs spent on work that was not the
// measurement's own.
type HostWatch struct {
	cgroupRoot, procStat string
	cpus                 []int
	start                HostCPU
}

// WatchHost starts a watch of cpus (see ReadHostCPU for the paths).
func WatchHost(cgroupRoot, procStat string, cpus []int) (HostWatch, error) {
	h, err := ReadHostCPU(cgroupRoot, procStat, cpus)
	return HostWatch{cgroupRoot: cgroupRoot, procStat: procStat, cpus: cpus, start: h}, err
}

// Others is what the CPUs spent since the watch started beyond own, the CPU time of the processes
// being measured: others the busy time of everything else (never below zero: own is read a few µs
// apart from the cgroup's counter), steal what the hypervisor took.
func (w HostWatch) Others(own time.Duration) (others, steal time.Duration, err error) {
	now, err := ReadHostCPU(w.cgroupRoot, w.procStat, w.cpus)
	if err != nil {
		return 0, 0, err
	}
	return max(now.Busy-w.start.Busy-own, 0), now.Steal - w.start.Steal, nil
}

// readProcStat counts the CPUs a /proc/stat file lists and sums the steal of cpus.
func readProcStat(path string, cpus []int) (online int, steal time.Duration, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	want := map[string]bool{}
	for _, c := range cpus {
		want["cpu"+strconv.Itoa(c)] = true
	}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") || fields[0] == "cpu" {
			continue
		}
		online++
		if !want[fields[0]] {
			continue
		}
		// cpuN user nice system idle iowait irq softirq steal ..., in USER_HZ (100 a second
		// on every Linux architecture Go runs on)
		if len(fields) < 9 {
			return 0, 0, fmt.Errorf("%s: %s line has %d fields, want 9 or more", path, fields[0], len(fields))
		}
		ticks, err := strconv.ParseUint(fields[8], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", path, fields[0], err)
		}
		steal += time.Duration(ticks) * 10 * time.Millisecond
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found != len(want) {
		return 0, 0, fmt.Errorf("%s: %d of CPUs %v found", path, found, cpus)
	}
	return online, steal, nil
}
