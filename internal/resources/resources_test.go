package resources

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tree writes files (path → content) under a temporary directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCgroupOfReadsBothVersions(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string
		wantCPU    time.Duration
		wantMemory uint64
		wantErr    string
	}{
		{"v1, as Docker's cgroupfs driver lays it out", map[string]string{
			"proc/42/cgroup":                              "4:memory:/docker/abc\n3:cpuset:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc\n",
			"sys/cpuacct/docker/abc/cpuacct.usage":        "1500000000\n",
			"sys/memory/docker/abc/memory.usage_in_bytes": "104857600\n",
			"sys/memory/docker/abc/memory.stat":           "cache 30000000\ninactive_file 999\ntotal_inactive_file 4857600\n",
		}, 1500 * time.Millisecond, 100_000_000, ""},
		{"v2, systemd driver", map[string]string{
			"proc/42/cgroup":                                   "0::/system.slice/docker-abc.scope\n",
			"sys/cgroup.controllers":                           "cpuset cpu memory\n",
			"sys/system.slice/docker-abc.scope/cpu.stat":       "usage_usec 2500000\nuser_usec 2000000\n",
			"sys/system.slice/docker-abc.scope/memory.current": "52428800\n",
			"sys/system.slice/docker-abc.scope/memory.stat":    "anon 1\nfile 9\ninactive_file 2428800\n",
		}, 2500 * time.Millisecond, 50_000_000, ""},
		{"v1 without the memory controller", map[string]string{
			"proc/42/cgroup": "2:cpu,cpuacct:/docker/abc\n",
		}, 0, 0, "no cpuacct or memory cgroup"},
		{"no such process", map[string]string{}, 0, 0, "finding the container's cgroup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, c.files)
			cg, err := CgroupOf(filepath.Join(dir, "sys"), filepath.Join(dir, "proc"), 42)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := cg.Sample()
			if err != nil {
				t.Fatal(err)
			}
			if s.CPU != c.wantCPU || s.Memory != c.wantMemory {
				t.Errorf("sample CPU %v memory %d, want %v and %d (usage minus inactive file pages)", s.CPU, s.Memory, c.wantCPU, c.wantMemory)
			}
		})
	}
}

// script is a Source whose CPU counter grows at cores × wall time and whose memory plays back mem.
type script struct {
	mu    sync.Mutex
	start time.Time
	i     int
	mem   []uint64
	cores float64
}

func (s *script) Sample() (Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.start.IsZero() {
		s.start = now
	}
	m := s.mem[min(s.i, len(s.mem)-1)]
	s.i++
	return Sample{At: now, CPU: time.Hour + time.Duration(s.cores*float64(now.Sub(s.start))), Memory: m}, nil
}

