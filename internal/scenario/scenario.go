// Package scenario reads the scenario matrix (scenarios.yaml): the targets that can be built and
// started, and the scenarios that load them. Every mistake in the file is reported as
// "file:line: what is wrong; what to do", and unknown keys are mistakes, not silently ignored.
// The schema is documented in docs/scenarios.md.
package scenario

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/protocol"
)

// File is a parsed and validated scenario matrix.
type File struct {
	Path string `yaml:"-"`
	// DefaultScenario runs when `iotbench run` names none.
	DefaultScenario string               `yaml:"default_scenario"`
	Defaults        Settings             `yaml:"defaults"`
	Targets         map[string]*Target   `yaml:"targets"`
	Scenarios       map[string]*Scenario `yaml:"scenarios"`

	// TargetOrder and ScenarioOrder keep the order of the file.
	TargetOrder   []string `yaml:"-"`
	ScenarioOrder []string `yaml:"-"`
}

// Target is a server that can be built from a Dockerfile and started in a container.
type Target struct {
	Name string `yaml:"-"`
	Line int    `yaml:"-"`

	Description string `yaml:"description"`
	// Build is the Docker build context, relative to the scenario file; targets that share one
	// share one image and differ only in Env.
	Build      string            `yaml:"build"`
	Dockerfile string            `yaml:"dockerfile"`
	BuildArgs  map[string]string `yaml:"build_args"`
	Port       int               `yaml:"port"`
	Env        map[string]string `yaml:"env"`
	// Command replaces the image's CMD: how one image runs the same app on another runtime.
	Command []string `yaml:"command"`
	Health  string   `yaml:"health"`
	// StartupTimeout bounds the wait for the health endpoint to answer 200.
	StartupTimeout time.Duration `yaml:"startup_timeout"`
	// Pool is the most requests the target serves at once when each holds a thread for its
	// waits (Tomcat's 200 platform threads): with the wait, it bounds the target's rate
	// (bounds.Pool). 0: no such bound (an event loop, virtual threads).
	Pool int `yaml:"pool"`
	// SingleThreaded marks a target that runs its requests' work on one thread (one event loop),
	// which more CPUs do not speed up: a comparison with a runtime of several threads on one CPU,
	// where the source had many, is a condition of the run.
	SingleThreaded bool `yaml:"single_threaded"`
}

// Scenario is one experiment: a request, its load model and the targets it compares.
type Scenario struct {
	Name string `yaml:"-"`
	Line int    `yaml:"-"`

	Description string  `yaml:"description"`
	Source      string  `yaml:"source"`
	Request     Request `yaml:"request"`
	// Check is what a good answer is (load.Check: its Contains on every response, the rest
	// verified before load).
	Check load.Check `yaml:"check"`
	// Requests, instead of Request and Check, send several requests in each cell: each a
	// weighted share of Load, or a stream at its own rate beside it (requests.go).
	Requests []MixRequest `yaml:"requests"`
	Load     LoadModel    `yaml:"load"`
	Targets  []string     `yaml:"targets"`
	Settings `yaml:",inline"`
}

// Request is what every hit sends.
type Request struct {
	Method   string            `yaml:"method"`
	Path     string            `yaml:"path"`
	BodyFile string            `yaml:"body_file"`
	Headers  map[string]string `yaml:"headers"`
	// BodySizes sweeps the payload: the scenario runs once per size, its body (a JSON object)
	// grown to that size by padding the string field PadField. Sizes is the parsed form.
	BodySizes []string      `yaml:"body_sizes"`
	PadField  string        `yaml:"pad_field"`
	Sizes     []PayloadSize `yaml:"-"`
}

// Load is the request as the load engine sends it, its body read and without its URL, which a
// run sets for each target.
func (r Request) Load() (load.Request, error) {
	out := load.Request{Method: r.Method, Header: http.Header{}}
	for k, v := range r.Headers {
		out.Header.Set(k, v)
	}
	if r.BodyFile != "" {
		body, err := os.ReadFile(r.BodyFile)
		if err != nil {
			return out, err
		}
		out.Body = body
	}
	return out, nil
}

