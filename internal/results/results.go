// Package results holds one row per measured cell (scenario, target, trial) and its CSV form.
// Rows are written as each cell finishes, flushed and synced, so an interrupted run keeps every
// cell it measured. The columns are documented in docs/results.md.
package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/limit"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/signals"
)

// The variants of a paired run's rows: every round measures the baseline and the candidate of
// each target back to back; an A/A round measures the baseline twice.
const (
	VariantBase      = "base"
	VariantCandidate = "candidate"
	VariantAA1       = "aa1"
	VariantAA2       = "aa2"
)

// FindMaxSuffix ends the scenario name of `run --find-max` rows, one a step: their rates differ
// from step to step, so they are never compared with a scenario's fixed-rate rows, nor with each other.
const FindMaxSuffix = ".find-max"

// Row is one measured cell and the settings that produced it.
type Row struct {
	Scenario string
	Target   string
	Trial    int
	// Search is the find-max search a step belongs to, from 1, counting the target's searches
	// (Trial numbers its steps across them); 0 in a row of a fixed load.
	Search int
	Mode   string // open or closed

	RequestedRPS int // open loop; 0 for closed
	// Arrival is the open loop's arrival process (uniform, poisson); empty in closed loop and in
	// rows older than the column (schema 8 and before), whose open loops were uniform.
	Arrival string
	// Stages are the open loop's rates over time (load.FormatStages): the cell's in its row, one
	// stage's in each stage's row; empty at one constant rate. Stage numbers a stage's row (from
	// 1, its scenario <scenario>.stage-<n>); 0 in the cell's row.
	Stages string
	Stage  int
	// Think is the closed loop's think time (load.Think's text: 100ms, exp:100ms); empty: none.
	Think string
	// Streams is a mix's layout (load.FormatKinds: ingest:80,page:20,probe@50), in the cell's
	// row and each request's; empty for a cell of one request. Request names a request's row
	// (its scenario <scenario>.request-<name>); empty in the cell's row, its total.
	Streams       string
	Request       string
	Connections   int // the generator's connection bound (closed loop: the connections)
	PeakInFlight  int64
	AchievedRPS   float64
	ThroughputRPS float64 // successes per second

	Requests, Successes, Errors, Timeouts int64
	SuccessRatio                          float64
	// BytesReceived is every byte of the answers read within the measured phase, heads and
	// bodies, failed ones too: what wrk's Transfer/sec divides by the duration (TransferPerSecond).
	BytesReceived int64
	StatusCodes   string

	LatencyMean, LatencyP50, LatencyP90, LatencyP99, LatencyP999, LatencyMax time.Duration
	SendLagP99, SendLagMax                                                   time.Duration
	// GeneratorDelayP99 is the generator's own share of the latencies at p99 (load.Result.OwnDelay).
	GeneratorDelayP99 time.Duration

	Duration, Warmup time.Duration
	// Timeout is the per-request timeout: a slower answer is an error (a timeout).
	Timeout time.Duration
	Valid   bool
	// Fault is why the row is invalid (fault.None when valid): what code decides by.
	// InvalidReason says it in a sentence, for people.
	Fault         fault.Kind
	InvalidReason string
	// Disturbed says that other work took the CPUs of the target or the generator during the
	// measured phase; the warnings say whose and how much.
	Disturbed bool

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

	// Seed shuffled the order of the targets in every round of trials; the run's rows share it.
	Seed int64
	// PayloadSHA identifies what every request sent and what its answer had to contain.
	PayloadSHA string

	// The target's resources over the measured phase, from its own cgroup; zero when not measured.
	Startup                time.Duration // container start → first 200 on its health endpoint
	ImageSize              int64         // bytes
	CPUCores               float64       // mean cores busy
	CPUPercent             float64       // of the target's cpuset
	MemoryPeak, MemoryMean int64         // bytes, page cache excluded
	RPSPerCore, RPSPerGiB  float64       // throughput per core used, per GiB of peak memory
	// CPUPressure and MemoryPressure are the shares of the phase in which some of the target's
	// tasks waited for a CPU, and for memory (the cgroup's PSI); PressureRead says the host gave
	// them (not a --url service, nor a host whose cgroups keep none).
	CPUPressure, MemoryPressure float64
	PressureRead                bool
	// The load generator's own CPU over the measured phase (this process's rusage).
	GeneratorCPUCores, GeneratorCPUPercent float64
	// What the target's runtime believes it has, from /health; 0 when it did not say.
	RuntimeProcessors int
	RuntimeMaxHeap    int64
	// CPUPerRequest is the target's CPU time over the measured phase per success: less sensitive
	// to neighbours than latency, since what slows a target seldom makes its work cost more.
	CPUPerRequest time.Duration
	// LogFile is where the last lines of the target's log were kept when the cell failed or is
	// invalid, relative to the results file's folder; empty when none were.
	LogFile string
	// Variant is which side of a paired run measured the row (VariantBase, VariantCandidate, or
	// an A/A control's VariantAA1, VariantAA2); empty in a run of one side.
	Variant string
	// DB is the store the target used: DBEmbedded or DBPostgres; empty for a service iotbench did
	// not start. DBPoolSize is the target's connection pool (DB_POOL_SIZE).
	DB         string
	DBPoolSize int
	// The PostgreSQL server's cpuset and image; empty for the embedded store.
	DBCPUSet, DBImageID string
	// The PostgreSQL server's resources over the measured phase, from its own cgroup.
	DBCPUCores, DBCPUPercent   float64
	DBMemoryPeak, DBMemoryMean int64
	// DBCPUPressure is the share of the phase in which some of the server's tasks waited for a
	// CPU (PSI); DBPressureRead says the host gave it.
	DBCPUPressure  float64
	DBPressureRead bool
	// DBRowsStored is how many more rows the PostgreSQL server itself counted after the measured
	// phase than before it (the stored-row check holds it as it holds /stats).
	DBRowsStored int64
	// SLO is what a --find-max step had to meet (its row is valid when it did); empty for
	// the other rows.
	SLO string
	// LatencyAt are the percentages of its maximum at which a --find-max step's search measured
	// latency once it found it (maxrate.LatencyAt's text, "50%,75%,90%"); empty: none, or not a
	// find-max step. Find-max steps of files older than the column read as LegacyLatencyAt.
	LatencyAt string
	// OneLoad says a --find-max step's search ran its steps on one load (its connections kept
	// from the loads before it, a recovery at half the last rate met after a failing step), as
	// every search does now; false in every other row and in the searches of earlier builds (each
	// step on new connections, a pause after a failing one).
	OneLoad bool
	// Generators is how many generator shards measured the cell, their results merged
	// (internal/shard); rows older than the column (schema 7 and before) had one.
	Generators int
	// GeneratorClockOffset is the largest absolute offset of a generator host's clock from this
	// machine's, measured before the cell's measured phase; GeneratorClockMeasured says whether
	// it was (only when shards ran on other hosts).
	GeneratorClockOffset   time.Duration
	GeneratorClockMeasured bool
	// Steady says the measured phase's per-second figures showed no large trend (internal/steady);
	// SteadyJudged says whether they were judged (a loaded phase of enough seconds, schema 10 on).
	// A not-steady row's warnings say which figure moved and how fast.
	Steady, SteadyJudged bool
	// The instrument's error measuring a reference server of known latency, in the calibration
	// nearest the cell (internal/run, docs/results.md "Calibration"): measured minus true at p50
	// and p99 (the larger in size over the references), achieved over requested rate, and the
	// generator's own delay at p99. Calibrated says whether a calibration ran;
	// CalibrationWithin whether its figures were within the limits.
	Calibrated, CalibrationWithin            bool
	CalibrationP50Error, CalibrationP99Error time.Duration
	CalibrationRateRatio                     float64
	CalibrationOwnDelayP99                   time.Duration
	// The sampling checks (internal/sampling): the achieved sends' dispersion index against
	// the intended arrival process (ArrivalJudged: open loop at one rate, enough windows), and
	// the lag-1 autocorrelation of the measured phase's most correlated per-second figure with
	// the effective number of independent seconds it leaves (SecondsJudged).
	ArrivalJudged, ArrivalAsIntended  bool
	ArrivalDispersion                 float64
	SecondsJudged, SecondsIndependent bool
	SecondsLag1R, SecondsEffectiveN   float64
	// WarmupAuto says the warm-up lasted until the per-second figures were steady, Warmup at
	// most; WarmupTaken is how long it lasted (the fixed Warmup otherwise).
	WarmupAuto  bool
	WarmupTaken time.Duration
	// JITBusy is the busy time of the target's JIT compiler threads over the measured phase, as
	// its /health told it (docs/contract.md: jitCompileMs); JITJudged says whether it told.
	JITBusy   time.Duration
	JITJudged bool
	// Signals is what the target's runtime told of the measured phase on its signals port
	// (docs/contract.md, "Signals"); SignalsRead says it was read, SignalsNote why not when it was
	// not (turned off, not served, a failed read). Empty in files older than the columns.
	Signals     signals.Phase
	SignalsRead bool
	SignalsNote string
	// Compat is the tool whose semantics the cell reproduced (load.Compat: wrk); empty:
	// iotbench's own. With wrk, the Wrk figures are what wrk would have printed.
	Compat                       string
	WrkRPS, WrkTransferPerSecond float64
	WrkTimeouts, WrkNon2xx3xx    int64
	WrkLatencyMean               time.Duration
	// Warnings say why a valid row may still mislead (a busy generator, a runtime that sees other
	// limits than it was given); "; "-separated.
	Warnings string

	// Protocol is what the generator spoke (protocol.All); empty in rows older than the
	// column, which spoke http1. TLSResumption is "true" or "false" over TLS, empty otherwise;
	// H2Streams the streams of an HTTP/2 connection (0 otherwise); NewConnection, whether every
	// request took a new connection.
	Protocol      string
	TLSResumption string
	H2Streams     int
	NewConnection bool
	// What the TLS handshakes negotiated; empty in plaintext.
	TLSVersion, TLSCipher string
	// ConnectionsOpened over the measured phase (over TLS, each a handshake), of which
	// HandshakesResumed resumed a TLS session; ConnectMean and ConnectP99, the time each took
	// from its dial until it could carry a request (TCP connect and TLS handshake).
	ConnectionsOpened, HandshakesResumed int64
	ConnectMean, ConnectP99              time.Duration
	// FirstByteP50 and FirstByteP99: from each answered request's start (as its latency's) until
	// the first bytes of its answer arrived.
	FirstByteP50, FirstByteP99 time.Duration
}

