// Package results holds one row per measured cell (scenario, target, trial) and its CSV form.
// Rows are written as each cell finishes, flushed and synced, so an interrupted run keeps every
// cell it measured. The columns are documented in docs/results.md.
package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Row is one measured cell and the settings that produced it.
type Row struct {
	Scenario string
	Target   string
	Trial    int
	Mode     string // open or closed

	RequestedRPS  int // open loop; 0 for closed
	Connections   int // the generator's connection bound (closed loop: the connections)
	PeakInFlight  int64
	AchievedRPS   float64
	ThroughputRPS float64 // successes per second

	Requests, Successes, Errors, Timeouts int64
	SuccessRatio                          float64
	StatusCodes                           string

	LatencyMean, LatencyP50, LatencyP90, LatencyP99, LatencyP999, LatencyMax time.Duration
	SendLagP99, SendLagMax                                                   time.Duration

	Duration, Warmup time.Duration
	Valid            bool
	InvalidReason    string

	StartedAt       time.Time
	CPUSet          string // the target's
	GeneratorCPUSet string
	Memory          string
	ImageID         string
	TargetRuntime   string // what the target's /health reported
	Version         string // iotbench
	GitCommit       string
	HostCPU         string
	Kernel          string
	DockerVersion   string
}

// codec reads and writes one field of a Row as CSV text.
type codec struct {
	get func(*Row) string
	set func(*Row, string) error
}

type column struct {
	name string
	codec
}

func str(f func(*Row) *string) codec {
	return codec{func(r *Row) string { return *f(r) }, func(r *Row, v string) error { *f(r) = v; return nil }}
}

func integer[T int | int64](f func(*Row) *T) codec {
	return codec{func(r *Row) string { return strconv.FormatInt(int64(*f(r)), 10) },
		func(r *Row, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			*f(r) = T(n)
			return err
		}}
}

func float(prec int, f func(*Row) *float64) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(*f(r), 'f', prec, 64) },
		func(r *Row, v string) (err error) { *f(r), err = strconv.ParseFloat(v, 64); return err }}
}

// millis writes durations in milliseconds with microsecond resolution.
func millis(f func(*Row) *time.Duration) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(float64(*f(r))/1e6, 'f', 3, 64) },
		func(r *Row, v string) error {
			ms, err := strconv.ParseFloat(v, 64)
			*f(r) = time.Duration(ms * 1e6).Round(time.Microsecond)
			return err
		}}
}

func seconds(f func(*Row) *time.Duration) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(f(r).Seconds(), 'f', -1, 64) },
		func(r *Row, v string) error {
			s, err := strconv.ParseFloat(v, 64)
			*f(r) = time.Duration(s * 1e9).Round(time.Millisecond)
			return err
		}}
}

func col(name string, c codec) column { return column{name, c} }

