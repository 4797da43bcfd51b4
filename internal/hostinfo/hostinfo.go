// Package hostinfo reads what a result depends on besides the target: the host's CPU and kernel,
// iotbench's own version, and pins the load generator to its CPUs.
package hostinfo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Version and BuildCommit are set at build time by the Makefile
// (-ldflags "-X …/hostinfo.Version=… -X …/hostinfo.BuildCommit=…").
var (
	Version     = "dev"
	BuildCommit = ""
)

// VersionLine names this binary: its version, commit and Go.
func VersionLine() string {
	return fmt.Sprintf("iotbench %s (commit %s, %s)", Version, Commit(), runtime.Version())
}

// Commit is the VCS revision the binary was built from, "-dirty" when the tree had changes.
func Commit() string {
	if BuildCommit != "" {
		return BuildCommit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "unknown"
	}
	return rev[:min(12, len(rev))] + dirty
}

// CPUModel is the host's CPU model name and the logical CPUs this process may use, e.g. "AMD EPYC
// 7B13 ×2": under `taskset -c 0` on that host, ×1. A row's fingerprint holds it, and a `run --url`
// records no generator cpuset: the count is what tells its one CPU from two.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return fmt.Sprintf("%s ×%d", strings.TrimSpace(v), runtime.NumCPU())
		}
	}
	return fmt.Sprintf("unknown ×%d", runtime.NumCPU())
}

// Kernel is the running kernel's release.
func Kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// AllowedCPUs lists the CPUs this process may run on.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// PinProcess restricts every thread of this process to cpus, so that the load generator never
// runs on the targets' CPUs, and gives the Go scheduler BackgroundSlots+1 Ps more than them: the
// load loop, locked to its thread, must find a P whenever it returns from waiting in epoll. With
// one P per CPU, a goroutine made runnable meanwhile (a TLS handshake) took the loop's P and kept
// it until it blocked or the scheduler's 10 ms slice ended, and the loop's requests waited that
// long.
func PinProcess(cpus []int) error {
	if err := pin(cpus); err != nil {
		return fmt.Errorf("pinning the load generator to CPUs %v: %w", cpus, err)
	}
	runtime.GOMAXPROCS(len(cpus) + 1 + BackgroundSlots)
	return nil
}

// PinServer restricts every thread of this process to cpus and gives the Go scheduler one P
// for each, as Go sizes a process by default. A server with more Ps than CPUs runs more threads
// than the kernel can, and they take turns in time slices of milliseconds: the calibration's
// 2 ms reference at 2,000 rps on one CPU answered at p99 in 3.9–4.0 ms with PinProcess's 10 Ps,
// in 2.6–3.0 ms with one.
func PinServer(cpus []int) error {
	if err := pin(cpus); err != nil {
		return err
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

// Yield gives every thread of this process the lowest priority (nice 19; threads made later
// inherit it), for a server beside the load generator on its CPUs: the kernel runs the
// generator's loop first whenever it wakes, and the server in the time the loop leaves.
func Yield() error {
	return eachThread(func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, 19) })
}

// pin restricts every thread of this process to cpus.
func pin(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return eachThread(func(tid int) error { return unix.SchedSetaffinity(tid, &set) })
}

// eachThread applies set to every existing thread of this process: affinity and priority are
// per thread, and new threads inherit them from the one that makes them.
func eachThread(set func(tid int) error) error {
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		if err := set(tid); err != nil {
			return err
		}
	}
	return nil
}

// BackgroundSlots is how many goroutines may be in Background at once. A background thread the
// kernel holds back still holds its P in the Go scheduler, so PinProcess gives the scheduler a P
// for each, beside the loop's.
const BackgroundSlots = 8

// Background makes the calling goroutine's thread run only when its CPU has nothing else to run
// (SCHED_IDLE), for work beside the load generator's loop that must never delay it: the kernel
// gives the loop's thread the CPU the moment it wakes. It locks the goroutine to that thread for
// good: the goroutine must end without unlocking it, so that the Go runtime ends the thread
// rather than reuse it at that priority. At most BackgroundSlots goroutines may be in it at once.
func Background() {
	runtime.LockOSThread()
	_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0) // at worst it runs at normal priority
}
