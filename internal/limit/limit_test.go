package limit

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/signals"
)

// Each rule on synthetic figures: a phase bounded by each thing iotbench can see is named so,
// with its figures; one bounded by nothing it sees is "not found", naming what was ruled out.
func TestEachLimitIsNamedWithItsFigures(t *testing.T) {
	base := Figures{Loaded: true, TargetCPUs: 1, CPUCores: 0.5, Memory: "1g", MemoryPeak: 200 << 20, GeneratorShare: 0.3, Duration: 10 * time.Second}
	with := func(edit func(*Figures)) Figures {
		f := base
		edit(&f)
		return f
	}
	for _, c := range []struct {
		name     string
		f        Figures
		kind     Kind
		evidence string
		ruledOut []string
	}{
		{"never loaded", with(func(f *Figures) { f.Loaded = false }), None, "", nil},
		{"bounded by CPU", with(func(f *Figures) { f.CPUCores = 0.97 }), CPU, "CPU: 0.97 of its 1 CPU", []string{"the generator"}},
		{"at the threshold", with(func(f *Figures) { f.TargetCPUs, f.CPUCores = 2, 1.8 }), CPU, "CPU: 0.90 of its 2 CPUs", nil},
		{"the generator, whatever the target's CPU", with(func(f *Figures) { f.Fault, f.CPUCores, f.GeneratorShare = fault.GeneratorDelayed, 0.99, 0.95 }), Generator, "the generator: generator-delayed, at 0.95", nil},
		{"a slow database server", with(func(f *Figures) { f.DBCPUs, f.DBCPUCores = 1, 0.96 }), DatabaseCPU, "the database server's CPU: 0.96 of its 1 CPU", []string{"CPU (0.50 of its 1 CPU, under 0.90; pressure not read)"}},
		{"memory", with(func(f *Figures) { f.MemoryPeak = 950 << 20 }), Memory, "memory: peak 93% of its 1g limit", []string{"CPU (0.50"}},
		{"a target that died", with(func(f *Figures) { f.Fault = fault.TargetDied }), Died, "the target died", nil},
		{"still compiling", with(func(f *Figures) { f.StillWarming, f.JITBusy = true, 7*time.Second }), JIT, "the JIT: compiling for 7s of the 10s phase", []string{"memory (peak 20% of its 1g limit)"}},
		{"a service iotbench did not start", with(func(f *Figures) { f.TargetCPUs = 0 }), Unavailable, "signals unavailable", nil},
		{"bounded by nothing iotbench sees", base, NotFound, "not found", []string{"the generator (0.30", "CPU (0.50 of its 1 CPU, under 0.90; pressure not read)", "memory (peak 20% of its 1g limit)"}},
		{"CPU in bursts", with(func(f *Figures) { f.PressureRead, f.CPUPressure = true, 0.31 }), CPU, "CPU in bursts: 0.50 of its 1 CPU on average, but some task waited for it 31% of the phase", []string{"the generator"}},
		{"CPU waits under the bar", with(func(f *Figures) { f.PressureRead, f.CPUPressure, f.MemoryPressure = true, 0.19, 0.02 }), NotFound, "not found",
			[]string{"CPU (0.50 of its 1 CPU, under 0.90; some task waited for it 19% of the phase)", "memory stalls (2% of the phase)"}},
		{"a database server short of CPU in bursts", with(func(f *Figures) { f.DBCPUs, f.DBCPUCores, f.DBPressureRead, f.DBCPUPressure = 1, 0.6, true, 0.4 }), DatabaseCPU,
			"the database server's CPU in bursts: 0.60 of its 1 CPU on average, but some task waited for it 40% of the phase", []string{"CPU (0.50"}},
		{"memory stalls below the peak's bar", with(func(f *Figures) { f.PressureRead, f.MemoryPressure = true, 0.12 }), Memory, "memory: some task stalled on it 12% of the phase", []string{"memory (peak 20% of its 1g limit)"}},
		{"threads full", with(func(f *Figures) {
			f.Signals = &signals.Phase{Pools: []signals.PoolUse{hikari(3), tomcat(200, 190, 40)}}
		}), Threads,
			"threads: tomcat 200 of 200 busy (190.0 on average), work waiting at 50% of the reads, 40 at most, with CPU at 0.50", []string{"the generator"}},
		{"a connection pool full", with(func(f *Figures) { f.Signals = &signals.Phase{Pools: []signals.PoolUse{hikari(9.5)}} }), Pool,
			"the pool: hikari 10 of 10 busy (9.5 on average), work waiting at", nil},
		{"a pool that queued, read below its size in its handoffs", with(func(f *Figures) {
			p := hikari(8)
			p.Waited = 0.8
			f.Signals = &signals.Phase{Pools: []signals.PoolUse{p}}
		}), Pool, "the pool: hikari 10 of 10 busy (8.0 on average), work waiting at 80% of the reads, 3 at most", nil},
		{"a pool rarely queued", with(func(f *Figures) {
			p := hikari(8)
			p.Waited = 0.3
			f.Signals = &signals.Phase{Pools: []signals.PoolUse{p}}
		}), NotFound, "not found", nil},
		{"a pool full comes before CPU in bursts", with(func(f *Figures) {
			f.PressureRead, f.CPUPressure, f.Signals = true, 0.4, &signals.Phase{Pools: []signals.PoolUse{tomcat(200, 199, 0)}}
		}), Threads, "threads: tomcat", nil},
		{"a pool just under the bar", with(func(f *Figures) { f.Signals = &signals.Phase{Pools: []signals.PoolUse{hikari(8.9)}} }), NotFound, "not found",
			[]string{"pools (busiest: hikari 10 of 10 busy (8.9 on average), work waiting at under 1% of the reads, 3 at most)"}},
		{"the event loop", with(func(f *Figures) {
			f.CPUCores, f.Signals = 0.85, &signals.Phase{LoopRead: true, Utilization: 0.97, DelayRead: true, Delay: 42 * time.Millisecond}
		}), EventLoop, "the event loop: busy 0.97 of the phase with CPU at 0.85; delay p99 up to 42.0 ms", nil},
		{"GC", with(func(f *Figures) {
			f.Signals = &signals.Phase{LoopRead: true, Utilization: 0.5, GCRead: true, GCShare: 0.23, GCMaxPause: 80 * time.Millisecond}
		}), GC, "GC: paused the target 23% of the phase, pauses up to 80.0 ms", []string{"the event loop (busy 0.50 of the phase)"}},
		{"signals read, nothing found", with(func(f *Figures) {
			f.Signals = &signals.Phase{GCRead: true, GCShare: 0.02, GCMaxPause: 4 * time.Millisecond}
		}), NotFound, "not found", []string{"GC (2% of the phase, pauses up to 4.0 ms)", "CPU (0.50"}},
		{"signals not read say why", with(func(f *Figures) { f.SignalsNote = "not served by the target" }), NotFound,
			"not found; the runtime's own signals (GC, threads, event loop, pools): not served by the target", nil},
		{"CPU comes before a full pool", with(func(f *Figures) { f.CPUCores, f.Signals = 0.95, &signals.Phase{Pools: []signals.PoolUse{hikari(10)}} }), CPU, "CPU: 0.95", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := Of(c.f)
			if l.Kind != c.kind || !strings.Contains(l.Evidence, c.evidence) {
				t.Errorf("limit %q %q, want %q with %q", l.Kind, l.Evidence, c.kind, c.evidence)
			}
			ruled := strings.Join(l.RuledOut, "; ")
			for _, r := range c.ruledOut {
				if !strings.Contains(ruled, r) {
					t.Errorf("ruled out %q, want it to name %q", ruled, r)
				}
			}
			if c.kind == NotFound && !strings.Contains(l.String(), "ruled out: ") {
				t.Errorf("%q: a limit not found says what was ruled out", l.String())
			}
		})
	}
}