// PayloadSize is one size of a payload sweep.
type PayloadSize struct {
	Label string // as written, lower-case: names the scenario run at this size (<scenario>.<label>)
	Bytes int
}

// LoadModel is the load model: open loop at Rate, or closed loop over Connections.
type LoadModel struct {
	Rate            int           `yaml:"rate"`
	Connections     int           `yaml:"connections"`
	ExpectedLatency time.Duration `yaml:"expected_latency"`
	Timeout         time.Duration `yaml:"timeout"`
	// Arrival is the open loop's arrival process (arrival.All); empty: uniform.
	Arrival arrival.Process `yaml:"arrival"`
	// Stages are the open loop's rates over the measured phase instead of one Rate, each written
	// as load.ParseStage reads it (30s:500, 60s:500-5000); Staged is the parsed form.
	Stages []string     `yaml:"stages"`
	Staged []load.Stage `yaml:"-"`
	// Think is the closed loop's think time (load.ParseThink: 100ms, exp:100ms); Thinking is
	// the parsed form.
	Think    string     `yaml:"think"`
	Thinking load.Think `yaml:"-"`
	// NewConnection sends every request on a new connection (over TLS, a handshake each: the
	// tls-handshake scenario).
	NewConnection bool `yaml:"new_connection"`
}

// LoadSpec is how the scenario loads each cell, as read from the file (defaults filled in).
func (s *Scenario) LoadSpec() loadspec.Spec {
	l := s.Load
	spec := s.Settings.loadSpec()
	spec.Given = nil // the scenario as a whole is the base others are laid over
	spec.Rate, spec.Connections, spec.Stages, spec.Arrival, spec.Think = l.Rate, l.Connections, l.Staged, l.Arrival, l.Thinking
	spec.ExpectedLatency, spec.Timeout, spec.NewConnection = l.ExpectedLatency, l.Timeout, l.NewConnection
	if len(spec.Stages) > 0 {
		spec.Duration = load.StagesDuration(spec.Stages)
	}
	return spec
}

// loadSpec is the load settings among s, marked given where the file writes them (Lines).
func (s Settings) loadSpec() loadspec.Spec {
	spec := loadspec.Spec{Duration: s.Duration, Trials: s.Trials, Protocol: s.Protocol, H2Streams: s.H2Streams, TLSResumption: s.TLSResumption != nil && *s.TLSResumption}
	if s.Warmup != nil {
		spec.Warmup = s.Warmup.Warmup
	}
	for _, k := range loadspec.Keys {
		if s.Lines[string(k)] > 0 {
			spec.Give(k)
		}
	}
	return spec
}

// Settings can be given in defaults and overridden per scenario.
type Settings struct {
	// Warmup is a fixed length, or auto: until steady (load.ParseWarmup).
	Warmup   *Warmup       `yaml:"warmup"`
	Duration time.Duration `yaml:"duration"`
	Trials   int           `yaml:"trials"`
	// CPUs is the cpuset of the target container ("1", "2-3"); empty: the automatic split.
	CPUs   string `yaml:"cpus"`
	Memory string `yaml:"memory"`
	// DB is the targets' store: DBEmbedded (their in-process database) or DBPostgres (a PostgreSQL
	// server started beside each target, db/postgres/README.md).
	DB string `yaml:"db"`
	// DBCPUs is the database server's cpuset; empty: the target's (one host serving both).
	DBCPUs string `yaml:"db_cpus"`
	// DBPool sweeps the targets' connection-pool size: the scenario runs once per size, its rows
	// named <scenario>.pool-<n>. Empty: the contract's DefaultPoolSize, and no suffix.
	DBPool []int `yaml:"db_pool"`
	// Protocol is what the generator speaks to the targets (protocol.All); empty: http1.
	Protocol protocol.Protocol `yaml:"protocol"`
	// TLSResumption keeps TLS session tickets, so that a new connection resumes a session
	// (protocols over TLS only); unset: off, every handshake full.
	TLSResumption *bool `yaml:"tls_resumption"`
	// H2Streams is how many requests an HTTP/2 connection carries at once (h2 and h2c only);
	// 0: 1.
	H2Streams int `yaml:"h2_streams"`

	// Lines are where the file gives each setting (its key → line), in defaults or the scenario:
	// a value refused later (a cpuset this machine lacks) is named where it was written.
	Lines map[string]int `yaml:"-"`
}

