package resources

import (
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(path, []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	tick := func(n int64) time.Duration { return time.Duration(n) * 10 * time.Millisecond }
	cases := []struct {
		cpus []int
		want HostCPU
		err  string
	}{
		{[]int{0}, HostCPU{Busy: tick(507965 + 1639 + 280875), Steal: tick(21796)}, ""},
		{[]int{1}, HostCPU{Busy: tick(1313708 + 298616), Steal: tick(13319)}, ""},
		{[]int{0, 1}, HostCPU{Busy: tick(507965 + 1639 + 280875 + 1313708 + 298616), Steal: tick(21796 + 13319)}, ""},
		{[]int{1, 2}, HostCPU{}, "1 of CPUs [1 2] found"},
	}
	for _, c := range cases {
		got, err := ReadHostCPU(path, c.cpus)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("cpus %v: err %v, want %q", c.cpus, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("cpus %v: %+v, %v; want %+v", c.cpus, got, err, c.want)
		}
	}
}

func TestReadHostCPUOfThisMachine(t *testing.T) {
	// CPU 0 exists everywhere; its busy time only grows.
	a, err := ReadHostCPU(ProcStat, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if a.Busy <= 0 {
		t.Errorf("cpu0 busy %s since boot", a.Busy)
	}
}
