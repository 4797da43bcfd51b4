package experiment

import (
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/units"
)

// Metric is a figure of a row that a published table reported and a claim can compare.
type Metric struct {
	Name  string
	Label string // in table headers
	// Higher says more is better (throughput); else less is (latency, timeouts).
	Higher bool
	Value  func(results.Row) float64
	Format func(float64) string
	// OfSuccesses says the metric describes successful answers (latency): a trial with none has no
	// value, not 0.
	OfSuccesses bool
}

var metrics = []Metric{
	{"throughput_rps", "req/s", true, func(r results.Row) float64 { return r.ThroughputRPS }, count, false},
	{"transfer_bps", "transfer/s", true, func(r results.Row) float64 { return r.TransferPerSecond() }, bytes, false},
	{"latency_mean_ms", "mean latency", false, func(r results.Row) float64 { return float64(r.LatencyMean) / 1e6 }, millis, true},
	{"latency_p50_ms", "p50", false, func(r results.Row) float64 { return float64(r.LatencyP50) / 1e6 }, millis, true},
	{"latency_p99_ms", "p99", false, func(r results.Row) float64 { return float64(r.LatencyP99) / 1e6 }, millis, true},
	{"timeouts", "timeouts", false, func(r results.Row) float64 { return float64(r.Timeouts) }, count, false},
	{"error_percent", "errors", false, func(r results.Row) float64 {
		if r.Requests == 0 {
			return 0
		}
		return 100 * float64(r.Errors) / float64(r.Requests)
	}, percent, false},
	{"cpu_cores", "CPU cores", false, func(r results.Row) float64 { return r.CPUCores }, cores, false},
	{"memory_peak_mib", "peak memory", false, func(r results.Row) float64 { return float64(r.MemoryPeak) / (1 << 20) }, mib, false},
}

// MetricNamed is the metric of that name; nil when there is none.
func MetricNamed(name string) *Metric {
	for i := range metrics {
		if metrics[i].Name == name {
			return &metrics[i]
		}
	}
	return nil
}

// MetricNames are the names a file may use, in order.
func MetricNames() []string {
	out := make([]string, len(metrics))
	for i, m := range metrics {
		out[i] = m.Name
	}
	return out
}

// The units of published figures: every figure is written by internal/units.
var (
	count   = units.Count
	bytes   = units.Bytes
	millis  = units.MillisOrSeconds
	percent = units.Percent
	cores   = units.Cores
	mib     = units.MiB
)
