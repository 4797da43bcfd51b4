// Package loadspec is how a cell is loaded, as one value (Spec): the loop and its pace, the
// protocol, the phases and the trials. The command line's flags, a scenario, an experiment's run
// and a --url service each produce one, marking what they were given; Over lays one over another,
// Check checks one, Defaults are declared here once, and Config makes the engine's configuration
// of a cell from it. A shard's spec carries one too.
//
// Adding a load setting: a field, a Key and its entry in settings (how it is read, written,
// bounded), the producers that can give it (the flag in cli, the key in scenario), and the
// consumer that uses it (Config, or the engine). docs/scenarios.md lists the files.
package loadspec

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// Key names a setting as a scenario file writes it; Flag is the command line's name.
type Key string

const (
	Rate            Key = "rate"
	Connections     Key = "connections"
	Stages          Key = "stages"
	Arrival         Key = "arrival"
	Think           Key = "think"
	ExpectedLatency Key = "expected_latency"
	Timeout         Key = "timeout"
	Warmup          Key = "warmup"
	Duration        Key = "duration"
	Trials          Key = "trials"
	Compat          Key = "compat"
	Protocol        Key = "protocol"
	H2Streams       Key = "h2_streams"
	TLSResumption   Key = "tls_resumption"
	NewConnection   Key = "new_connection"
)

// Keys are every setting, in the order the docs list them.
var Keys = []Key{Rate, Connections, Stages, Arrival, Think, ExpectedLatency, Timeout, Warmup, Duration, Trials, Compat, Protocol, H2Streams, TLSResumption, NewConnection}

// Flag is the command line's name of the setting: expected-latency for expected_latency.
func (k Key) Flag() string { return strings.ReplaceAll(string(k), "_", "-") }

// Spec is how a cell is loaded: an open loop at Rate (or over Stages) or a closed loop over
// Connections, how it is paced, what it speaks, and how long and how often it is measured.
type Spec struct {
	Rate        int
	Connections int
	// Stages are the open loop's rates over the measured phase instead of one Rate; they set
	// Duration.
	Stages []load.Stage `json:",omitempty"`
	// Arrival is the open loop's arrival process; empty: uniform.
	Arrival arrival.Process `json:",omitempty"`
	// Think is the closed loop's pause between an answer and the connection's next request.
	Think load.Think `json:",omitzero"`
	// ExpectedLatency sizes the open loop's in-flight bound (load.Model.InFlightLimit).
	ExpectedLatency time.Duration
	Timeout         time.Duration // per request
	Warmup          load.Warmup
	Duration        time.Duration // of the measured phase
	Trials          int
	// Compat counts requests as another tool does, besides iotbench's own figures.
	Compat load.Compat `json:",omitempty"`
	// Protocol is what the generator speaks (empty: http1); H2Streams an HTTP/2 connection's
	// requests at once (0: 1); TLSResumption resumes TLS sessions on new connections;
	// NewConnection sends every request on a new connection.
	Protocol      protocol.Protocol `json:",omitempty"`
	H2Streams     int               `json:",omitempty"`
	TLSResumption bool              `json:",omitempty"`
	NewConnection bool              `json:",omitempty"`
	// Given are the settings its producer was given (a flag, a key of the file); the others are
	// its defaults. Only given settings replace another spec's (Over).
	Given []Key `json:"-"`
}

// Defaults are the settings no producer gave: the one place they are declared.
var Defaults = Spec{
	ExpectedLatency: 100 * time.Millisecond,
	Timeout:         10 * time.Second,
	Warmup:          load.Warmup{Length: 10 * time.Second},
	Duration:        20 * time.Second,
	Trials:          3,
}

// Gives says whether the spec's producer gave the setting.
func (s Spec) Gives(k Key) bool { return slices.Contains(s.Given, k) }

// Give marks settings as given.
func (s *Spec) Give(keys ...Key) {
	for _, k := range keys {
		if !s.Gives(k) {
			s.Given = append(s.Given, k)
		}
	}
}

// Loop is the loop the spec runs: closed over connections, else open.
func (s Spec) Loop() load.Mode { return s.Model().Mode() }

// Over is base with every setting s gives, once checked (Problems), replacing base's: a rate,
// stages or connections replace base's loop and what paced it (a think time, an arrival process)
// when the new loop has no use for it. Stages set the measured phase's length. Then what only the
// two together can get wrong: s's Misfits in the result.
func (s Spec) Over(base Spec, minLatency time.Duration) (Spec, error) {
	if e := s.Problems(); len(e) > 0 {
		return base, e[0]
	}
	out := base
	out.Given = slices.Clone(base.Given)
	out.Give(s.Given...)
	if s.Gives(Rate) || s.Gives(Connections) || s.Gives(Stages) {
		out.Rate, out.Connections, out.Stages = s.Rate, s.Connections, s.Stages
		if out.Connections > 0 {
			out.Arrival = ""
		} else {
			out.Think = load.Think{}
		}
	}
	for _, k := range s.Given {
		settings[k].take(&out, s)
	}
	if len(out.Stages) > 0 {
		out.Duration = load.StagesDuration(out.Stages)
	}
	if !out.Protocol.Or().HTTP2() && !s.Gives(H2Streams) {
		out.H2Streams = 0 // base's streams, its protocol replaced by one without them
	}
	if !out.Protocol.Or().TLS() && !s.Gives(TLSResumption) {
		out.TLSResumption = false
	}
	if e := s.Misfits(out, minLatency); len(e) > 0 {
		return out, e[0]
	}
	return out, nil
}

// Model is the engine's load model of the spec: with stages, its rate is their mean (what the
// phase is judged by).
func (s Spec) Model() load.Model {
	m := load.Model{Rate: s.Rate, Connections: s.Connections, ExpectedLatency: s.ExpectedLatency, Arrival: s.Arrival, Stages: s.Stages, Think: s.Think}
	if len(s.Stages) > 0 {
		m.Rate = stagesRate(s.Stages)
	}
	return m
}

// stagesRate is the stages' mean rate, at least 1.
func stagesRate(stages []load.Stage) int {
	return max(1, int(math.Round(load.StagesRequests(stages)/load.StagesDuration(stages).Seconds())))
}

// Config is the engine's configuration of one trial of a cell loaded as s says: req in s's
// protocol, the trial's arrivals (Trial). A random arrival process draws from the trial's number, so that every target of a
// trial meets the same arrivals (their comparison is not the draws') and a run planned again
// draws them again.
func (s Spec) Config(req load.Request, check load.Check, kinds []load.Kind, trial int) load.Config {
	req.Protocol = s.Protocol.Or()
	req.Streams = 0
	if req.Protocol.HTTP2() {
		req.Streams = s.H2Streams
	}
	req.Resume = req.Protocol.TLS() && s.TLSResumption
	req.NewConnection = s.NewConnection
	return Trial(load.Config{
		Request: req, Check: check, Kinds: kinds, Model: s.Model(),
		Warmup: s.Warmup.Length, WarmupAuto: s.Warmup.Auto, Duration: s.Duration, Timeout: s.Timeout, Compat: s.Compat,
	}, trial)
}

// Trial is cfg for one trial: its arrivals drawn from the trial's number.
func Trial(cfg load.Config, trial int) load.Config {
	cfg.Model.Seed = uint64(trial)
	return cfg
}
