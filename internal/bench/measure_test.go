package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/limit"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/signals"
)

func TestRuntimeView(t *testing.T) {
	cases := []struct {
		name        string
		health      string
		cpus        int
		memory      int64
		wantProcs   int
		wantHeap    int64
		wantWarning string
	}{
		{"as given", `{"availableProcessors":1,"maxHeapBytes":805306368}`, 1, 1 << 30, 1, 805306368, ""},
		{"host cores seen", `{"availableProcessors":2,"maxHeapBytes":null}`, 1, 1 << 30, 2, 0, "sees 2 processor(s) but its cpuset has 1"},
		{"heap above the limit", `{"availableProcessors":1,"maxHeapBytes":2147483648}`, 1, 1 << 30, 1, 2 << 30, "max heap (2048 MiB) exceeds the memory limit (1024 MiB)"},
		{"says nothing", `{"status":"UP"}`, 1, 1 << 30, 0, 0, ""},
		{"not JSON", `UP`, 1, 1 << 30, 0, 0, ""},
		{"no cpuset or limit (a service on loopback)", `{"availableProcessors":8,"maxHeapBytes":9999999999}`, 0, 0, 8, 9999999999, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var row results.Row
			w := runtimeView(&row, []byte(c.health), c.cpus, c.memory)
			got := strings.Join(w, "; ")
			if row.RuntimeProcessors != c.wantProcs || row.RuntimeMaxHeap != c.wantHeap ||
				c.wantWarning == "" && got != "" || c.wantWarning != "" && !strings.Contains(got, c.wantWarning) {
				t.Errorf("processors %d heap %d warnings %q; want %d, %d, %q", row.RuntimeProcessors, row.RuntimeMaxHeap, got, c.wantProcs, c.wantHeap, c.wantWarning)
			}
		})
	}
}

// steadyUsage is a container using cores CPUs and a fixed memory.
type steadyUsage struct {
	mu     sync.Mutex
	start  time.Time
	cores  float64
	memory uint64
}

func (s *steadyUsage) Sample() (resources.Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.start.IsZero() {
		s.start = now
	}
	return resources.Sample{At: now, CPU: time.Duration(s.cores * float64(now.Sub(s.start))), Memory: s.memory}, nil
}

// observedLifecycle starts fake instances whose resources can be read.
type observedLifecycle struct {
	fakeLifecycle
	src    resources.Source
	srcErr error
	health string
	// signals is the instances' signals endpoint; empty: none.
	signals string
}

type observedInstance struct {
	*fakeInstance
	l *observedLifecycle
}

func (i observedInstance) Resources() (resources.Source, error) { return i.l.src, i.l.srcErr }
func (i observedInstance) Startup() time.Duration               { return 1500 * time.Millisecond }
func (i observedInstance) ImageSize() int64                     { return 400 << 20 }
func (i observedInstance) Health() []byte                       { return []byte(i.l.health) }
func (i observedInstance) Signals() string                      { return i.l.signals }

func (l *observedLifecycle) Start(ctx context.Context, s container.Spec) (container.Instance, error) {
	inst, err := l.fakeLifecycle.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	return observedInstance{inst.(*fakeInstance), l}, nil
}