// ProtocolName is the row's protocol: http1 for rows older than the column.
func (r Row) ProtocolName() string { return string(protocol.Protocol(r.Protocol).Or()) }

// OverTLS says whether the row's protocol runs over TLS.
func (r Row) OverTLS() bool { return protocol.Protocol(r.Protocol).TLS() }

// HandshakesPerSecond is the TLS handshakes made per second of the measured phase; 0 in plaintext.
func (r Row) HandshakesPerSecond() float64 {
	if !r.OverTLS() || r.Duration <= 0 {
		return 0
	}
	return float64(r.ConnectionsOpened) / r.Duration.Seconds()
}

// TransferPerSecond is BytesReceived per second of the measured phase, wrk's Transfer/sec; 0 when
// not measured.
func (r Row) TransferPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.BytesReceived) / r.Duration.Seconds()
}

// VerifyFailed reports whether the cell's target failed verification and was not loaded.
func (r Row) VerifyFailed() bool { return r.Fault == fault.VerifyFailed }

// Loaded reports whether load was sent in the cell: not when its target failed to build, start
// or verify, or was skipped.
func (r Row) Loaded() bool { return r.Fault.Loaded() }

// SetFault records whether the row is valid: valid when k is fault.None, invalid for k
// otherwise, reason saying why.
func (r *Row) SetFault(k fault.Kind, reason string) {
	r.Valid, r.Fault, r.InvalidReason = k == fault.None, k, reason
}

