package results

import (
	"time"

	"github.com/iotbench/iotbench/internal/units"
)

// Metric is a figure of a row that trials are summarized, ranked, compared and claimed on: the one
// registry of figures that compare, the report and the published experiments' claims share.
type Metric struct {
	// Name is how the command line names it (--fail-on throughput:-5%).
	Name string
	// Key is how documents name it: the report's JSON and the experiments' claims
	// (throughput_rps, latency_p99_ms).
	Key string
	// Label heads a table column.
	Label string
	// Unit is "rps", "ms", "%", "cores", "MiB", "µs", "B/s" or "": how the figure is shown.
	Unit string
	// HigherIsBetter tells a gain from a regression.
	HigherIsBetter bool
	// Value is the figure of a row, in Unit; nil for a figure of searches, not rows (max).
	Value func(Row) float64
	// Optional figures are not always recorded (older files, services iotbench did not start):
	// a cell where every value is 0 skips them.
	Optional bool
	// OfSuccesses says the figure describes successful answers (latency): a trial with none has
	// no value, not 0.
	OfSuccesses bool
	// Compared says `iotbench compare` compares it for every cell.
	Compared bool
	// Format writes a value for a reader.
	Format func(float64) string
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Metrics are every figure, the compared ones first in the order compare shows them.
var Metrics = []Metric{
	{Name: "throughput", Key: "throughput_rps", Label: "req/s", Unit: "rps", HigherIsBetter: true, Compared: true, Format: units.Count,
		Value: func(r Row) float64 { return r.ThroughputRPS }},
	{Name: "success", Key: "success_percent", Label: "success", Unit: "%", HigherIsBetter: true, Compared: true, Format: units.Percent,
		Value: func(r Row) float64 { return 100 * r.SuccessRatio }},
	{Name: "p50", Key: "latency_p50_ms", Label: "p50", Unit: "ms", OfSuccesses: true, Compared: true, Format: units.MillisOrSeconds,
		Value: func(r Row) float64 { return ms(r.LatencyP50) }},
	{Name: "p99", Key: "latency_p99_ms", Label: "p99", Unit: "ms", OfSuccesses: true, Compared: true, Format: units.MillisOrSeconds,
		Value: func(r Row) float64 { return ms(r.LatencyP99) }},
	{Name: "p99.9", Key: "latency_p999_ms", Label: "p99.9", Unit: "ms", OfSuccesses: true, Compared: true, Format: units.MillisOrSeconds,
		Value: func(r Row) float64 { return ms(r.LatencyP999) }},
	// The target's resources over the measured phase: the same work on fewer is better.
	{Name: "cpu", Key: "cpu_cores", Label: "CPU cores", Unit: "cores", Optional: true, Compared: true, Format: units.Cores,
		Value: func(r Row) float64 { return r.CPUCores }},
	{Name: "memory", Key: "memory_peak_mib", Label: "peak memory", Unit: "MiB", Optional: true, Compared: true, Format: units.MiB,
		Value: func(r Row) float64 { return float64(r.MemoryPeak) / (1 << 20) }},
	// CPU time per success: what the work costs, whatever the neighbours do to its latency.
	{Name: "cpu-per-request", Key: "cpu_us_per_request", Label: "CPU per request", Unit: "µs", Optional: true, Compared: true, Format: units.Count,
		Value: func(r Row) float64 { return float64(r.CPUPerRequest) / 1e3 }},

	{Name: "transfer", Key: "transfer_bps", Label: "transfer/s", Unit: "B/s", HigherIsBetter: true, Format: units.Bytes,
		Value: func(r Row) float64 { return r.TransferPerSecond() }},
	{Name: "mean", Key: "latency_mean_ms", Label: "mean latency", Unit: "ms", OfSuccesses: true, Format: units.MillisOrSeconds,
		Value: func(r Row) float64 { return ms(r.LatencyMean) }},
	{Name: "timeouts", Key: "timeouts", Label: "timeouts", Format: units.Count,
		Value: func(r Row) float64 { return float64(r.Timeouts) }},
	{Name: "errors", Key: "error_percent", Label: "errors", Unit: "%", Format: units.Percent,
		Value: func(r Row) float64 {
			if r.Requests == 0 {
				return 0
			}
			return 100 * float64(r.Errors) / float64(r.Requests)
		}},
	{Name: "rps-per-core", Key: "rps_per_core", Label: "rps per core", Unit: "rps", HigherIsBetter: true, Optional: true, Format: units.Count,
		Value: func(r Row) float64 { return r.RPSPerCore }},
	{Name: "rps-per-gib", Key: "rps_per_gib", Label: "rps per GiB", Unit: "rps", HigherIsBetter: true, Optional: true, Format: units.Count,
		Value: func(r Row) float64 { return r.RPSPerGiB }},
	// The PostgreSQL server's, beside its target's.
	{Name: "db-cpu", Key: "db_cpu_cores", Label: "database CPU cores", Unit: "cores", Optional: true, Format: units.Cores,
		Value: func(r Row) float64 { return r.DBCPUCores }},
	{Name: "db-memory", Key: "db_memory_peak_mib", Label: "database peak memory", Unit: "MiB", Optional: true, Format: units.MiB,
		Value: func(r Row) float64 { return float64(r.DBMemoryPeak) / (1 << 20) }},
	// A --find-max target's maximum sustainable rate: a figure of each search, not of a row.
	{Name: "max", Key: "max_rps", Label: "max rps", Unit: "rps", HigherIsBetter: true, Compared: true, Format: units.Count},
}

// Of is m's figure for each row, in order.
func (m Metric) Of(rows []Row) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = m.Value(r)
	}
	return out
}

// OfRows says m is a figure of rows (every metric but a search's maximum).
func (m Metric) OfRows() bool { return m.Value != nil }

// RowMetrics are the metrics that are figures of rows.
func RowMetrics() []Metric {
	var out []Metric
	for _, m := range Metrics {
		if m.OfRows() {
			out = append(out, m)
		}
	}
	return out
}

// MetricNamed returns the metric called name on the command line.
func MetricNamed(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricKeyed returns the metric of that document key; nil when there is none.
func MetricKeyed(key string) *Metric {
	for i := range Metrics {
		if Metrics[i].Key == key {
			return &Metrics[i]
		}
	}
	return nil
}

// MustMetric is the metric called name, for the figures a package names in its code.
func MustMetric(name string) Metric {
	m, ok := MetricNamed(name)
	if !ok {
		panic("results: no metric " + name)
	}
	return m
}