func TestResourcesAreRecorded(t *testing.T) {
	l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}},
		src: &steadyUsage{cores: 0.5, memory: 100 << 20}, health: `{"status":"UP","availableProcessors":2}`}
	var recorded []results.Row
	r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(row results.Row) error { recorded = append(recorded, row); return nil }}
	rows, err := r.Run(context.Background(), planFor("t"))
	if err != nil {
		t.Fatal(err)
	}
	row := rows[0]
	if row.CPUCores < 0.45 || row.CPUCores > 0.55 || row.CPUPercent < 45 || row.CPUPercent > 55 {
		t.Errorf("CPU %.3f cores, %.1f%% of cpuset 1; want 0.5 and 50%%", row.CPUCores, row.CPUPercent)
	}
	if row.MemoryPeak != 100<<20 || row.MemoryMean != 100<<20 {
		t.Errorf("memory peak %d mean %d, want 100 MiB", row.MemoryPeak, row.MemoryMean)
	}
	// 100 MiB is 1/10.24 GiB.
	if want := row.ThroughputRPS / row.CPUCores; row.RPSPerCore != want || math.Abs(row.RPSPerGiB-row.ThroughputRPS*10.24) > 1e-6 {
		t.Errorf("per core %.1f (want %.1f), per GiB %.1f (want %.1f)", row.RPSPerCore, want, row.RPSPerGiB, row.ThroughputRPS*10.24)
	}
	// CPU per request is the phase's CPU time over its successes: times the successes, over the
	// cores, it gives back the phase's wall time, at least the measured duration.
	if wall := time.Duration(float64(row.CPUPerRequest) * float64(row.Successes) / row.CPUCores); row.Successes == 0 || wall < row.Duration {
		t.Errorf("cpu per request %v × %d successes / %.3f cores = %v, shorter than the %v measured", row.CPUPerRequest, row.Successes, row.CPUCores, wall, row.Duration)
	}
	if row.Startup != 1500*time.Millisecond || row.ImageSize != 400<<20 {
		t.Errorf("startup %v, image %d", row.Startup, row.ImageSize)
	}
	if row.GeneratorCPUCores <= 0 {
		t.Errorf("generator CPU %.3f: not measured", row.GeneratorCPUCores)
	}
	if row.RuntimeProcessors != 2 || !strings.Contains(row.Warnings, "sees 2 processor(s) but its cpuset has 1") {
		t.Errorf("runtime processors %d, warnings %q", row.RuntimeProcessors, row.Warnings)
	}
}

// A target's runtime signals are read over its measured phase from their own endpoint, and decide
// its limit; one without them says why.
func TestSignalsAreReadOverThePhase(t *testing.T) {
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := reads.Add(1)
		fmt.Fprintf(w, `{"schema":1,"runtime":"jvm","cpuMs":%d,"gc":{"count":%d,"pauseMs":%d,"maxPauseMs":3},"jitMs":null,"safepoint":null,"eventLoop":null,
"threads":{"live":30,"blocked":1},"pools":[{"name":"hikari","kind":"connections","size":10,"busy":10,"waiting":%d}],"unavailable":{}}`, 100*n, n, n, 5*n)
	}))
	defer srv.Close()
	for _, c := range []struct {
		name, url, note string
	}{
		{"read", srv.URL, ""},
		{"not asked for", "", "off (--signals=false)"},
		{"not served", srv.URL + "x:", "unavailable: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}},
				src: &steadyUsage{cores: 0.5, memory: 100 << 20}, health: `{}`, signals: c.url}
			r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(results.Row) error { return nil }}
			rows, err := r.Run(context.Background(), planFor("t"))
			if err != nil {
				t.Fatal(err)
			}
			row := rows[0]
			if c.note != "" {
				// An invalid row's limit is its fault's (a generator delayed under -race on a busy
				// machine), whatever the signals say: the note is the limit's evidence on a valid one.
				if row.SignalsRead || !strings.HasPrefix(row.SignalsNote, c.note) || row.Valid && !strings.Contains(row.Limit().Evidence, c.note) {
					t.Errorf("read %v, note %q, limit %q; want the note %q", row.SignalsRead, row.SignalsNote, row.Limit(), c.note)
				}
				return
			}
			want := signals.PoolUse{Name: "hikari", Kind: "connections", Size: 10, BusyMax: 10, BusyMean: 10, WaitingRead: true, Waited: 1}
			if !row.SignalsRead || len(row.Signals.Pools) != 1 || row.Signals.Pools[0].WaitingMax < 10 {
				t.Fatalf("read %v (%q): %+v", row.SignalsRead, row.SignalsNote, row.Signals)
			}
			want.WaitingMax = row.Signals.Pools[0].WaitingMax
			if row.Signals.Pools[0] != want || !row.Signals.GCRead || row.Signals.GCMaxPause != 3*time.Millisecond || row.Signals.BlockedMax != 1 {
				t.Errorf("signals %+v, want the pool %+v, GC pauses up to 3ms, 1 blocked", row.Signals, want)
			}
			if l := row.Limit(); row.Valid && l.Kind != limit.Pool {
				t.Errorf("limit %v, want the pool", l)
			}
		})
	}
}