// codec reads and writes one field of a Row as CSV text.
type codec struct {
	get func(*Row) string
	set func(*Row, string) error
}

type column struct {
	name string
	codec
	// since is the schema version that added the column: files of older versions lack it.
	since int
}

// measurementColumn names the columns that only a loaded cell has: a row whose target was never
// loaded leaves them empty, not 0 (a success_ratio of 0 would read "every request failed").
var measurementColumn = map[string]bool{
	"achieved_rps":           true,
	"throughput_rps":         true,
	"requests":               true,
	"successes":              true,
	"errors":                 true,
	"timeouts":               true,
	"success_ratio":          true,
	"latency_mean_ms":        true,
	"latency_p50_ms":         true,
	"latency_p90_ms":         true,
	"latency_p99_ms":         true,
	"latency_p999_ms":        true,
	"latency_max_ms":         true,
	"send_lag_p99_ms":        true,
	"send_lag_max_ms":        true,
	"peak_in_flight":         true,
	"cpu_cores":              true,
	"cpu_percent_of_cpuset":  true,
	"memory_peak_bytes":      true,
	"memory_mean_bytes":      true,
	"rps_per_core":           true,
	"rps_per_gib":            true,
	"generator_cpu_cores":    true,
	"generator_cpu_percent":  true,
	"generator_delay_p99_ms": true,
	"cpu_us_per_request":     true,
	"bytes_received":         true,
}

func init() {
	for i, c := range columns {
		if measurementColumn[c.name] {
			inner := c.codec
			columns[i].codec = codec{
				get: func(r *Row) string {
					if !r.Loaded() {
						return ""
					}
					return inner.get(r)
				},
				set: func(r *Row, v string) error {
					if v == "" {
						return errUnmeasured
					}
					return inner.set(r, v)
				},
			}
		}
	}
}

// errUnmeasured is an empty measurement column: right for a cell never loaded, wrong otherwise.
var errUnmeasured = errors.New("a measurement (empty only where the cell was never loaded)")

func str(f func(*Row) *string) codec {
	return codec{func(r *Row) string { return *f(r) }, func(r *Row, v string) error { *f(r) = v; return nil }}
}

// nameColumn is a column naming a target, a scenario or a variant: checked against the names iotbench
// writes, so that a crafted file cannot carry control codes or markup into every report of it.
// optional allows the empty name (a row of a run of one side has no variant).
func nameColumn(f func(*Row) *string, optional bool) codec {
	return codec{func(r *Row) string { return *f(r) },
		func(r *Row, v string) error {
			if v != "" || !optional {
				if err := safetext.CheckName(v); err != nil {
					return fmt.Errorf("a name (%v)", err)
				}
			}
			*f(r) = v
			return nil
		}}
}

func integer[T int | int64](f func(*Row) *T) codec {
	return codec{func(r *Row) string { return strconv.FormatInt(int64(*f(r)), 10) },
		func(r *Row, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("a whole number")
			}
			*f(r) = T(n)
			return nil
		}}
}

// finite parses a number that a results file can hold: no NaN, no infinity.
func finite(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("a finite number")
	}
	return x, nil
}

// duration converts a number of units (1e6 for milliseconds) to a Duration, refusing what a
// Duration cannot hold.
func duration(v string, unit float64, round time.Duration) (time.Duration, error) {
	x, err := finite(v)
	if err != nil || math.Abs(x*unit) > math.MaxInt64/2 {
		return 0, errors.New("a duration iotbench could have measured")
	}
	return time.Duration(x * unit).Round(round), nil
}

func float(prec int, f func(*Row) *float64) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(*f(r), 'f', prec, 64) },
		func(r *Row, v string) (err error) { *f(r), err = finite(v); return err }}
}

// millis writes durations in milliseconds with microsecond resolution.
func millis(f func(*Row) *time.Duration) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(float64(*f(r))/1e6, 'f', 3, 64) },
		func(r *Row, v string) (err error) { *f(r), err = duration(v, 1e6, time.Microsecond); return err }}
}

// micros writes durations in microseconds with nanosecond resolution.
func micros(f func(*Row) *time.Duration) codec {
	return codec{func(r *Row) string { return strconv.FormatFloat(float64(*f(r))/1e3, 'f', 3, 64) },
		func(r *Row, v string) (err error) { *f(r), err = duration(v, 1e3, time.Nanosecond); return err }}
}

