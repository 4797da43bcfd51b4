// Package shard splits one cell's load over several generator processes and merges what they
// measured without loss.
//
// A cell's open loop at R requests per second over N shards: shard i (from 0) runs the load
// engine at R/N, its measured phase starting i/R after a start time handed to every shard, so that
// its k-th request is due at (k·N + i + 1)/R from that start and the merged arrivals stay R evenly
// spaced. Poisson arrivals at R are N independent Poisson processes at R/N, each drawn from a seed
// of its own, with no offset: merged, they are a Poisson process at R. Stages split the same way:
// uniform, each shard sends every N-th request of the cell's schedule (load.Share), so that they
// interleave whatever the rate does; Poisson, each shard runs the stages at 1/N of their rates. A
// closed loop's connections are split evenly, with no offset.
//
// A mix of requests (load.Kind) splits as its streams do: each shard carries every one at 1/N of
// its rate, the weighted shares taking their turns in the shard's part of the cell's stream.
// Uniform, each shard sends every N-th request of the cell's stream and of each stream of its own
// (load.Share, no offset), so that every stream's requests interleave as one generator sends
// them; Poisson, each stream of each shard draws its own arrivals. A stream's rate must divide
// among the shards as the cell's does.
//
// The seam is one process per shard (the hidden `iotbench shard` command) speaking JSON lines over
// its stdin and stdout: the parent sends the shard's Spec; the shard warms up, says "warm" and
// waits; once every shard is warm the parent sends one start time to all; each shard measures,
// writes its latency histogram as an HdrHistogram interval log (internal/hdrlog) and answers with
// its Result. The parent merges the histograms (their counts must add up, checked) and judges the
// cell invalid, naming the shard, when any shard's own measurement was invalid: a shard that
// delayed its requests delayed the cell's.
package shard

import (
	"fmt"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
)

// SpecSchema is the version of Spec: a shard refuses a spec of another, since a shard in a
// container or on another host may run another build of iotbench.
const SpecSchema = 1

// Spec is what one shard is asked to do.
type Spec struct {
	Schema       int
	Index, Count int
	// TotalRate is the cell's open-loop rate, every shard's together; 0 in closed loop.
	TotalRate int
	// CPUs pin the shard's process; empty: it keeps the parent's affinity.
	CPUs []int
	// Hlog is the interval log the shard writes its measured histogram to.
	Hlog string
	// SendHlog has the shard send its interval log back with its result instead of writing
	// Hlog: a shard in a container, whose files the parent cannot read, on this host or another.
	SendHlog bool `json:",omitempty"`
	// Load is the shard's part of the cell's load (Split): its rate, connections or stages, its
	// part of each stream of a mix, the cell's seed (each shard's own is drawn from it by its
	// Index) and Share; the engine's hooks, which do not travel, are the shard's own.
	Load load.Config
}

// message is one line of the protocol, either way: a Spec to the shard; "warm" from it; any
// number of clock questions to it (Ping), each answered with its clock; the start time to it (by
// its clock); the result from it.
type message struct {
	Spec  *Spec `json:",omitempty"`
	Warm  bool  `json:",omitempty"`
	Ping  bool  `json:",omitempty"`
	Clock int64 `json:",omitempty"` // the shard's clock, Unix nanoseconds, answering a Ping
	Start int64 `json:",omitempty"` // Unix nanoseconds
	// Result's Latencies travel in the interval log, not here: in the shard's file, or in Hlog
	// when the spec says SendHlog.
	Result *load.Result `json:",omitempty"`
	Hlog   []byte       `json:",omitempty"`
	// CPU is the shard's own CPU time over its measured phase, with its result; CPUs those it
	// could run on (its affinity, on its host).
	CPU   time.Duration `json:",omitempty"`
	CPUs  []int         `json:",omitempty"`
	Error string        `json:",omitempty"`
}