func hikari(mean float64) signals.PoolUse {
	return signals.PoolUse{Name: "hikari", Kind: "connections", Size: 10, BusyMax: 10, BusyMean: mean, WaitingRead: true, WaitingMax: 3}
}

func tomcat(size int, mean float64, waiting int) signals.PoolUse {
	return signals.PoolUse{Name: "tomcat", Kind: "threads", Size: size, BusyMax: size, BusyMean: mean, WaitingRead: true, WaitingMax: waiting, Waited: 0.5}
}

func TestPoolUseSaysWhatWaited(t *testing.T) {
	cases := []struct {
		p    signals.PoolUse
		want string
	}{
		{signals.PoolUse{Name: "fanout", Size: 10}, "fanout 0 of 10 busy (0.0 on average)"},
		{signals.PoolUse{Name: "fanout", Size: 10, WaitingRead: true}, "fanout 0 of 10 busy (0.0 on average), none waiting"},
		{signals.PoolUse{Name: "hikari", Size: 10, BusyMax: 10, BusyMean: 9.6, WaitingRead: true, WaitingMax: 140, Waited: 0.8}, "hikari 10 of 10 busy (9.6 on average), work waiting at 80% of the reads, 140 at most"},
		{signals.PoolUse{Name: "hikari", Size: 10, BusyMax: 10, BusyMean: 9, WaitingRead: true, WaitingMax: 1, Waited: 0.002}, "hikari 10 of 10 busy (9.0 on average), work waiting at under 1% of the reads, 1 at most"},
	}
	for _, c := range cases {
		if got := poolUse(c.p); got != c.want {
			t.Errorf("poolUse(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