// seconds writes durations in seconds with millisecond resolution, as the shortest decimal
// (13.694, not Seconds()'s 13.693999999999999).
func seconds(f func(*Row) *time.Duration) codec {
	return codec{func(r *Row) string {
		return strconv.FormatFloat(float64(f(r).Round(time.Millisecond).Milliseconds())/1000, 'f', -1, 64)
	},
		func(r *Row, v string) (err error) { *f(r), err = duration(v, 1e9, time.Millisecond); return err }}
}

// cpus is a CPU list column. A list is checked against cpuset.MaxCPUs before anything reads it
// further: a file must not be able to make its reader expand "0-4000000000". Empty is a service
// iotbench did not start.
func cpus(f func(*Row) *string) codec {
	return codec{func(r *Row) string { return *f(r) },
		func(r *Row, v string) error {
			if v != "" {
				if _, err := cpuset.Parse(v, cpuset.MaxCPUs); err != nil {
					return fmt.Errorf("a CPU list (e.g. 1, 2-3, 0,2) of CPUs numbered below %d", cpuset.MaxCPUs)
				}
			}
			*f(r) = v
			return nil
		}}
}

func col(name string, c codec) column { return column{name, c, 1} }

// SchemaVersion is the version of the columns this iotbench writes. A file records it in its
// schema_version column (files without that column are version 1); a newer one is refused.
const SchemaVersion = 15

