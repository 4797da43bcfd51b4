package loadspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// given is a spec of the settings kv (KEY, TEXT, …) as the command line writes them.
func given(t *testing.T, kv ...string) Spec {
	t.Helper()
	var s Spec
	for i := 0; i+1 < len(kv); i += 2 {
		if err := s.Set(Key(kv[i]), kv[i+1]); err != nil {
			t.Fatalf("set %s %s: %v", kv[i], kv[i+1], err)
		}
	}
	return s
}

// A scenario's open loop, uniform, over HTTP/2 with resumption; and a closed loop with think time.
var (
	openBase   = Spec{Rate: 500, ExpectedLatency: 50 * time.Millisecond, Timeout: time.Second, Warmup: load.Warmup{Length: 5 * time.Second}, Duration: 30 * time.Second, Trials: 5, Protocol: protocol.H2, H2Streams: 10, TLSResumption: true}
	closedBase = Spec{Connections: 64, Think: load.Think{Mean: 100 * time.Millisecond}, ExpectedLatency: 50 * time.Millisecond, Timeout: time.Second, Duration: 30 * time.Second, Trials: 5}
)

// Over replaces only what the overlay gives: a new loop drops what paced the old one, stages set
// the phase's length, a protocol without streams or TLS drops the base's parameters of them.
func TestOver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		base  Spec
		kv    []string
		check func(Spec) bool
	}{
		{"nothing given keeps the base", openBase, nil, func(s Spec) bool { return s.Rate == 500 && s.Trials == 5 && s.H2Streams == 10 }},
		{"connections replace the rate", openBase, []string{"connections", "8"}, func(s Spec) bool { return s.Rate == 0 && s.Connections == 8 && s.Loop() == load.Closed }},
		{"a rate drops the think time", closedBase, []string{"rate", "100"}, func(s Spec) bool { return s.Connections == 0 && s.Rate == 100 && s.Think == (load.Think{}) }},
		{"connections drop the arrival", Spec{Rate: 10, Arrival: arrival.Poisson}, []string{"connections", "2"}, func(s Spec) bool { return s.Arrival == "" }},
		{"stages set the duration", openBase, []string{"stages", "2s:100,3s:100-300"}, func(s Spec) bool {
			return s.Duration == 5*time.Second && s.Rate == 0 && s.Model().Rate == 160
		}},
		{"http1 drops the streams and resumption", openBase, []string{"protocol", "http1"}, func(s Spec) bool { return s.H2Streams == 0 && !s.TLSResumption }},
		{"h2c keeps the streams, drops resumption", openBase, []string{"protocol", "h2c"}, func(s Spec) bool { return s.H2Streams == 10 && !s.TLSResumption }},
		{"trials and warm-up", openBase, []string{"trials", "2", "warmup", "auto:30s"}, func(s Spec) bool {
			return s.Trials == 2 && s.Warmup == load.Warmup{Length: 30 * time.Second, Auto: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := given(t, tc.kv...).Over(tc.base, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("%+v", got)
			}
			for i := 0; i+1 < len(tc.kv); i += 2 {
				if !got.Gives(Key(tc.kv[i])) {
					t.Errorf("%s not marked given", tc.kv[i])
				}
			}
		})
	}
}

// Every refusal names the setting that caused it, as its producer wrote it.
func TestOverRefuses(t *testing.T) {
	for _, tc := range []struct {
		base Spec
		kv   []string
		key  Key
		want string
	}{
		{openBase, []string{"rate", "5", "connections", "5"}, Rate, "not both"},
		{openBase, []string{"stages", "2s:100", "rate", "5"}, Stages, "one of them"},
		{openBase, []string{"stages", "2s:100", "duration", "1m"}, Duration, "set the measured phase's length"},
		{openBase, []string{"think", "100ms"}, Think, "paces a closed loop"},
		{closedBase, []string{"arrival", "poisson"}, Arrival, "paces an open loop"},
		{openBase, []string{"arrival", "bursty"}, Arrival, "unknown arrival process"},
		{closedBase, []string{"h2_streams", "4"}, H2Streams, "belong to HTTP/2"},
		{openBase, []string{"h2_streams", "5000"}, H2Streams, "give 1 to 1000"},
		{closedBase, []string{"tls_resumption", "true"}, TLSResumption, "over TLS"},
		{openBase, []string{"timeout", "10ms"}, Timeout, "shorter than the expected latency"},
		{openBase, []string{"protocol", "h3"}, Protocol, "HTTP/3 is not supported"},
		{openBase, []string{"compat", "k6"}, Compat, "unknown compat mode"},
		{openBase, []string{"duration", "500ms"}, Duration, "under 1s"},
		{openBase, []string{"trials", "0"}, Trials, "at least 1"},
		{openBase, []string{"rate", "0"}, Rate, "at least 1"},
		{openBase, []string{"connections", "20000"}, Connections, "over 10000"},
		{openBase, []string{"warmup", "-1s"}, Warmup, "negative"},
	} {
		_, err := given(t, tc.kv...).Over(tc.base, 0)
		var e *Error
		if !errors.As(err, &e) || e.Key != tc.key || !strings.Contains(e.Err.Error(), tc.want) {
			t.Errorf("%v over %+v: %v, want %s: …%s…", tc.kv, tc.base, err, tc.key, tc.want)
		}
	}
	if _, err := given(t, "timeout", "50ms").Over(closedBase, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "minimum latency") {
		t.Errorf("a timeout at the work's minimum latency: %v", err)
	}
}