func TestWatchComputesCoresPeakAndMean(t *testing.T) {
	src := &script{cores: 0.75, mem: []uint64{100, 300, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}}
	w, err := Start(src, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	u, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUCores < 0.74 || u.CPUCores > 0.76 {
		t.Errorf("CPU %.3f cores, want 0.75: the CPU counter's growth over the wall time, not its total", u.CPUCores)
	}
	if u.MemoryPeak != 300 {
		t.Errorf("peak %d, want 300", u.MemoryPeak)
	}
	if u.Samples < 5 {
		t.Errorf("%d samples in 150 ms at 20 ms, want ≈8", u.Samples)
	}
	var sum uint64
	for i := range u.Samples {
		sum += src.mem[min(i, len(src.mem)-1)]
	}
	if want := sum / uint64(u.Samples); u.MemoryMean != want {
		t.Errorf("mean %d, want %d", u.MemoryMean, want)
	}
}

type failing struct{ after int }

func (f *failing) Sample() (Sample, error) {
	if f.after--; f.after < 0 {
		return Sample{}, os.ErrNotExist
	}
	return Sample{At: time.Now()}, nil
}

func TestWatchReportsAContainerThatWentAway(t *testing.T) {
	w, err := Start(&failing{after: 1}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := w.Stop(); err == nil {
		t.Error("a watch whose samples failed reported usage")
	}
}

func TestOwnCPUGrowsWithWork(t *testing.T) {
	before, err := OwnCPU()
	if err != nil {
		t.Fatal(err)
	}
	// Busy until the counter shows 30 ms more: on a busy machine the loop gets less than the wall
	// time, so only a counter that never grows fails, after the deadline.
	for deadline := time.Now().Add(10 * time.Second); ; {
		after, err := OwnCPU()
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 30*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s of busy loop added %v of CPU", after-before)
		}
		for end := time.Now().Add(5 * time.Millisecond); time.Now().Before(end); {
		}
	}
}

func TestWatchPerSecond(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int, cpuMs int, mem uint64) Sample {
		return Sample{At: t0.Add(time.Duration(ms) * time.Millisecond), CPU: time.Duration(cpuMs) * time.Millisecond, Memory: mem}
	}
	w := &Watch{}
	for _, s := range []Sample{at(0, 0, 100), at(500, 250, 300), at(1000, 500, 200), at(1500, 1000, 250), at(3200, 2000, 100)} {
		w.add(s)
	}
	got := w.perSecond()
	want := []SecondUsage{{0.5, 300}, {0.75, 250}, {0, 250}, {1.0 / 1.7, 100}}
	if len(got) != len(want) {
		t.Fatalf("%d seconds, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if d := got[i].CPUCores - want[i].CPUCores; d > 1e-9 || d < -1e-9 || got[i].Memory != want[i].Memory {
			t.Errorf("second %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Pressure is read where the kernel keeps it for the container: the unified hierarchy beside
// cgroup v1's controllers, the cgroup's own directory on v2; a host without it says so.
func TestCgroupReadsPressure(t *testing.T) {
	v1 := map[string]string{
		"proc/42/cgroup":                              "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc\n",
		"sys/cpuacct/docker/abc/cpuacct.usage":        "1\n",
		"sys/memory/docker/abc/memory.usage_in_bytes": "1\n",
		"sys/memory/docker/abc/memory.stat":           "total_inactive_file 0\n",
	}
	psi := func(files map[string]string, dir string) map[string]string {
		out := map[string]string{}
		for k, v := range files {
			out[k] = v
		}
		out[dir+"/cpu.pressure"] = "some avg10=1.00 avg60=0.50 avg300=0.10 total=2500000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=100\n"
		out[dir+"/memory.pressure"] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=40000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		return out
	}
	v2 := map[string]string{
		"proc/42/cgroup":                "0::/docker/abc\n",
		"sys/cgroup.controllers":        "cpu memory\n",
		"sys/docker/abc/cpu.stat":       "usage_usec 1\n",
		"sys/docker/abc/memory.current": "1\n",
		"sys/docker/abc/memory.stat":    "inactive_file 0\n",
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		read  bool
	}{
		{"v1 hybrid: the unified hierarchy", psi(v1, "sys/unified/docker/abc"), true},
		{"v2: the cgroup's directory", psi(v2, "sys/docker/abc"), true},
		{"v1 without a unified hierarchy", v1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, tc.files)
			cg, err := CgroupOf(filepath.Join(dir, "sys"), filepath.Join(dir, "proc"), 42)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cg.Sample()
			if err != nil {
				t.Fatal(err)
			}
			want := Sample{CPUStall: 2500 * time.Millisecond, MemoryStall: 40 * time.Millisecond, Stalls: true}
			if !tc.read {
				want = Sample{}
			}
			if s.Stalls != want.Stalls || s.CPUStall != want.CPUStall || s.MemoryStall != want.MemoryStall {
				t.Errorf("stalls %v cpu %v memory %v, want %v %v %v", s.Stalls, s.CPUStall, s.MemoryStall, want.Stalls, want.CPUStall, want.MemoryStall)
			}
		})
	}
}

// stalling is a Source whose tasks waited for a CPU a quarter of the time and for memory a tenth.
type stalling struct{ start time.Time }

func (s *stalling) Sample() (Sample, error) {
	now := time.Now()
	if s.start.IsZero() {
		s.start = now
	}
	d := now.Sub(s.start)
	return Sample{At: now, CPUStall: time.Minute + d/4, MemoryStall: d / 10, Stalls: true}, nil
}

func TestWatchComputesPressure(t *testing.T) {
	w, err := Start(&stalling{}, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	u, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if !u.PressureRead || u.CPUPressure < 0.24 || u.CPUPressure > 0.26 || u.MemoryPressure < 0.09 || u.MemoryPressure > 0.11 {
		t.Errorf("pressure read %v, CPU %.3f, memory %.3f; want 0.25 and 0.10 of the wall time (the totals' growth, not the totals)", u.PressureRead, u.CPUPressure, u.MemoryPressure)
	}
}