// columns is the CSV layout, in order. Appending is compatible; renaming or removing is not.
var columns = []column{
	col("scenario", nameColumn(func(r *Row) *string { return &r.Scenario }, false)),
	col("target", nameColumn(func(r *Row) *string { return &r.Target }, false)),
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
		func(r *Row, v string) error {
			if v != "true" && v != "false" {
				return errors.New("true or false")
			}
			r.Valid = v == "true"
			return nil
		}}),
	col("invalid_reason", str(func(r *Row) *string { return &r.InvalidReason })),
	col("send_lag_p99_ms", millis(func(r *Row) *time.Duration { return &r.SendLagP99 })),
	col("send_lag_max_ms", millis(func(r *Row) *time.Duration { return &r.SendLagMax })),
	col("peak_in_flight", integer(func(r *Row) *int64 { return &r.PeakInFlight })),
	col("status_codes", str(func(r *Row) *string { return &r.StatusCodes })),
	col("started_at", codec{func(r *Row) string { return r.StartedAt.UTC().Format(time.RFC3339) },
		func(r *Row, v string) (err error) {
			if r.StartedAt, err = time.Parse(time.RFC3339, v); err != nil {
				return errors.New("a time like 2026-01-02T15:04:05Z")
			}
			return nil
		}}),
	col("cpuset", cpus(func(r *Row) *string { return &r.CPUSet })),
	col("generator_cpuset", cpus(func(r *Row) *string { return &r.GeneratorCPUSet })),
	col("memory", str(func(r *Row) *string { return &r.Memory })),
	col("image_id", str(func(r *Row) *string { return &r.ImageID })),
	col("target_runtime", str(func(r *Row) *string { return &r.TargetRuntime })),
	col("iotbench_version", str(func(r *Row) *string { return &r.Version })),
	col("git_commit", str(func(r *Row) *string { return &r.GitCommit })),
	col("host_cpu", str(func(r *Row) *string { return &r.HostCPU })),
	col("kernel", str(func(r *Row) *string { return &r.Kernel })),
	col("docker_version", str(func(r *Row) *string { return &r.DockerVersion })),
	{"seed", integer(func(r *Row) *int64 { return &r.Seed }), 2},
	{"payload_sha256", str(func(r *Row) *string { return &r.PayloadSHA }), 2},
	// Written from the row's settings (see Fingerprint); read back only to be checked for shape.
	{"fingerprint", codec{func(r *Row) string { return r.Fingerprint() }, func(*Row, string) error { return nil }}, 2},
	{"schema_version", codec{func(*Row) string { return strconv.Itoa(SchemaVersion) }, func(*Row, string) error { return nil }}, 2},
	{"startup_ms", millis(func(r *Row) *time.Duration { return &r.Startup }), 3},
	{"image_size_bytes", integer(func(r *Row) *int64 { return &r.ImageSize }), 3},
	{"cpu_cores", float(3, func(r *Row) *float64 { return &r.CPUCores }), 3},
	{"cpu_percent_of_cpuset", float(1, func(r *Row) *float64 { return &r.CPUPercent }), 3},
	{"memory_peak_bytes", integer(func(r *Row) *int64 { return &r.MemoryPeak }), 3},
	{"memory_mean_bytes", integer(func(r *Row) *int64 { return &r.MemoryMean }), 3},
	{"rps_per_core", float(1, func(r *Row) *float64 { return &r.RPSPerCore }), 3},
	{"rps_per_gib", float(1, func(r *Row) *float64 { return &r.RPSPerGiB }), 3},
	{"generator_cpu_cores", float(3, func(r *Row) *float64 { return &r.GeneratorCPUCores }), 3},
	{"generator_cpu_percent", float(1, func(r *Row) *float64 { return &r.GeneratorCPUPercent }), 3},
	{"runtime_processors", integer(func(r *Row) *int { return &r.RuntimeProcessors }), 3},
	{"runtime_max_heap_bytes", integer(func(r *Row) *int64 { return &r.RuntimeMaxHeap }), 3},
	{"warnings", str(func(r *Row) *string { return &r.Warnings }), 3},
	{"generator_delay_p99_ms", millis(func(r *Row) *time.Duration { return &r.GeneratorDelayP99 }), 4},
	{"log_file", str(func(r *Row) *string { return &r.LogFile }), 5},
	{"variant", nameColumn(func(r *Row) *string { return &r.Variant }, true), 6},
	{"cpu_us_per_request", micros(func(r *Row) *time.Duration { return &r.CPUPerRequest }), 6},
	{"db", str(func(r *Row) *string { return &r.DB }), 6},
	{"db_pool_size", integer(func(r *Row) *int { return &r.DBPoolSize }), 6},
	{"db_cpuset", cpus(func(r *Row) *string { return &r.DBCPUSet }), 6},
	{"db_image_id", str(func(r *Row) *string { return &r.DBImageID }), 6},
	{"db_cpu_cores", serverMeasure(float(3, func(r *Row) *float64 { return &r.DBCPUCores })), 6},
	{"db_cpu_percent_of_cpuset", serverMeasure(float(1, func(r *Row) *float64 { return &r.DBCPUPercent })), 6},
	{"db_memory_peak_bytes", serverMeasure(integer(func(r *Row) *int64 { return &r.DBMemoryPeak })), 6},
	{"db_memory_mean_bytes", serverMeasure(integer(func(r *Row) *int64 { return &r.DBMemoryMean })), 6},
	{"db_rows_stored", serverMeasure(integer(func(r *Row) *int64 { return &r.DBRowsStored })), 6},
	{"bytes_received", integer(func(r *Row) *int64 { return &r.BytesReceived }), 7},
	{"timeout_s", seconds(func(r *Row) *time.Duration { return &r.Timeout }), 7},
	{"generators", codec{func(r *Row) string { return strconv.Itoa(r.GeneratorCount()) },
		func(r *Row, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errors.New("a number of generators, 1 or more")
			}
			r.Generators = n
			return nil
		}}, 8},
	{"generator_clock_offset_ms", codec{func(r *Row) string {
		if !r.GeneratorClockMeasured {
			return ""
		}
		return millis(func(r *Row) *time.Duration { return &r.GeneratorClockOffset }).get(r)
	}, func(r *Row, v string) error {
		if v == "" {
			return nil
		}
		r.GeneratorClockMeasured = true
		return millis(func(r *Row) *time.Duration { return &r.GeneratorClockOffset }).set(r, v)
	}}, 8},
	{"slo", str(func(r *Row) *string { return &r.SLO }), 9},
	{"arrival", str(func(r *Row) *string { return &r.Arrival }), 9},
	{"stages", str(func(r *Row) *string { return &r.Stages }), 9},
	{"stage", integer(func(r *Row) *int { return &r.Stage }), 9},
	{"think", str(func(r *Row) *string { return &r.Think }), 9},
	{"streams", str(func(r *Row) *string { return &r.Streams }), 10},
	{"request", str(func(r *Row) *string { return &r.Request }), 10},
	{"steady", codec{func(r *Row) string {
		if !r.SteadyJudged {
			return ""
		}
		return strconv.FormatBool(r.Steady)
	}, func(r *Row, v string) error {
		if v == "" {
			return nil
		}
		if v != "true" && v != "false" {
			return errors.New("true, false or empty")
		}
		r.Steady, r.SteadyJudged = v == "true", true
		return nil
	}}, 9},
	{"calibration_p50_error_ms", calibration(millis(func(r *Row) *time.Duration { return &r.CalibrationP50Error })), 9},
	{"calibration_p99_error_ms", calibration(millis(func(r *Row) *time.Duration { return &r.CalibrationP99Error })), 9},
	{"calibration_rate_ratio", calibration(float(4, func(r *Row) *float64 { return &r.CalibrationRateRatio })), 9},
	{"calibration_own_delay_p99_ms", calibration(millis(func(r *Row) *time.Duration { return &r.CalibrationOwnDelayP99 })), 9},
	{"calibration_within_limits", calibration(codec{func(r *Row) string { return strconv.FormatBool(r.CalibrationWithin) },
		func(r *Row, v string) error {
			if v != "true" && v != "false" {
				return errors.New("true, false or empty")
			}
			r.CalibrationWithin = v == "true"
			return nil
		}}), 9},
	{"protocol", codec{func(r *Row) string { return r.Protocol }, func(r *Row, v string) error {
		if protocol.Check(protocol.Protocol(v)) != nil {
			return errors.New("http1, https, h2, h2c or empty")
		}
		r.Protocol = v
		return nil
	}}, 10},
	{"tls_resumption", codec{func(r *Row) string { return r.TLSResumption }, func(r *Row, v string) error {
		if v != "" && v != "true" && v != "false" {
			return errors.New("true, false or empty")
		}
		r.TLSResumption = v
		return nil
	}}, 10},
	{"h2_streams", integer(func(r *Row) *int { return &r.H2Streams }), 10},
	{"new_connection", boolean(func(r *Row) *bool { return &r.NewConnection }), 10},
	{"tls_version", str(func(r *Row) *string { return &r.TLSVersion }), 10},
	{"tls_cipher", str(func(r *Row) *string { return &r.TLSCipher }), 10},
	{"connections_opened", integer(func(r *Row) *int64 { return &r.ConnectionsOpened }), 10},
	// Derived from connections_opened and duration_s; read back only to be checked for shape.
	{"handshakes_per_s", overTLS(codec{func(r *Row) string { return strconv.FormatFloat(r.HandshakesPerSecond(), 'f', 1, 64) },
		func(r *Row, v string) error { _, err := finite(v); return err }}), 10},
	{"handshakes_resumed", overTLS(integer(func(r *Row) *int64 { return &r.HandshakesResumed })), 10},
	{"connect_mean_ms", connected(millis(func(r *Row) *time.Duration { return &r.ConnectMean })), 10},
	{"connect_p99_ms", connected(millis(func(r *Row) *time.Duration { return &r.ConnectP99 })), 10},
	{"ttfb_p50_ms", millis(func(r *Row) *time.Duration { return &r.FirstByteP50 }), 10},
	{"ttfb_p99_ms", millis(func(r *Row) *time.Duration { return &r.FirstByteP99 }), 10},
	{"arrival_dispersion", judged(func(r *Row) *bool { return &r.ArrivalJudged }, float(3, func(r *Row) *float64 { return &r.ArrivalDispersion })), 10},
	{"arrival_as_intended", judged(func(r *Row) *bool { return &r.ArrivalJudged }, boolean(func(r *Row) *bool { return &r.ArrivalAsIntended })), 10},
	{"seconds_lag1_r", judged(func(r *Row) *bool { return &r.SecondsJudged }, float(3, func(r *Row) *float64 { return &r.SecondsLag1R })), 10},
	{"seconds_effective_n", judged(func(r *Row) *bool { return &r.SecondsJudged }, float(1, func(r *Row) *float64 { return &r.SecondsEffectiveN })), 10},
	{"seconds_independent", judged(func(r *Row) *bool { return &r.SecondsJudged }, boolean(func(r *Row) *bool { return &r.SecondsIndependent })), 10},
	{"warmup_auto", boolean(func(r *Row) *bool { return &r.WarmupAuto }), 10},
	{"warmup_taken_s", seconds(func(r *Row) *time.Duration { return &r.WarmupTaken }), 10},
	{"compat", str(func(r *Row) *string { return &r.Compat }), 10},
	{"wrk_requests_per_s", wrk(float(2, func(r *Row) *float64 { return &r.WrkRPS })), 10},
	{"wrk_timeouts", wrk(integer(func(r *Row) *int64 { return &r.WrkTimeouts })), 10},
	{"wrk_non_2xx_3xx", wrk(integer(func(r *Row) *int64 { return &r.WrkNon2xx3xx })), 10},
	{"wrk_latency_mean_ms", wrk(millis(func(r *Row) *time.Duration { return &r.WrkLatencyMean })), 10},
	{"wrk_transfer_bytes_per_s", wrk(float(0, func(r *Row) *float64 { return &r.WrkTransferPerSecond })), 10},
	{"jit_busy_s", judged(func(r *Row) *bool { return &r.JITJudged }, seconds(func(r *Row) *time.Duration { return &r.JITBusy })), 11},
	{"invalid_kind", codec{writtenFault, func(r *Row, v string) (err error) { r.Fault, err = fault.Parse(v); return err }}, 12},
	{"search", integer(func(r *Row) *int { return &r.Search }), 12},
	{"disturbed", boolean(func(r *Row) *bool { return &r.Disturbed }), 12},
	// What limited the phase, by today's rules (internal/limit): written for a file's readers,
	// computed again from the row's figures when read, as its warnings are.
	{"limit", codec{func(r *Row) string { return string(r.Limit().Kind) }, func(*Row, string) error { return nil }}, 12},
	{"limit_evidence", codec{func(r *Row) string { return r.Limit().String() }, func(*Row, string) error { return nil }}, 12},
	{"latency_at", str(func(r *Row) *string { return &r.LatencyAt }), 12},
	{"cpu_pressure", judged(func(r *Row) *bool { return &r.PressureRead }, float(3, func(r *Row) *float64 { return &r.CPUPressure })), 13},
	{"memory_pressure", judged(func(r *Row) *bool { return &r.PressureRead }, float(3, func(r *Row) *float64 { return &r.MemoryPressure })), 13},
	{"db_cpu_pressure", serverMeasure(judged(func(r *Row) *bool { return &r.DBPressureRead }, float(3, func(r *Row) *float64 { return &r.DBCPUPressure }))), 13},
	{"signals", codec{func(r *Row) string {
		if r.SignalsRead {
			return SignalsRead
		}
		return r.SignalsNote
	}, func(r *Row, v string) error {
		r.SignalsRead, r.SignalsNote = v == SignalsRead, v
		if r.SignalsRead {
			r.SignalsNote = ""
		}
		return nil
	}}, 14},
	{"gc_share", judged(func(r *Row) *bool { return &r.Signals.GCRead }, float(3, func(r *Row) *float64 { return &r.Signals.GCShare })), 14},
	{"gc_max_pause_ms", judged(func(r *Row) *bool { return &r.Signals.GCRead }, millis(func(r *Row) *time.Duration { return &r.Signals.GCMaxPause })), 14},
	{"safepoint_share", judged(func(r *Row) *bool { return &r.Signals.SafepointRead }, float(3, func(r *Row) *float64 { return &r.Signals.SafepointShare })), 14},
	{"loop_utilization", judged(func(r *Row) *bool { return &r.Signals.LoopRead }, float(3, func(r *Row) *float64 { return &r.Signals.Utilization })), 14},
	{"loop_delay_p99_ms", judged(func(r *Row) *bool { return &r.Signals.DelayRead }, millis(func(r *Row) *time.Duration { return &r.Signals.Delay })), 14},
	{"loop_delay_max_ms", judged(func(r *Row) *bool { return &r.Signals.DelayRead }, millis(func(r *Row) *time.Duration { return &r.Signals.DelayMax })), 14},
	{"blocked_threads_max", judged(func(r *Row) *bool { return &r.Signals.ThreadsRead }, integer(func(r *Row) *int { return &r.Signals.BlockedMax })), 14},
	{"pools", codec{func(r *Row) string { return signals.FormatPools(r.Signals.Pools) }, func(r *Row, v string) (err error) {
		r.Signals.Pools, err = signals.ParsePools(v)
		return err
	}}, 14},
	{"one_load", boolean(func(r *Row) *bool { return &r.OneLoad }), 15},
}

