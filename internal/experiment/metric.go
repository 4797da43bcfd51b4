package experiment

import (
	"slices"

	"github.com/iotbench/iotbench/internal/results"
)

// Metric is a figure a published table reported and a claim can compare: results' registry.
type Metric = results.Metric

// claimable are the keys of the figures a file may name, in the order they are listed.
var claimable = []string{"throughput_rps", "transfer_bps", "latency_mean_ms", "latency_p50_ms", "latency_p99_ms",
	"timeouts", "error_percent", "cpu_cores", "memory_peak_mib"}

// MetricNamed is the metric of that key; nil when there is none a file may name.
func MetricNamed(name string) *Metric {
	if !slices.Contains(claimable, name) {
		return nil
	}
	return results.MetricKeyed(name)
}

// MetricNames are the names a file may use, in order.
func MetricNames() []string { return slices.Clone(claimable) }