func TestUnreadableResourcesAreAWarningNotAFailure(t *testing.T) {
	l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}},
		srcErr: errors.New("no cgroup"), health: `{}`}
	r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(results.Row) error { return nil }}
	rows, err := r.Run(context.Background(), planFor("t"))
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Requests == 0 || !strings.Contains(rows[0].Warnings, "target resources not measured: no cgroup") {
		t.Errorf("requests %d, warnings %q", rows[0].Requests, rows[0].Warnings)
	}
}

// TestHelperBusy is not a test: run by busyNeighbour as a separate process, it keeps a CPU busy.
func TestHelperBusy(t *testing.T) {
	if os.Getenv("IOTBENCH_BUSY") == "" {
		t.Skip("a helper process for the disturbance tests")
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
	}
}

// busyNeighbour starts a process that spins on a CPU until the test ends: work that is neither
// the generator's nor the target's.
func busyNeighbour(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBusy$")
	cmd.Env = append(os.Environ(), "IOTBENCH_BUSY=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

func TestMeterSeesANeighbour(t *testing.T) {
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	busyNeighbour(t)
	m := &meter{src: &steadyUsage{}, generatorCPUs: cpus, hostCPUs: cpus, machine: resources.ThisHost}
	m.start()
	time.Sleep(time.Second)
	var row results.Row
	m.record(&row, load.Result{})
	m.warn(&row, "")
	if !strings.Contains(row.Warnings, "disturbed: other processes used") || m.disturbed == "" {
		t.Errorf("a process spinning beside the generator and the target for 1 s: warnings %q", row.Warnings)
	}
}

// TestGeneratorPercentCountsTheCPUsOfOtherHosts: with shards on other hosts, the generator's CPU
// (theirs counted in) is a share of its CPUs here and there, not of this machine's alone.
func TestGeneratorPercentCountsTheCPUsOfOtherHosts(t *testing.T) {
	for _, c := range []struct {
		name   string
		remote int
		cpus   float64 // the share's denominator
	}{
		{"every shard here", 0, 2},
		{"shards on two other hosts of 4 and 2 CPUs", 6, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &meter{generatorCPUs: []int{0, 1}}
			m.start()
			for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
			}
			var row results.Row
			m.record(&row, load.Result{RemoteGeneratorCPUs: c.remote})
			if row.GeneratorCPUCores <= 0 || math.Abs(row.GeneratorCPUPercent-100*row.GeneratorCPUCores/c.cpus) > 1e-9 {
				t.Errorf("%.3f cores as %.2f%%, want a share of %v CPUs", row.GeneratorCPUCores, row.GeneratorCPUPercent, c.cpus)
			}
		})
	}
}