// CompatWrk is the Compat of a cell counted as wrk counts (load.Wrk).
const CompatWrk = "wrk"

// when is a figure that only some rows have: empty where has says the row has none (wrk's
// figures but with compat wrk, TLS's but over TLS, connections' but where some were opened).
func when(has func(*Row) bool, c codec) codec {
	return codec{func(r *Row) string {
		if !has(r) {
			return ""
		}
		return c.get(r)
	}, func(r *Row, v string) error {
		if v == "" {
			return nil
		}
		return c.set(r, v)
	}}
}

func wrk(c codec) codec       { return when(func(r *Row) bool { return r.Compat == CompatWrk }, c) }
func overTLS(c codec) codec   { return when((*Row).OverTLS, c) }
func connected(c codec) codec { return when(func(r *Row) bool { return r.ConnectionsOpened > 0 }, c) }

// judged is a figure of a check that may not have run: empty where it did not (the flag false).
func judged(flag func(*Row) *bool, c codec) codec {
	return codec{func(r *Row) string {
		if !*flag(r) {
			return ""
		}
		return c.get(r)
	}, func(r *Row, v string) error {
		if v == "" {
			return nil
		}
		*flag(r) = true
		return c.set(r, v)
	}}
}

// boolean is true or false.
func boolean(f func(*Row) *bool) codec {
	return codec{func(r *Row) string { return strconv.FormatBool(*f(r)) }, func(r *Row, v string) error {
		if v != "true" && v != "false" {
			return errors.New("true or false")
		}
		*f(r) = v == "true"
		return nil
	}}
}

