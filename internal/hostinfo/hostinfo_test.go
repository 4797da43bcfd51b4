package hostinfo

import (
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPinProcessRestrictsAffinity(t *testing.T) {
	before, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 2 {
		t.Skip("needs 2 CPUs")
	}
	t.Cleanup(func() { PinProcess(before) })
	want := before[:1]
	if err := PinProcess(want); err != nil {
		t.Fatal(err)
	}
	got, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("allowed CPUs after pinning = %v, want %v", got, want)
	}
	// The loop's P and one for each background thread, beside the CPU's.
	if got, want := runtime.GOMAXPROCS(0), 1+1+BackgroundSlots; got != want {
		t.Errorf("GOMAXPROCS after pinning to one CPU = %d, want %d", got, want)
	}
}

func TestPinServerGivesOnePPerCPU(t *testing.T) {
	before, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 2 {
		t.Skip("needs 2 CPUs")
	}
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { PinProcess(before); runtime.GOMAXPROCS(procs) })
	want := before[len(before)-1:]
	if err := PinServer(want); err != nil {
		t.Fatal(err)
	}
	got, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("allowed CPUs after pinning = %v, want %v", got, want)
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS after pinning a server to one CPU = %d, want 1", got)
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
