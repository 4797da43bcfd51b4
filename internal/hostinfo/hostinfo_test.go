package hostinfo

import (
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// Pinning restricts every thread to the CPUs given, and sizes the Go scheduler for who runs: the
// generator's loop gets a P and each background thread one, beside the CPU's; a server one a CPU.
func TestPinningRestrictsAffinityAndSizesTheScheduler(t *testing.T) {
	before, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 2 {
		t.Skip("needs 2 CPUs")
	}
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { PinProcess(before); runtime.GOMAXPROCS(procs) })
	for _, c := range []struct {
		name  string
		pin   func([]int) error
		cpus  []int
		procs int
	}{
		{"the generator", PinProcess, before[:1], 1 + 1 + BackgroundSlots},
		{"a server", PinServer, before[len(before)-1:], 1},
	} {
		if err := c.pin(c.cpus); err != nil {
			t.Fatal(err)
		}
		got, err := AllowedCPUs()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.cpus) {
			t.Errorf("%s: allowed CPUs after pinning = %v, want %v", c.name, got, c.cpus)
		}
		if got := runtime.GOMAXPROCS(0); got != c.procs {
			t.Errorf("%s: GOMAXPROCS after pinning to one CPU = %d, want %d", c.name, got, c.procs)
		}
	}
}

func TestBackgroundRunsAtIdlePriority(t *testing.T) {
	policy := make(chan uint32)
	go func() {
		Background()
		attr, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			t.Error(err)
			policy <- 0
			return
		}
		policy <- attr.Policy
	}()
	if got := <-policy; got != unix.SCHED_IDLE {
		t.Errorf("a background thread's policy = %d, want SCHED_IDLE (%d)", got, unix.SCHED_IDLE)
	}
}

func TestHostFactsAreKnown(t *testing.T) {
	for name, v := range map[string]string{"cpu": CPUModel(), "kernel": Kernel()} {
		if v == "" || v == "unknown" {
			t.Errorf("%s = %q", name, v)
		}
	}
}