// calibration is a figure of the run's calibration: empty where none ran (skipped, older files).
func calibration(c codec) codec { return judged(func(r *Row) *bool { return &r.Calibrated }, c) }

// Part says the row is a part of a cell's, recorded with it: a stage's or a request's of a mix.
func (r Row) Part() bool { return r.Stage > 0 || r.Request != "" }

// NotSteady says the row was judged and its measured phase was not in a steady state.
func (r Row) NotSteady() bool { return r.SteadyJudged && !r.Steady }

// JITBusyShare is the JIT's busy time, as a share of the measured phase, from which a target was
// still warming up. A JIT working through its backlog always has work: Spring MVC's compiler
// threads were busy 95–105% of every second for its first ten minutes on one CPU at 256
// connections (busy counts the wait for the CPU, which 200 request threads hold), and 100–220% in
// its first minutes elsewhere. A settled JVM still compiles now and then, in bursts that wait as
// long: Javalin serving pages for 6–11% of 30-s phases, that Spring MVC, its backlog done (a few
// compilations in 10 s, against 3–170 before), for 17–27% of its measured phases. Half lies clear
// of both; a late compilation that moves the figures is the steady-state test's to see.
const JITBusyShare = 0.5

// StillWarming says the target's JIT compiled for more than JITBusyShare of the measured phase.
func (r Row) StillWarming() bool {
	return r.JITJudged && r.Duration > 0 && r.JITBusy.Seconds() > JITBusyShare*r.Duration.Seconds()
}

// WarmupEndedEarly says the row's warm-up until steady ended on its own, before its maximum: a
// longer maximum would not have lengthened it (a JVM still compiling then needs a fixed warm-up).
func (r Row) WarmupEndedEarly() bool {
	return r.WarmupAuto && r.WarmupTaken < r.Warmup
}

// The words around the time in a row's warning that its target was still warming up.
const (
	jitWarned1 = "the JIT compiled for "
	jitWarned2 = " during the measured phase"
)

// WarmingWarning is the warning of a row that is StillWarming; empty for any other.
func (r Row) WarmingWarning() string {
	if !r.StillWarming() {
		return ""
	}
	return fmt.Sprintf(jitWarned1+"%s"+jitWarned2+" (%.1f%% of it, its compiler threads' busy time): the target was still warming up",
		r.JITBusy.Round(10*time.Millisecond), 100*r.JITBusy.Seconds()/r.Duration.Seconds())
}

// jitWarned is, for a row of a file older than jit_busy_s, the JIT's compilation time its
// warning gave ("the JIT compiled for 33.23s during the measured phase", written then from 5% of
// the phase on, of the time the JVM reported), so that today's rule judges old rows too; false
// without one.
func jitWarned(warnings string) (time.Duration, bool) {
	_, after, ok := strings.Cut(warnings, jitWarned1)
	if !ok {
		return 0, false
	}
	text, _, ok := strings.Cut(after, jitWarned2)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 || d > 1000*time.Hour { // not what a phase could have compiled for
		return 0, false
	}
	return d, true
}