// columns is the CSV layout, in order. Appending is compatible; renaming or removing is not.
var columns = []column{
	col("scenario", str(func(r *Row) *string { return &r.Scenario })),
	col("target", str(func(r *Row) *string { return &r.Target })),
	col("trial", integer(func(r *Row) *int { return &r.Trial })),
	col("mode", str(func(r *Row) *string { return &r.Mode })),
	col("requested_rps", integer(func(r *Row) *int { return &r.RequestedRPS })),
	col("connections", integer(func(r *Row) *int { return &r.Connections })),
	col("achieved_rps", float(2, func(r *Row) *float64 { return &r.AchievedRPS })),
	col("throughput_rps", float(2, func(r *Row) *float64 { return &r.ThroughputRPS })),
	col("requests", integer(func(r *Row) *int64 { return &r.Requests })),
	col("successes", integer(func(r *Row) *int64 { return &r.Successes })),
	col("errors", integer(func(r *Row) *int64 { return &r.Errors })),
	col("timeouts", integer(func(r *Row) *int64 { return &r.Timeouts })),
	col("success_ratio", float(6, func(r *Row) *float64 { return &r.SuccessRatio })),
	col("latency_mean_ms", millis(func(r *Row) *time.Duration { return &r.LatencyMean })),
	col("latency_p50_ms", millis(func(r *Row) *time.Duration { return &r.LatencyP50 })),
	col("latency_p90_ms", millis(func(r *Row) *time.Duration { return &r.LatencyP90 })),
	col("latency_p99_ms", millis(func(r *Row) *time.Duration { return &r.LatencyP99 })),
	col("latency_p999_ms", millis(func(r *Row) *time.Duration { return &r.LatencyP999 })),
	col("latency_max_ms", millis(func(r *Row) *time.Duration { return &r.LatencyMax })),
	col("duration_s", seconds(func(r *Row) *time.Duration { return &r.Duration })),
	col("warmup_s", seconds(func(r *Row) *time.Duration { return &r.Warmup })),
	col("valid", codec{func(r *Row) string { return strconv.FormatBool(r.Valid) },
		func(r *Row, v string) (err error) { r.Valid, err = strconv.ParseBool(v); return err }}),
	col("invalid_reason", str(func(r *Row) *string { return &r.InvalidReason })),
	col("send_lag_p99_ms", millis(func(r *Row) *time.Duration { return &r.SendLagP99 })),
	col("send_lag_max_ms", millis(func(r *Row) *time.Duration { return &r.SendLagMax })),
	col("peak_in_flight", integer(func(r *Row) *int64 { return &r.PeakInFlight })),
	col("status_codes", str(func(r *Row) *string { return &r.StatusCodes })),
	col("started_at", codec{func(r *Row) string { return r.StartedAt.UTC().Format(time.RFC3339) },
		func(r *Row, v string) (err error) { r.StartedAt, err = time.Parse(time.RFC3339, v); return err }}),
	col("cpuset", str(func(r *Row) *string { return &r.CPUSet })),
	col("generator_cpuset", str(func(r *Row) *string { return &r.GeneratorCPUSet })),
	col("memory", str(func(r *Row) *string { return &r.Memory })),
	col("image_id", str(func(r *Row) *string { return &r.ImageID })),
	col("target_runtime", str(func(r *Row) *string { return &r.TargetRuntime })),
	col("iotbench_version", str(func(r *Row) *string { return &r.Version })),
	col("git_commit", str(func(r *Row) *string { return &r.GitCommit })),
	col("host_cpu", str(func(r *Row) *string { return &r.HostCPU })),
	col("kernel", str(func(r *Row) *string { return &r.Kernel })),
	col("docker_version", str(func(r *Row) *string { return &r.DockerVersion })),
}

// Header is the CSV header line's fields.
func Header() []string {
	h := make([]string, len(columns))
	for i, c := range columns {
		h[i] = c.name
	}
	return h
}

// Writer appends rows to a CSV file, each one flushed and synced before Write returns.
type Writer struct {
	f *os.File
	w *csv.Writer
}

// Create makes a new CSV file with its header. It refuses to overwrite an existing file.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, w: csv.NewWriter(f)}
	if err := w.write(Header()); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Write appends one row and makes it durable.
func (w *Writer) Write(r Row) error {
	rec := make([]string, len(columns))
	for i, c := range columns {
		rec[i] = c.get(&r)
	}
	return w.write(rec)
}

func (w *Writer) write(rec []string) error {
	if err := w.w.Write(rec); err != nil {
		return err
	}
	w.w.Flush()
	if err := w.w.Error(); err != nil {
		return err
	}
	return w.f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Read parses a results CSV. Columns it does not know are ignored, so that newer files stay
// readable; a missing known column is an error naming it.
func Read(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	index := map[string]int{}
	for i, name := range head {
		index[name] = i
	}
	var missing []string
	for _, c := range columns {
		if _, ok := index[c.name]; !ok {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("not an iotbench results file: missing columns %v", missing)
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		var row Row
		for _, c := range columns {
			if err := c.set(&row, rec[index[c.name]]); err != nil {
				return nil, fmt.Errorf("line %d, column %s: %w", line, c.name, err)
			}
		}
		rows = append(rows, row)
	}
}

// ReadFile reads a results CSV from disk.
func ReadFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