// Set reads what the command line writes, and names the setting it cannot read.
func TestSet(t *testing.T) {
	s := given(t, "rate", "100", "stages", "10s:0-100", "think", "exp:20ms", "warmup", "auto", "expected_latency", "20ms", "tls_resumption", "true")
	if s.Rate != 100 || load.FormatStages(s.Stages) != "10s:0-100" || s.Think != (load.Think{Mean: 20 * time.Millisecond, Exponential: true}) ||
		!s.Warmup.Auto || s.ExpectedLatency != 20*time.Millisecond || !s.TLSResumption {
		t.Errorf("%+v", s)
	}
	for _, kv := range [][2]string{{"rate", "fast"}, {"stages", "10s"}, {"think", "soon"}, {"warmup", "later"}, {"timeout", "10"}, {"tls_resumption", "maybe"}} {
		var s Spec
		err := s.Set(Key(kv[0]), kv[1])
		var e *Error
		if !errors.As(err, &e) || e.Key != Key(kv[0]) || e.Value != kv[1] || s.Gives(Key(kv[0])) {
			t.Errorf("set %s %q: %v (given: %v)", kv[0], kv[1], err, s.Given)
		}
	}
	if err := new(Spec).Set("speed", "1"); err == nil {
		t.Error("an unknown setting was set")
	}
}

// Config is the engine's view of one trial: the protocol's parameters on the request only where
// the protocol has them, the trial's seed, the stages' mean as the rate.
func TestConfig(t *testing.T) {
	spec, err := given(t, "stages", "2s:100,2s:100-300", "arrival", "poisson").Over(openBase, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := spec.Config(load.Request{Method: "GET"}, load.NewCheck("ok"), nil, 3)
	if m := cfg.Model; m.Rate != 150 || m.Seed != 3 || m.Arrival != arrival.Poisson || cfg.Duration != 4*time.Second || cfg.Warmup != 5*time.Second {
		t.Errorf("model %+v, duration %v", m, cfg.Duration)
	}
	if r := cfg.Request; r.Protocol != protocol.H2 || r.Streams != 10 || !r.Resume {
		t.Errorf("request %+v", r)
	}
	plain := Spec{Rate: 1, H2Streams: 10, TLSResumption: true}.Config(load.Request{}, load.Check{}, nil, 1)
	if r := plain.Request; r.Protocol != protocol.HTTP1 || r.Streams != 0 || r.Resume {
		t.Errorf("http1 request %+v", r)
	}
}

// Every key has its setting: how it reads, writes and copies.
func TestEveryKeyHasItsSetting(t *testing.T) {
	if len(settings) != len(Keys) {
		t.Errorf("%d settings for %d keys", len(settings), len(Keys))
	}
	for _, k := range Keys {
		if _, ok := settings[k]; !ok {
			t.Errorf("%s has no setting", k)
		}
	}
}

// FuzzSet: whatever the command line writes, Set reads it or says which setting it could not
// read, and a spec it reads is checked without a panic.
func FuzzSet(f *testing.F) {
	for _, seed := range [][2]string{{"rate", "100"}, {"stages", "30s:500,60s:500-5000"}, {"think", "exp:100ms"}, {"warmup", "auto:90s"}, {"duration", "1m"}, {"protocol", "h2"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, key, text string) {
		var s Spec
		err := s.Set(Key(key), text)
		if err != nil {
			if s.Gives(Key(key)) {
				t.Errorf("set %s %q failed but marked it given", key, text)
			}
			return
		}
		if !s.Gives(Key(key)) {
			t.Errorf("set %s %q not marked given", key, text)
		}
		_ = s.Check()
		_, _ = s.Over(Defaults, 0)
	})
}