// rewarned is r's warnings with its JIT's and its count's as today's rules word them
// (WarmingWarning, CountWarning): a row recorded under an older rule keeps no warning the
// self-checks no longer give, and gets those they give now.
func rewarned(r Row) string {
	var kept []string
	for _, w := range strings.Split(r.Warnings, "; ") {
		if w != "" && !strings.HasPrefix(w, jitWarned1) && !strings.HasPrefix(w, CountCoarse) {
			kept = append(kept, w)
		}
	}
	for _, w := range []string{r.WarmingWarning(), r.CountWarning()} {
		if w != "" {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, "; ")
}

// countShare is the share of a closed loop's throughput its count's resolution must pass to be
// warned of: below it, trials differ by more than the count can.
const countShare = 0.02

// CountCoarse begins CountWarning's text.
const CountCoarse = "count coarse: "

// CountWarning says how far a closed loop's throughput may be off by its count alone, when that
// is over countShare of it, and how long a phase holds it within; empty otherwise. Over a phase
// each user (a connection, or a stream of one) answers a whole number of times, one more or fewer
// than its rate gives (answers every 5 s are 6 or 7 in 30 s), so the count may gain or miss up to
// one answer a user: all of them when the users answer in step (100 connections on 50 threads:
// waves of 50 every 5 s). An open loop's count is set by its schedule.
func (r Row) CountWarning() string {
	if r.Mode != "closed" || r.Duration <= 0 || r.ThroughputRPS <= 0 {
		return ""
	}
	users := float64(max(r.PeakInFlight, int64(r.Connections)))
	within := users / r.Duration.Seconds()
	if within <= countShare*r.ThroughputRPS {
		return ""
	}
	need := time.Duration(users / (countShare * r.ThroughputRPS) * float64(time.Second)).Round(time.Second)
	who := fmt.Sprintf("each of %.0f users answering one time more or fewer over %s (all of them when they answer in step)", users, r.Duration)
	if users == 1 {
		who = fmt.Sprintf("its one user answering one time more or fewer over %s", r.Duration)
	}
	return fmt.Sprintf(CountCoarse+"throughput within ±%.3g rps (%.0f%%) by the count alone, %s, a phase of %s would hold it within %.0f%%",
		within, 100*within/r.ThroughputRPS, who, need, 100*countShare)
}

// Why the self-checks distrust a valid row (docs/selfcheck.md), as notes name it.
const (
	DistrustNotSteady   = "not steady"
	DistrustCalibration = "calibration missed its limits"
	DistrustWarming     = "still warming up"
)

// DistrustReasons are every reason Distrust gives, in the order it checks them.
var DistrustReasons = []string{DistrustNotSteady, DistrustCalibration, DistrustWarming}

// DistrustCounts names the rows counted by reason in left ("2 not steady", "1 still warming
// up"), in the order of DistrustReasons; none when left counts none.
func DistrustCounts(left map[string]int) []string {
	var out []string
	for _, why := range DistrustReasons {
		if n := left[why]; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, why))
		}
	}
	return out
}

// Distrust says why a valid row's figures carry no verdict and no rank: its measured phase was not
// steady (no one level describes it), its run's calibration nearest to it missed its limits
// (the instrument was off that day by more than it promises), or its JIT was still compiling (a
// JVM measured before its warm-up ended); empty when they may.
func (r Row) Distrust() string {
	switch {
	case r.NotSteady():
		return DistrustNotSteady
	case r.Calibrated && !r.CalibrationWithin:
		return DistrustCalibration
	case r.StillWarming():
		return DistrustWarming
	}
	return ""
}

// Limit is what limited the row's phase, by the rules of internal/limit on its figures.
func (r Row) Limit() limit.Limit {
	cpus, _ := cpuset.Parse(r.CPUSet, cpuset.MaxCPUs)
	db, _ := cpuset.Parse(r.DBCPUSet, cpuset.MaxCPUs)
	return limit.Of(limit.Figures{
		Loaded: r.Loaded(), Fault: r.Fault,
		TargetCPUs: len(cpus), CPUCores: r.CPUCores, Memory: r.Memory, MemoryPeak: r.MemoryPeak,
		DBCPUs: len(db), DBCPUCores: r.DBCPUCores, DBPressureRead: r.DBPressureRead, DBCPUPressure: r.DBCPUPressure, GeneratorShare: r.GeneratorCPUPercent / 100,
		StillWarming: r.StillWarming(), JITBusy: r.JITBusy, Duration: r.Duration,
		PressureRead: r.PressureRead, CPUPressure: r.CPUPressure, MemoryPressure: r.MemoryPressure,
		Signals: r.readSignals(), SignalsNote: r.SignalsNote,
	})
}

// SignalsRead is the signals column of a row whose signals were read.
const SignalsRead = "read"

// readSignals is the row's signals for the limit's rules; nil when none were read.
func (r Row) readSignals() *signals.Phase {
	if !r.SignalsRead {
		return nil
	}
	return &r.Signals
}

// GeneratorCount is the row's generators: 1 for rows older than the column.
func (r Row) GeneratorCount() int { return max(1, r.Generators) }

// The stores of the db column.
const (
	DBEmbedded = "embedded"
	DBPostgres = "postgres"
)

// serverMeasure is a measurement of the database server: empty where there was none (the
// embedded store, a cell never loaded).
func serverMeasure(c codec) codec {
	return when(func(r *Row) bool { return r.Loaded() && r.DB == DBPostgres }, c)
}

// writtenFault is the row's kind of fault as its file holds it, as valid says: an invalid row
// whose kind was never set is written as fault.Other, so that no file iotbench writes is refused
// by its reader.
func writtenFault(r *Row) string {
	switch {
	case r.Valid:
		return ""
	case r.Fault == fault.None:
		return string(fault.Other)
	}
	return string(r.Fault)
}

// Header is the CSV header line's fields.
func Header() []string {
	h := make([]string, len(columns))
	for i, c := range columns {
		h[i] = c.name
	}
	return h
}
