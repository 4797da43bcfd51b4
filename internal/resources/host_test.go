package resources

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReadHostCPU(t *testing.T) {
	stat := `cpu  1821674 1639 579492 3428444 19013 0 138623 35116 0 0
cpu0 507965 1639 280875 2058910 3841 0 66778 21796 0 0
cpu1 1313708 0 298616 1369533 15172 0 71844 13319 0 0
intr 12345 0 0
ctxt 987654
`
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	procStat := write("stat", stat)
	v1 := filepath.Join(dir, "v1")
	write("v1/cpuacct/cpuacct.usage_percpu", "10616049150446 18217396813662 \n")
	v2 := filepath.Join(dir, "v2")
	write("v2/cgroup.controllers", "cpuset cpu io memory pids\n")
	write("v2/cpu.stat", "usage_usec 28833445964\nuser_usec 1\nsystem_usec 2\n")
	steal := func(ticks int64) time.Duration { return time.Duration(ticks) * 10 * time.Millisecond }
	cases := []struct {
		name string
		root string
		cpus []int
		want HostCPU
		err  string
	}{
		{"v1, one CPU", v1, []int{1}, HostCPU{Busy: 18217396813662, Steal: steal(13319)}, ""},
		{"v1, both", v1, []int{0, 1}, HostCPU{Busy: 10616049150446 + 18217396813662, Steal: steal(21796 + 13319)}, ""},
		{"v1, a CPU it lacks", v1, []int{1, 2}, HostCPU{}, "1 of CPUs [1 2] found"},
		{"v2, the whole machine", v2, []int{0, 1}, HostCPU{Busy: 28833445964 * time.Microsecond, Steal: steal(21796 + 13319)}, ""},
		{"v2, part of it", v2, []int{1}, HostCPU{}, "whole machine only"},
	}
	for _, c := range cases {
		got, err := ReadHostCPU(c.root, procStat, c.cpus)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestHostWatchOthers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	procStat := filepath.Join(dir, "stat")
	at := func(busyNs int64, stealTicks int) {
		write("cpuacct/cpuacct.usage_percpu", "1 "+strconv.FormatInt(busyNs, 10)+"\n")
		write("stat", "cpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 "+strconv.Itoa(stealTicks)+" 0 0\n")
	}
	at(1_000_000_000, 100)
	w, err := WatchHost(dir, procStat, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	at(3_000_000_000, 103) // 2 s busy, 30 ms stolen since
	cases := []struct {
		own, wantOthers time.Duration
	}{
		{1500 * time.Millisecond, 500 * time.Millisecond},
		{2 * time.Second, 0},
		{2100 * time.Millisecond, 0}, // own read a little after the cgroup: not below zero
	}
	for _, c := range cases {
		others, steal, err := w.Others(c.own)
		if err != nil || others != c.wantOthers || steal != 30*time.Millisecond {
			t.Errorf("own %s: others %s, steal %s, %v; want %s, 30ms", c.own, others, steal, err, c.wantOthers)
		}
	}
}

func TestDisturbance(t *testing.T) {
	cpus := []int{0, 1}
	cases := []struct {
		name          string
		others, steal time.Duration // over 10 s
		want          string
	}{
		{"quiet", 400 * time.Millisecond, 0, ""},
		{"a build beside the benchmark", 3 * time.Second, 0, "disturbed: other processes used 0.30 cores of CPUs 0-1, the generator's and the target's"},
		{"another VM", 0, 2 * time.Second, "disturbed: the hypervisor took 0.20 cores of CPUs 0-1 (steal)"},
		{"both, in one warning", time.Second, time.Second,
			"disturbed: other processes used 0.10 cores of CPUs 0-1, the generator's and the target's, and the hypervisor took 0.10 cores of CPUs 0-1 (steal)"},
		{"own accounting above the kernel's", -time.Second, 0, ""},
	}
	for _, c := range cases {
		if got := Disturbance(10*time.Second, c.others, c.steal, cpus, "the generator's and the target's"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
