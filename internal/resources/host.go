package resources

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcStat is where the kernel counts each CPU's time.
const ProcStat = "/proc/stat"

// clockTick is the unit of /proc/stat: USER_HZ, 100 on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// HostCPU is what some CPUs spent since boot, by the kernel's count: Busy running any task (user,
// nice and system time; interrupts excluded, since their time may be charged to the task they
// interrupted), Steal taken by the hypervisor for other virtual machines.
type HostCPU struct {
	Busy, Steal time.Duration
}

// ReadHostCPU sums the "cpuN" lines of cpus in a /proc/stat file.
func ReadHostCPU(path string, cpus []int) (HostCPU, error) {
	f, err := os.Open(path)
	if err != nil {
		return HostCPU{}, err
	}
	defer f.Close()
	want := map[string]bool{}
	for _, c := range cpus {
		want["cpu"+strconv.Itoa(c)] = true
	}
	var h HostCPU
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !want[fields[0]] {
			continue
		}
		// cpuN user nice system idle iowait irq softirq steal ...
		if len(fields) < 9 {
			return HostCPU{}, fmt.Errorf("%s: %s line has %d fields, want 9 or more", path, fields[0], len(fields))
		}
		var ticks [8]uint64
		for i := range ticks {
			if ticks[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
				return HostCPU{}, fmt.Errorf("%s: %s: %w", path, fields[0], err)
			}
		}
		h.Busy += time.Duration(ticks[0]+ticks[1]+ticks[2]) * clockTick
		h.Steal += time.Duration(ticks[7]) * clockTick
		found++
	}
	if err := sc.Err(); err != nil {
		return HostCPU{}, err
	}
	if found != len(want) {
		return HostCPU{}, fmt.Errorf("%s: %d of CPUs %v found", path, found, cpus)
	}
	return h, nil
}
