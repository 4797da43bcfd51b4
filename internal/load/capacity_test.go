package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCapacityWarning(t *testing.T) {
	measured := Capacity{Rate: 20000, CPUs: 1, HostCPU: "EPYC ×2", Commit: "abc", Measured: time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)}
	atLeast := measured
	atLeast.AtLeast = true
	cases := []struct {
		name string
		c    Capacity
		rate int
		cpus int
		host string
		want string // "" for no warning
	}{
		{"within", measured, 20000, 1, "EPYC ×2", ""},
		{"above", measured, 25000, 1, "EPYC ×2", "25000 rps requested, but the load generator sustained at most 20000 rps on 1 generator CPU(s)"},
		{"twice the CPUs", measured, 25000, 2, "EPYC ×2", ""},
		{"more than twice the CPUs give", measured, 45000, 2, "EPYC ×2", "about 40000 rps on the 2 it has now"},
		{"every rate tried was sustained, within", atLeast, 20000, 1, "EPYC ×2", ""},
		{"every rate tried was sustained, above", atLeast, 50000, 1, "EPYC ×2", "above the highest rate make bench-generator tried (20000 rps"},
		{"another CPU model", measured, 25000, 1, "Xeon ×8", ""},
		{"nothing measured", Capacity{}, 25000, 1, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.c.Warning(c.rate, c.cpus, c.host)
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("Warning(%d, %d, %q) = %q, want %q", c.rate, c.cpus, c.host, got, c.want)
			}
		})
	}
}

func TestCapacityIsSavedAndRead(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	if w := CapacityWarning(1_000_000, 1, "EPYC ×2"); w != "" {
		t.Errorf("no figure saved yet, but warned %q", w)
	}
	path, err := CapacityFile()
	if err != nil {
		t.Fatal(err)
	}
	want := Capacity{Rate: 20000, ClosedLoopRPS: 31000.5, CPUs: 1, HostCPU: "EPYC ×2", Commit: "abc", Measured: time.Now().UTC().Truncate(time.Second)}
	if err := SaveCapacity(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCapacity(path)
	if err != nil || got != want {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	if w := CapacityWarning(30000, 1, "EPYC ×2"); !strings.Contains(w, "sustained at most 20000 rps") {
		t.Errorf("warning %q, want one naming the 20000 rps measured", w)
	}
	if w := CapacityWarning(0, 1, "EPYC ×2"); w != "" {
		t.Errorf("closed loop warned %q", w)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := CapacityWarning(30000, 1, "EPYC ×2"); !strings.Contains(w, filepath.Base(path)) || !strings.Contains(w, "delete it") {
		t.Errorf("unreadable figure: warning %q, want one naming the file and the fix", w)
	}
}