func TestADisturbedCellIsMeasuredAgain(t *testing.T) {
	// A process spins beside the generator and the target through the run: each attempt is
	// disturbed, so the cell is measured maxDisturbedAttempts times, and one row is kept: the
	// last, still marked disturbed, naming the attempts set aside. A cell with a fixed warm-up is
	// measured again in a new container; one warmed up until steady, in its own, warmed up again.
	// With KeepDisturbed, the first measurement is kept, marked disturbed.
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	busyNeighbour(t)
	for _, c := range []struct {
		auto, keep           bool
		containers, measured int
		where                string
	}{
		{false, false, maxDisturbedAttempts, maxDisturbedAttempts, "DISTURBED, measured again in a new container"},
		{true, false, 1, maxDisturbedAttempts, "DISTURBED, measured again in its container, after a new warm-up until steady"},
		{false, true, 1, 1, "DISTURBED, measured again"},
	} {
		l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}, machine: &resources.ThisHost},
			src: &steadyUsage{}, health: `{}`}
		p := planFor("t")
		p.GeneratorCPUs, p.Cells[0].Spec.CPUSet = cpus, cpuset.Format(cpus)
		if c.auto {
			p.Cells[0].Load.Warmup, p.Cells[0].Load.WarmupAuto = 500*time.Millisecond, true
		}
		var recorded []results.Row
		log := &strings.Builder{}
		r := &Runner{Lifecycle: l, Log: log, Record: func(row results.Row) error { recorded = append(recorded, row); return nil }, KeepDisturbed: c.keep}
		if _, err := r.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if l.started != c.containers || l.removed != c.containers {
			t.Errorf("warm-up auto %v, keep %v: %d containers started, %d removed; want %d each", c.auto, c.keep, l.started, l.removed, c.containers)
		}
		if len(recorded) != 1 {
			t.Fatalf("warm-up auto %v: %d rows recorded, want the one kept", c.auto, len(recorded))
		}
		w := recorded[0].Warnings
		t.Logf("warm-up auto %v: the kept row's warnings: %s", c.auto, w)
		for i := 1; i < c.measured; i++ {
			if !strings.Contains(w, fmt.Sprintf("attempt %d set aside (", i)) {
				t.Errorf("warnings %q do not name attempt %d", w, i)
			}
		}
		if strings.Contains(w, "measured again: attempt 1 set aside (") != (c.measured > 1) || !strings.Contains(w, "disturbed: other processes used") {
			t.Errorf("warnings %q: want the attempts set aside (%d), and the kept row's own disturbance", w, c.measured-1)
		}
		// The attempts' words never read as the kept row's own disturbance.
		if n := strings.Count(w, "disturbed"); n != 1 {
			t.Errorf("warnings %q say disturbed %d times, want once (the kept row's own)", w, n)
		}
		if got := strings.Count(log.String(), c.where); got != c.measured-1 {
			t.Errorf("the log says %d times %q, want %d:\n%s", got, c.where, c.measured-1, log)
		}
	}
}

// TestAHostNeverQuietIsMeasuredOnce: a process spins beside the run through three cells. The first
// two are each measured maxDisturbedAttempts times, every attempt disturbed; the disturbance is
// then the host's, and the third is kept as first measured, marked, and says why.
func TestAHostNeverQuietIsMeasuredOnce(t *testing.T) {
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	busyNeighbour(t)
	l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}, machine: &resources.ThisHost},
		src: &steadyUsage{}, health: `{}`}
	p := planFor("t", "t", "t")
	p.GeneratorCPUs = cpus
	for i := range p.Cells {
		p.Cells[i].Trial, p.Cells[i].Spec.CPUSet = i+1, cpuset.Format(cpus)
	}
	var recorded []results.Row
	log := &strings.Builder{}
	r := &Runner{Lifecycle: l, Log: log, Record: func(row results.Row) error { recorded = append(recorded, row); return nil }}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if want := chronicAfter*maxDisturbedAttempts + 1; l.started != want {
		t.Errorf("%d containers started, want %d: %d cells measured %d times, then one once", l.started, want, chronicAfter, maxDisturbedAttempts)
	}
	if len(recorded) != 3 {
		t.Fatalf("%d rows, want 3", len(recorded))
	}
	for i, row := range recorded {
		once := strings.Contains(row.Warnings, "measured once: the host was never quiet through the 2 cells before it")
		if !strings.Contains(row.Warnings, "disturbed: ") || once != (i == 2) || strings.Contains(row.Warnings, "measured again: ") == (i == 2) {
			t.Errorf("trial %d's warnings: %s", row.Trial, row.Warnings)
		}
	}
	if n := strings.Count(log.String(), "DISTURBED in every attempt of 2 cells in a row"); n != 1 {
		t.Errorf("the log says %d times that the disturbance is the host's, want once:\n%s", n, log)
	}
	// Each kept row's log says it was kept disturbed, as its row does, valid or not: the neighbour
	// may delay the generator past its limit, and the disturbance is then why the row is invalid.
	if n := strings.Count(log.String(), "DISTURBED, kept so, marked in its row: other processes used"); n != len(recorded) {
		t.Errorf("the log says %d times that a row was kept disturbed, want %d:\n%s", n, len(recorded), log)
	}
}

