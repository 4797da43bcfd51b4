package results

// Metric is a figure of a row that trials are summarized and compared on.
type Metric struct {
	// Name is how the command line names it (--fail-on throughput:-5%).
	Name string
	// Unit is "rps", "ms", "%", "cores", "MiB" or "µs": how the figure is shown.
	Unit string
	// HigherIsBetter tells a gain from a regression.
	HigherIsBetter bool
	// Value is the figure of a row, in Unit.
	Value func(Row) float64
	// Optional figures are not always recorded (older files, services iotbench did not start):
	// a cell where every value is 0 skips them.
	Optional bool
}

// Metrics are the figures compared, in the order they are shown.
var Metrics = []Metric{
	{"throughput", "rps", true, func(r Row) float64 { return r.ThroughputRPS }, false},
	{"success", "%", true, func(r Row) float64 { return 100 * r.SuccessRatio }, false},
	{"p50", "ms", false, func(r Row) float64 { return float64(r.LatencyP50) / 1e6 }, false},
	{"p99", "ms", false, func(r Row) float64 { return float64(r.LatencyP99) / 1e6 }, false},
	{"p99.9", "ms", false, func(r Row) float64 { return float64(r.LatencyP999) / 1e6 }, false},
	// The target's resources over the measured phase: the same work on fewer is better.
	{"cpu", "cores", false, func(r Row) float64 { return r.CPUCores }, true},
	{"memory", "MiB", false, func(r Row) float64 { return float64(r.MemoryPeak) / (1 << 20) }, true},
	// CPU time per success: what the work costs, whatever the neighbours do to its latency.
	{"cpu-per-request", "µs", false, func(r Row) float64 { return float64(r.CPUPerRequest) / 1e3 }, true},
}

// Of is m's figure for each row, in order.
func (m Metric) Of(rows []Row) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = m.Value(r)
	}
	return out
}

// MetricNamed returns the metric called name.
func MetricNamed(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
