package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/signals"
)

// SampleEvery is how often the target's memory is sampled during the measured phase; its CPU is
// a counter, exact whatever the interval.
const SampleEvery = 200 * time.Millisecond

// meter observes the measured phase: the target's resources, when its instance can be observed,
// the generator's own CPU, and what else ran on their CPUs.
type meter struct {
	src      resources.Source
	watch    *resources.Watch
	genCPU   time.Duration
	began    time.Time
	problems []string
	// unmeasured says why the target's resources are not in the row; left out of its warnings
	// when the target died and the row names the cause, which says it better.
	unmeasured []string

	generatorCPUs []int
	// hostCPUs are the generator's and the target's CPUs together; nil when either is unknown
	// (an unpinned generator, a target not in a container).
	hostCPUs []int
	machine  resources.Host       // where hostCPUs are read
	host     *resources.HostWatch // nil when hostCPUs cannot be read
	// helperCPU is the CPU time the measurement's helper processes (the downstream service)
	// spent over the phase: its own work on those CPUs, not others'.
	helperCPU time.Duration
	// disturbed says why other work on the CPUs makes the phase suspect; empty when nothing did.
	disturbed string
	// perSecond is the target's usage second by second over the phase, for its timeline.
	perSecond []resources.SecondUsage

	// The database server's cgroup and its sampling over the phase; nil for the embedded store.
	dbSrc   resources.Source
	dbWatch *resources.Watch
	dbCPUs  []int

	// signalsURL is the target's runtime signals (empty: none to read, signalsNote says why);
	// signalsWatch reads them over the phase.
	signalsURL   string
	signalsNote  string
	signalsWatch *signals.Watch
}

// Why a phase's runtime signals were not read, as the row's signals column says it.
const (
	signalsOff        = "off (--signals=false)"
	signalsNotStarted = "unavailable: a service iotbench did not start serves no signals port of iotbench's"
)

// observeDatabase adds the cell's database server, on cpus, to what m measures: its resources,
// and its CPU as the phase's own work rather than a neighbour's. db may be nil (embedded).
func (m *meter) observeDatabase(db container.Database, cpus string) {
	if db == nil {
		return
	}
	src, err := db.Resources()
	if err != nil {
		m.problems = append(m.problems, "database server resources not measured: "+err.Error())
		return
	}
	m.dbSrc = src
	m.dbCPUs, _ = cpuset.Parse(cpus, cpuset.MaxCPUs)
	if m.hostCPUs != nil {
		m.hostCPUs = cpuset.Union(m.hostCPUs, m.dbCPUs)
	}
}

// newMeter prepares what can be read of inst; a target whose resources cannot be read is still
// measured, with a warning.
func newMeter(inst container.Instance, row *results.Row) *meter {
	m := &meter{signalsNote: signalsNotStarted}
	obs, ok := inst.(container.Observed)
	if !ok {
		return m
	}
	row.Startup, row.ImageSize = obs.Startup(), obs.ImageSize()
	if m.signalsURL, m.signalsNote = obs.Signals(), ""; m.signalsURL == "" {
		m.signalsNote = signalsOff
	}
	src, err := obs.Resources()
	if err != nil {
		m.unmeasured = append(m.unmeasured, "target resources not measured: "+err.Error())
		return m
	}
	m.src = src
	return m
}

// observe records in row what the target says of itself, with a warning where that differs from
// the cpuset and memory it was given, and returns the meter of its measured phase.
// generatorCPUs is the generator's cpuset (empty: not pinned).
func observe(row *results.Row, inst container.Instance, spec container.Spec, generatorCPUs []int, machine resources.Host) *meter {
	row.TargetRuntime = string(bytes.TrimSpace(inst.Health()))
	cpus, _ := cpuset.Parse(spec.CPUSet, cpuset.MaxCPUs)
	warn(row, runtimeView(row, inst.Health(), len(cpus), spec.Memory)...)
	m := newMeter(inst, row)
	m.generatorCPUs, m.machine = generatorCPUs, machine
	if len(generatorCPUs) > 0 && len(cpus) > 0 {
		m.hostCPUs = cpuset.Union(generatorCPUs, cpus)
	}
	return m
}

// record fills row with res and with what m observed over the measured phase; warn adds what
// could not be observed.
func (m *meter) record(row *results.Row, res load.Result) {
	fill(row, res)
	m.stop(row, res)
	blame(row)
}

