package experiment

import (
	"fmt"
	"math"

	"github.com/iotbench/iotbench/internal/results"
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

// count writes a number with thousands separators and no more than one decimal below 100.
func count(v float64) string {
	if math.IsInf(v, 0) {
		return "∞"
	}
	if math.Abs(v) < 100 && v != math.Trunc(v) {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if v < 0 {
		return "-" + string(out)
	}
	return string(out)
}

func bytes(v float64) string {
	switch {
	case math.IsInf(v, 0):
		return "∞"
	case v >= 1e6:
		return fmt.Sprintf("%.2f MB", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f kB", v/1e3)
	}
	return fmt.Sprintf("%.0f B", v)
}

func millis(v float64) string {
	switch {
	case math.IsInf(v, 0):
		return "∞"
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

func percent(v float64) string {
	if v != 0 && v < 0.1 {
		return fmt.Sprintf("%.3f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}

func cores(v float64) string { return fmt.Sprintf("%.2f", v) }

func mib(v float64) string { return fmt.Sprintf("%.0f MiB", v) }
