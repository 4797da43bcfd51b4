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

// CPUModel is the host's CPU model name and logical CPU count, e.g. "AMD EPYC 7B13 ×2".
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

// PinProcess restricts every thread of this process to cpus, and sizes the Go scheduler to
// them, so that the load generator never runs on the targets' CPUs.
func PinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	// Affinity is per thread: set it on every existing one; new threads inherit it.
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pinning the load generator to CPUs %v: %w", cpus, err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}