// Split is cfg's load as count shards' specs: the rate or the connections divided evenly. A rate
// or a number of connections that does not divide evenly is refused, since shards of unequal
// rates cannot interleave evenly.
func Split(cfg load.Config, count int) ([]Spec, error) {
	if count < 1 {
		return nil, fmt.Errorf("%d generators: at least one is needed", count)
	}
	if cfg.WarmupAuto && count > 1 {
		// Each shard would judge its own share, and the first steady would hold its load at the
		// common start until the last is.
		return nil, fmt.Errorf("a warm-up until steady is judged on one generator's figures: give a fixed warm-up (e.g. --warmup 30s) with %d generators", count)
	}
	if p := cfg.Request.Protocol; p.TLS() && count > 1 {
		// The run's CA is made in this process and not serialised (load.Request.TLS): a shard in
		// another process would trust nothing.
		return nil, fmt.Errorf("%s runs over TLS, whose certificates this process makes for the run: give --generators 1 (or --protocol http1 or h2c) with %d generators", p, count)
	}
	m := cfg.Model
	rate, conns := m.Rate/count, m.Connections/count
	stages, share := m.Stages, load.Share{}
	switch {
	case len(m.Stages) > 0 && m.Arrival == arrival.Poisson:
		stages = make([]load.Stage, len(m.Stages))
		for k, st := range m.Stages {
			if st.From%count != 0 || st.To%count != 0 {
				return nil, fmt.Errorf("stage %s does not divide among %d generators: use rates that are multiples of %d", st, count, count)
			}
			stages[k] = load.Stage{Duration: st.Duration, From: st.From / count, To: st.To / count}
		}
	case len(m.Stages) > 0 && count > 1:
		share = load.Share{Count: count}
	case m.Rate > 0 && m.Rate%count != 0:
		return nil, fmt.Errorf("a rate of %d rps does not divide among %d generators: use a multiple of %d, e.g. %d", m.Rate, count, count, nextMultiple(m.Rate, count))
	case m.Connections > 0 && m.Connections%count != 0:
		return nil, fmt.Errorf("%d connections do not divide among %d generators: use a multiple of %d", m.Connections, count, count)
	case len(cfg.Kinds) > 0 && m.Rate > 0 && m.Arrival != arrival.Poisson && count > 1:
		// Streams of their own interleave only by their place in the cell's streams: an offset
		// of the cell's rate would bunch them.
		share = load.Share{Count: count}
	}
	kinds, err := splitKinds(cfg.Kinds, count)
	if err != nil {
		return nil, err
	}
	part := cfg
	part.Settled, part.Progress, part.Measuring, part.EndEarly = nil, nil, nil, nil // each shard's own
	part.Kinds, part.Model.Rate, part.Model.Connections, part.Model.Stages, part.Model.Share = kinds, rate, conns, stages, share
	specs := make([]Spec, count)
	for i := range specs {
		specs[i] = Spec{Schema: SpecSchema, Index: i, Count: count, TotalRate: m.Rate, Load: part}
	}
	return specs, nil
}

// splitKinds are a mix's kinds as each of count shards sends them: a stream of its own at its
// part of the rate, which must divide as the cell's does; a weighted share as it is.
func splitKinds(kinds []load.Kind, count int) ([]load.Kind, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	out := slices.Clone(kinds)
	for i, k := range out {
		if !k.Own() {
			continue
		}
		if k.Rate%count != 0 {
			return nil, fmt.Errorf("request %s: a rate of %d rps does not divide among %d generators: use a multiple of %d, e.g. %d", k.Name, k.Rate, count, count, nextMultiple(k.Rate, count))
		}
		out[i].Rate = k.Rate / count
	}
	return out, nil
}

// nextMultiple is the first multiple of n above rate.
func nextMultiple(rate, n int) int { return rate - rate%n + n }

// shardSeed is shard i's seed of a random arrival process: the cell's for the first shard,
// another, far from it, for each other one, so that no two shards draw the same arrivals.
func shardSeed(seed uint64, i int) uint64 { return seed + uint64(i)*0x9e3779b97f4a7c15 }

// Offset is how long after the common start the shard's measured phase begins: i/R, so that
// shard i's requests fall between those of the shards before and after it. Poisson shards need
// none: independent processes do not interleave, they add up; nor does a shard that takes its
// Share of the cell's schedule.
func (s Spec) Offset() time.Duration {
	m := s.Load.Model
	if s.TotalRate <= 0 || m.Arrival == arrival.Poisson || len(m.Stages) > 0 || m.Share.Count > 1 {
		return 0
	}
	return time.Duration(int64(s.Index) * int64(time.Second) / int64(s.TotalRate))
}

// config is the load engine's configuration of the shard: its draws and its share placed by
// its Index.
func (s Spec) config() load.Config {
	cfg := s.Load
	cfg.Model.Seed = shardSeed(cfg.Model.Seed, s.Index)
	if cfg.Model.Share.Count > 1 {
		cfg.Model.Share.Index = s.Index
	}
	return cfg
}

// check refuses a spec of another schema.
func (s Spec) check() error {
	if s.Schema != SpecSchema {
		return fmt.Errorf("a shard spec of schema %d, and this iotbench reads %d: run the same build of iotbench on every generator", s.Schema, SpecSchema)
	}
	return nil
}

// Name is how a reason names the shard.
func (s Spec) Name() string { return fmt.Sprintf("generator shard %d of %d", s.Index+1, s.Count) }