// Warmup is a warm-up setting read from a file (load.ParseWarmup): a fixed length, auto or
// auto:DURATION.
type Warmup struct{ load.Warmup }

// UnmarshalYAML reads a warm-up; a value it cannot read is a type error at its line, as a
// wrong type of any other key is.
func (w *Warmup) UnmarshalYAML(n *yaml.Node) error {
	parsed, err := load.ParseWarmup(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal !!str `%s` into scenario.Warmup", n.Line, n.Value)}}
	}
	w.Warmup = parsed
	return nil
}

// The stores a target can use (Settings.DB).
const (
	DBEmbedded = "embedded"
	DBPostgres = "postgres"
)

// DefaultPoolSize is the contract's connection pool (docs/contract.md), the same for every target;
// MaxPoolSize leaves room in the PostgreSQL server's 200 connections (db/postgres/start.sh).
const (
	DefaultPoolSize = 10
	MaxPoolSize     = 150
)

// merged returns s with every unset field taken from d.
func (s Settings) merged(d Settings) Settings {
	lines := map[string]int{}
	for k, v := range d.Lines {
		lines[k] = v
	}
	for k, v := range s.Lines {
		lines[k] = v
	}
	s.Lines = lines
	if s.Warmup == nil {
		s.Warmup = d.Warmup
	}
	if s.Duration == 0 {
		s.Duration = d.Duration
	}
	if s.Trials == 0 {
		s.Trials = d.Trials
	}
	if s.CPUs == "" {
		s.CPUs = d.CPUs
	}
	if s.Memory == "" {
		s.Memory = d.Memory
	}
	if s.DB == "" {
		s.DB = d.DB
	}
	if s.DBCPUs == "" {
		s.DBCPUs = d.DBCPUs
	}
	if s.DBPool == nil {
		s.DBPool = d.DBPool
	}
	if s.Protocol == "" {
		s.Protocol = d.Protocol
	}
	if s.TLSResumption == nil {
		s.TLSResumption = d.TLSResumption
	}
	if s.H2Streams == 0 {
		s.H2Streams = d.H2Streams
	}
	return s
}

// Built-in defaults, used where neither the scenario nor the file's defaults say otherwise: the
// load's are loadspec.Defaults.
var builtin = Settings{Warmup: &Warmup{loadspec.Defaults.Warmup}, Duration: loadspec.Defaults.Duration, Trials: loadspec.Defaults.Trials, Memory: "1g", DB: DBEmbedded}

const (
	defaultHealth         = "/health"
	defaultStartupTimeout = 120 * time.Second
)

func ptr[T any](v T) *T { return &v }

// CheckDB checks a store's name.
func CheckDB(db string) error {
	if db != DBEmbedded && db != DBPostgres {
		return fmt.Errorf("give %s (the targets' in-process database) or %s", DBEmbedded, DBPostgres)
	}
	return nil
}

// CheckPoolSizes says what is wrong with a pool-size sweep: each size from 1 to MaxPoolSize, none twice.
func CheckPoolSizes(sizes []int) error {
	for i, n := range sizes {
		if n < 1 || n > MaxPoolSize {
			return fmt.Errorf("pool size %d: give 1 to %d connections", n, MaxPoolSize)
		}
		if slices.Contains(sizes[:i], n) {
			return fmt.Errorf("pool size %d is listed twice", n)
		}
	}
	return nil
}