// blame adds to a generator fault's reason its cause, by the share of its CPUs the generator
// used over the phase (load.WithGeneratorCause): the engine says what it did, not why.
func blame(row *results.Row) { row.InvalidReason = blamed(*row, row.InvalidReason) }

// blamed is reason, the engine's, as blame leaves it in row.
func blamed(row results.Row, reason string) string {
	return load.WithGeneratorCause(reason, row.Fault, row.GeneratorCPUPercent/100)
}

// warn adds to row's warnings what m could not observe; cause is what became of the target
// (empty: it ran to the end).
func (m *meter) warn(row *results.Row, cause string) {
	if cause == "" {
		warn(row, m.unmeasured...)
	}
	warn(row, m.problems...)
}

// start begins the measured phase.
func (m *meter) start() {
	m.began = time.Now()
	m.genCPU, _ = resources.OwnCPU()
	if m.hostCPUs != nil && m.src != nil {
		if w, err := m.machine.Watch(m.hostCPUs); err == nil {
			m.host = &w
		}
	}
	if m.dbSrc != nil {
		if w, err := resources.Start(m.dbSrc, SampleEvery); err == nil {
			m.dbWatch = w
		} else {
			m.problems = append(m.problems, "database server resources not measured: "+err.Error())
		}
	}
	if m.signalsURL != "" {
		if w, err := signals.Start(m.signalsURL, signals.Every); err == nil {
			m.signalsWatch = w
		} else {
			m.signalsNote = "unavailable: " + err.Error()
		}
	}
	if m.src == nil {
		return
	}
	w, err := resources.Start(m.src, SampleEvery)
	if err != nil {
		m.unmeasured = append(m.unmeasured, "target resources not measured: "+err.Error())
		return
	}
	m.watch = w
}

// stop ends the measured phase and fills row. The generator's CPU is this process's and its
// shards' (res.ShardCPU: a child's getrusage is not this one's until it ends, and then with its
// warm-up); the shards on other hosts add their CPUs (res.RemoteGeneratorCPUs) to what it is a
// share of, and their time is not taken from this machine's CPUs.
func (m *meter) stop(row *results.Row, res load.Result) {
	remoteCPUs, remoteCPU := res.RemoteGeneratorCPUs, res.RemoteGeneratorCPU
	if m.began.IsZero() {
		return // the load never reached its measured phase
	}
	wall := time.Since(m.began)
	genCPUs := generatorCPUs(m.generatorCPUs) + remoteCPUs
	if now, err := resources.OwnCPU(); err == nil && wall > 0 {
		row.GeneratorCPUCores = float64(now-m.genCPU+res.ShardCPU) / float64(wall)
		row.GeneratorCPUPercent = 100 * row.GeneratorCPUCores / float64(genCPUs)
	}
	targetMeasured := false
	if m.watch != nil {
		u, err := m.watch.Stop()
		m.perSecond = m.watch.PerSecond()
		m.watch = nil
		if err != nil {
			m.unmeasured = append(m.unmeasured, "target resources not measured: "+err.Error())
		} else {
			fillUsage(row, u)
			targetMeasured = true
		}
	}
	m.stopSignals(row)
	dbMeasured := m.dbSrc == nil
	if m.dbWatch != nil {
		u, err := m.dbWatch.Stop()
		m.dbWatch = nil
		if err != nil {
			m.problems = append(m.problems, "database server resources not measured: "+err.Error())
		} else {
			row.DBCPUCores = u.CPUCores
			if len(m.dbCPUs) > 0 {
				row.DBCPUPercent = 100 * u.CPUCores / float64(len(m.dbCPUs))
			}
			row.DBMemoryPeak, row.DBMemoryMean = int64(u.MemoryPeak), int64(u.MemoryMean)
			row.DBPressureRead, row.DBCPUPressure = u.PressureRead, u.CPUPressure
			dbMeasured = true
		}
	}
	// Others' work is the CPUs' time less the generator's, the target's, its database server's
	// and the helpers': without those, it cannot be told.
	if m.host != nil && targetMeasured && dbMeasured && wall > 0 {
		own := time.Duration((row.GeneratorCPUCores+row.CPUCores+row.DBCPUCores)*float64(wall)) - remoteCPU + m.helperCPU
		if others, steal, err := m.host.Others(own); err == nil {
			if m.disturbed = resources.Disturbance(wall, others, steal, m.hostCPUs, "the generator's and the target's"); m.disturbed != "" {
				row.Disturbed = true
				m.problems = append(m.problems, m.disturbed)
			}
		}
	}
}

