package results

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/protocol"
)

// Field is one setting of a row, named as its CSV column.
type Field struct{ Name, Value string }

// FingerprintFields are the settings that must be equal for two rows to be comparable, named as
// their columns, in a fixed order: the load model and its numbers, how long it ran, what it sent,
// the target's resources and image, its store (the database server's CPUs and image too), what
// measured it on which CPU, over how many generators, and in which protocol (with its TLS and
// HTTP/2 settings). The cpusets themselves may differ; their sizes may not.
func (r Row) FingerprintFields() []Field {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	fields := []Field{
		{"mode", r.Mode},
		{"requested_rps", strconv.Itoa(r.RequestedRPS)},
		{"connections", strconv.Itoa(r.Connections)},
		{"duration_s", secs(r.Duration)},
		{"warmup_s", secs(r.Warmup)},
		{"payload_sha256", r.PayloadSHA},
		{"target_cpus", strconv.Itoa(cpuCount(r.CPUSet))},
		{"memory", r.Memory},
		{"image_id", r.ImageID},
		{"iotbench_version", r.Version},
		{"host_cpu", r.HostCPU},
		{"db", r.Store()},
		{"db_pool_size", strconv.Itoa(r.PoolSize())},
		{"db_cpus", strconv.Itoa(cpuCount(r.DBCPUSet))},
		{"db_image_id", r.DBImageID},
		{"generators", strconv.Itoa(r.GeneratorCount())},
		{"arrival", r.ArrivalProcess()},
		{"stages", r.Stages},
		{"think", r.Think},
		{"protocol", r.ProtocolName()},
		{"tls_resumption", r.TLSResumption},
		{"h2_streams", strconv.Itoa(r.H2Streams)},
		{"new_connection", strconv.FormatBool(r.NewConnection)},
		{"streams", r.Streams},
	}
	// A timeout decides which slow answers are errors. Files before schema 7 did not record it
	// (0): their fingerprints stay what they were.
	if r.Timeout > 0 {
		fields = append(fields, Field{"timeout_s", secs(r.Timeout)})
	}
	// With a warm-up until steady, warmup_s is its maximum; how long it took is no setting.
	return append(fields, Field{"warmup_auto", strconv.FormatBool(r.WarmupAuto)}, Field{"compat", r.Compat}, Field{"one_load", strconv.FormatBool(r.OneLoad)})
}

// Store is the row's db. Rows of started targets written before the column (schema 5 and older)
// all used the embedded store, so they read as embedded.
func (r Row) Store() string {
	if r.DB == "" && r.CPUSet != "" {
		return DBEmbedded
	}
	return r.DB
}

// PoolSize is the row's db_pool_size; rows of started targets older than the column used the
// contract's pool of 10.
func (r Row) PoolSize() int {
	if r.DBPoolSize == 0 && r.CPUSet != "" {
		return 10
	}
	return r.DBPoolSize
}

// AddedSettings are the fingerprint's settings added after it was first defined, with the value
// every row before them was measured with (their default). The rule for every new setting: it
// joins the hash only when it differs from its default, so that older rows keep their
// fingerprint and a run at the default still compares with them. A new setting (an arrival
// process, stages, a protocol, a warm-up mode) is added to FingerprintFields and here.
var AddedSettings = map[string]string{
	"timeout_s":  "0",
	"generators": "1",
	"arrival":    string(arrival.Uniform),
	"stages":     "",
	"think":      "",
	// Plaintext HTTP/1.1, a connection kept for many requests: every row before the columns.
	"protocol":       string(protocol.HTTP1),
	"tls_resumption": "",
	"h2_streams":     "0",
	"new_connection": "false",
	"streams":        "",
	"warmup_auto":    "false",
	"compat":         "",
	"one_load":       "false",
}

// ArrivalProcess is the row's arrival as the fingerprint counts it: the default (uniform) unless
// it says otherwise, as every row older than the arrival column and every closed loop was.
func (r Row) ArrivalProcess() string { return string(arrival.Process(r.Arrival).Or()) }

// Fingerprint is a short hash of FingerprintFields: rows with equal fingerprints were measured
// the same way and can be compared.
func (r Row) Fingerprint() string {
	h := sha256.New()
	for _, f := range r.FingerprintFields() {
		if def, added := AddedSettings[f.Name]; added && f.Value == def {
			continue
		}
		h.Write([]byte(f.Name + "=" + f.Value + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// cpuCount is the size of a cpuset, 0 when it is empty (a service iotbench did not start).
func cpuCount(set string) int {
	cpus, err := cpuset.Parse(set, cpuset.MaxCPUs)
	if err != nil {
		return 0
	}
	return len(cpus)
}