// The count of disturbed cells in a row: chronic after chronicAfter, and over at the first cell
// measured undisturbed, each said once in the log.
func TestChronicDisturbanceEndsWithAQuietCell(t *testing.T) {
	log := &strings.Builder{}
	r := &Runner{Log: log}
	for i, c := range []struct {
		disturbed bool
		most      int // attempts for the next cell
		once      bool
	}{
		{true, maxDisturbedAttempts, false},
		{true, 1, false},
		{true, 1, true},
		{false, maxDisturbedAttempts, false},
		{true, maxDisturbedAttempts, false},
	} {
		var row results.Row
		r.disturbance(&row, c.disturbed)
		if got := r.mostAttempts(); got != c.most {
			t.Errorf("after cell %d: %d attempts for the next, want %d", i+1, got, c.most)
		}
		if once := strings.Contains(row.Warnings, "measured once"); once != c.once {
			t.Errorf("cell %d: warnings %q", i+1, row.Warnings)
		}
	}
	for _, want := range []string{"DISTURBED in every attempt of 2 cells", "measured undisturbed: a disturbed cell is measured again"} {
		if n := strings.Count(log.String(), want); n != 1 {
			t.Errorf("the log says %q %d times, want once:\n%s", want, n, log)
		}
	}
	r = &Runner{Log: log, KeepDisturbed: true}
	for range 3 {
		r.disturbance(&results.Row{}, true)
	}
	if r.disturbedInARow != 0 {
		t.Error("with KeepDisturbed, disturbed cells are counted")
	}
}

// A generator fault's reason gains its cause by the generator's CPU: short of CPU only when it
// used enough of it (load.ShortOfCPU); below, held up by something else, which more CPU would not
// mend; not measured, either. Other faults keep their reason.
func TestAGeneratorFaultIsBlamedByItsCPU(t *testing.T) {
	const late = "generator delayed requests, and latencies would carry its delay: its own p99 delay 3.2ms exceeds 1ms (send lag p99 2.5ms)"
	const behind = "generator sent 55000 rps of 60000 requested (91.7%)"
	const heldUp = "the load generator was held up, not short of CPU (it used %d%% of its CPUs): other work on its CPUs, or the host pausing it (run again on a quiet host)"
	cases := []struct {
		name    string
		kind    fault.Kind
		reason  string
		percent float64
		want    string
	}{
		{"late, the CPU half used", fault.GeneratorDelayed, late, 54, late + ": " + fmt.Sprintf(heldUp, 54)},
		{"behind, the CPU little used", fault.GeneratorBehind, behind, 40, behind + ": " + fmt.Sprintf(heldUp, 40)},
		{"late, the CPU busy", fault.GeneratorDelayed, late, 90,
			late + ": the load generator was short of CPU (it used 90% of its CPUs): give it more CPU or lower the rate"},
		{"behind, at the threshold", fault.GeneratorBehind, behind, 100 * load.ShortOfCPU,
			behind + ": the load generator was short of CPU (it used 70% of its CPUs): give it more CPU or lower the rate"},
		{"late, the CPU not measured", fault.GeneratorDelayed, late, 0,
			late + ": the load generator was short of CPU, or held up by other work on its CPUs (its CPU was not measured)"},
		{"another fault", fault.Errors, "success ratio 0.5000 below 0.99 (5 errors, 0 timeouts)", 20, "success ratio 0.5000 below 0.99 (5 errors, 0 timeouts)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var row results.Row
			row.SetFault(tc.kind, tc.reason)
			row.GeneratorCPUPercent = tc.percent
			blame(&row)
			if row.InvalidReason != tc.want || row.Fault != tc.kind {
				t.Errorf("reason %q (%v), want %q (%v)", row.InvalidReason, row.Fault, tc.want, tc.kind)
			}
		})
	}
}
