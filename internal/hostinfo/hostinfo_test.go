package hostinfo

import (
	"slices"
	"testing"
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
}

func TestHostFactsAreKnown(t *testing.T) {
	for name, v := range map[string]string{"cpu": CPUModel(), "kernel": Kernel()} {
		if v == "" || v == "unknown" {
			t.Errorf("%s = %q", name, v)
		}
	}
}