// stopSignals ends the reading of the target's signals and puts them, or why there are none,
// in row.
func (m *meter) stopSignals(row *results.Row) {
	if m.signalsWatch != nil {
		p, err := m.signalsWatch.Stop()
		m.signalsWatch = nil
		if err != nil {
			m.signalsNote = "unavailable: " + err.Error()
		} else {
			row.Signals, row.SignalsRead, m.signalsNote = p, true, ""
		}
	}
	row.SignalsNote = m.signalsNote
}

// discard stops sampling when the phase did not end normally (cancelled, load failed).
func (m *meter) discard() {
	if m.signalsWatch != nil {
		m.signalsWatch.Stop()
		m.signalsWatch = nil
	}
	if m.watch != nil {
		m.watch.Stop()
		m.watch = nil
	}
	if m.dbWatch != nil {
		m.dbWatch.Stop()
		m.dbWatch = nil
	}
}

func fillUsage(row *results.Row, u resources.Usage) {
	row.CPUCores = u.CPUCores
	if cpus, err := cpuset.Parse(row.CPUSet, cpuset.MaxCPUs); err == nil && len(cpus) > 0 {
		row.CPUPercent = 100 * u.CPUCores / float64(len(cpus))
	}
	row.MemoryPeak, row.MemoryMean = int64(u.MemoryPeak), int64(u.MemoryMean)
	row.PressureRead, row.CPUPressure, row.MemoryPressure = u.PressureRead, u.CPUPressure, u.MemoryPressure
	if u.CPUCores > 0 {
		row.RPSPerCore = row.ThroughputRPS / u.CPUCores
	}
	if row.Successes > 0 {
		row.CPUPerRequest = time.Duration(u.CPUCores * float64(u.Wall) / float64(row.Successes))
	}
	if u.MemoryPeak > 0 {
		row.RPSPerGiB = row.ThroughputRPS / (float64(u.MemoryPeak) / (1 << 30))
	}
}

// generatorCPUs is how many CPUs the generator may use: its cpuset, or those this process may
// run on when the plan gave it none (a run against a service on loopback). Not GOMAXPROCS: the
// generator runs with spare Ps (hostinfo.PinProcess).
func generatorCPUs(pinned []int) int {
	if len(pinned) > 0 {
		return len(pinned)
	}
	if cpus, err := hostinfo.AllowedCPUs(); err == nil && len(cpus) > 0 {
		return len(cpus)
	}
	return runtime.NumCPU()
}

// runtimeView records what the target's runtime believes it has (its /health answer) and says
// where that differs from what it was given: a runtime sizing its thread pools or heap for
// resources it does not have. cpus is the cpuset's size, memory the limit in bytes (0: none).
func runtimeView(row *results.Row, health []byte, cpus int, memory int64) []string {
	var h struct {
		AvailableProcessors *int   `json:"availableProcessors"`
		MaxHeapBytes        *int64 `json:"maxHeapBytes"`
	}
	if json.Unmarshal(health, &h) != nil {
		return nil
	}
	var warnings []string
	if h.AvailableProcessors != nil {
		row.RuntimeProcessors = *h.AvailableProcessors
		if cpus > 0 && *h.AvailableProcessors != cpus {
			warnings = append(warnings, fmt.Sprintf("the runtime sees %d processor(s) but its cpuset has %d", *h.AvailableProcessors, cpus))
		}
	}
	if h.MaxHeapBytes != nil {
		row.RuntimeMaxHeap = *h.MaxHeapBytes
		if memory > 0 && *h.MaxHeapBytes > memory {
			warnings = append(warnings, fmt.Sprintf("the runtime's max heap (%d MiB) exceeds the memory limit (%d MiB)", *h.MaxHeapBytes>>20, memory>>20))
		}
	}
	return warnings
}

// warn adds warnings to row's.
func warn(row *results.Row, warnings ...string) {
	if len(warnings) == 0 {
		return
	}
	all := warnings
	if row.Warnings != "" {
		all = append([]string{row.Warnings}, warnings...)
	}
	row.Warnings = strings.Join(all, "; ")
}
