package shard

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/timeline"
)

// Part is one shard's measurement: its result and its latency histogram, read from its log.
type Part struct {
	Spec      Spec
	Result    load.Result
	Latencies *hdrhistogram.Histogram
}

// Merge is the cell's measurement made of its shards': counts added, histograms pooled without
// loss (each shard's log must hold as many latencies as the shard counted successes, and the pool
// their sum), each second of the timeline pooled. The generator's own delay and send lag are the
// worst shard's (a percentile of several shards' summaries is not theirs pooled; the worst is
// what judged the cell). The cell is invalid when any shard's measurement was, and its reason
// names the first such shard.
//
// A mix's requests are merged the same way, each from its part of every shard (load.Result.Kinds),
// and the whole is judged by them as one generator judges it (load.JudgeMix): a shard invalid
// only for a request makes that request invalid, naming the shard, and the whole for it.
func Merge(parts []Part) (load.Result, error) {
	res, err := merge(parts)
	if err != nil {
		return load.Result{}, err
	}
	kinds := len(parts[0].Result.Kinds)
	if kinds == 0 {
		return res, nil
	}
	res.Kinds = make([]load.Result, kinds)
	for k := range kinds {
		of := make([]Part, len(parts))
		for i, p := range parts {
			if len(p.Result.Kinds) != kinds {
				return load.Result{}, fmt.Errorf("%s measured %d requests, %s %d", p.Spec.Name(), len(p.Result.Kinds), parts[0].Spec.Name(), kinds)
			}
			r := p.Result.Kinds[k]
			of[i] = Part{Spec: p.Spec, Result: r, Latencies: r.Latencies}
		}
		if res.Kinds[k], err = merge(of); err != nil {
			return load.Result{}, fmt.Errorf("request %s: %w", of[0].Result.Kind, err)
		}
		res.Kinds[k].Generators = 0 // the whole's
		if s := parts[0].Spec; len(s.Load.Kinds) == kinds && !s.Load.Kinds[k].Own() {
			// A weighted share's rate from the cell's, as one generator rounds it, not the
			// shards' rounded parts added.
			res.Kinds[k].RequestedRate = int(math.Round(load.KindRate(s.Load.Kinds, k, float64(s.TotalRate))))
		}
	}
	load.JudgeMix(&res)
	return res, nil
}

// merge is Merge of one measurement (the whole, or one request of a mix), without its requests.
func merge(parts []Part) (load.Result, error) {
	if len(parts) == 0 {
		return load.Result{}, fmt.Errorf("no shard to merge")
	}
	first := parts[0].Result
	res := load.Result{
		Mode: first.Mode, Kind: first.Kind, Arrival: first.Arrival, Think: first.Think, ExpectedLatency: first.ExpectedLatency,
		Codes: map[int]int64{}, ErrorKinds: map[string]int64{}, Valid: true, Generators: len(parts),
	}
	hs := make([]*hdrhistogram.Histogram, len(parts))
	var warm, measured [][]timeline.Second
	for i, p := range parts {
		r := p.Result
		if p.Latencies == nil {
			return load.Result{}, fmt.Errorf("%s: no latency histogram", p.Spec.Name())
		}
		if got := p.Latencies.TotalCount(); got != r.Latency.Count || got != r.Successes {
			return load.Result{}, fmt.Errorf("%s: its histogram holds %d latencies, it counted %d successes", p.Spec.Name(), got, r.Successes)
		}
		hs[i] = p.Latencies
		res.RequestedRate += r.RequestedRate
		res.InFlightLimit += r.InFlightLimit
		res.PeakInFlight += r.PeakInFlight
		res.InFlightFull = res.InFlightFull || r.InFlightFull
		res.Duration = max(res.Duration, r.Duration)
		res.Requests += r.Requests
		res.Scheduled += r.Scheduled
		res.Successes += r.Successes
		res.Answered += r.Answered
		res.Errors += r.Errors
		res.Timeouts += r.Timeouts
		res.BytesReceived += r.BytesReceived
		for k, v := range r.Codes {
			res.Codes[k] += v
		}
		for k, v := range r.ErrorKinds {
			res.ErrorKinds[k] += v
		}
		res.SendLag = worse(res.SendLag, r.SendLag)
		res.OwnDelay = worse(res.OwnDelay, r.OwnDelay)
		// Connections and first bytes as own delays: the worse shard's, counted over all.
		res.FirstByte = worse(res.FirstByte, r.FirstByte)
		cs := &res.Connections
		cs.Opened += r.Connections.Opened
		cs.Resumed += r.Connections.Resumed
		cs.Connect = worse(cs.Connect, r.Connections.Connect)
		cs.TLSVersion, cs.TLSCipher = cmp.Or(cs.TLSVersion, r.Connections.TLSVersion), cmp.Or(cs.TLSCipher, r.Connections.TLSCipher)
		res.Latency.Clamped += r.Latency.Clamped
		if !r.Valid && res.Valid && !r.InvalidByRequest() {
			res.SetFault(r.FaultKind(), p.Spec.Name()+": "+r.InvalidReason)
		}
		res.Warmed = max(res.Warmed, r.Warmed)
		res.WarmupInFlight += r.WarmupInFlight
		if r.Wrk != nil {
			if res.Wrk == nil {
				res.Wrk = &load.WrkFigures{}
			}
			res.Wrk.Merge(*r.Wrk)
		}
		warm = append(warm, r.WarmupTimeline)
		measured = append(measured, r.Timeline)
	}
	pool, err := hdrlog.Merge(hs...)
	if err != nil {
		return load.Result{}, err
	}
	if pool.TotalCount() != res.Successes {
		return load.Result{}, fmt.Errorf("the pooled histogram holds %d latencies, the shards counted %d successes", pool.TotalCount(), res.Successes)
	}
	res.Latencies = pool
	clamped := res.Latency.Clamped
	res.Latency = latency.Summarize(pool)
	res.Latency.Clamped = clamped
	if res.Timeline, err = mergeSeconds(measured); err != nil {
		return load.Result{}, err
	}
	if res.WarmupTimeline, err = mergeSeconds(warm); err != nil {
		return load.Result{}, err
	}
	return res, nil
}

// worse keeps the summary with the higher p99, the counts of both added.
func worse(a, b latency.Summary) latency.Summary {
	n := a.Count + b.Count
	if b.P99 > a.P99 {
		a = b
	}
	a.Count = n
	return a
}

// mergeSeconds pools the shards' timelines second by second.
func mergeSeconds(shards [][]timeline.Second) ([]timeline.Second, error) {
	bySecond := map[int]*timeline.Second{}
	hists := map[int][]*hdrhistogram.Histogram{}
	for _, secs := range shards {
		for _, s := range secs {
			m := bySecond[s.Index]
			if m == nil {
				m = &timeline.Second{Index: s.Index}
				bySecond[s.Index] = m
			}
			m.Due += s.Due
			m.Sent += s.Sent
			m.Successes += s.Successes
			m.Timeouts += s.Timeouts
			m.Transport += s.Transport
			m.Status += s.Status
			m.Check += s.Check
			m.InFlight += s.InFlight
			m.OwnDelayP99 = max(m.OwnDelayP99, s.OwnDelayP99)
			if s.Histogram != nil {
				h, err := hdrhistogram.Decode(s.Histogram)
				if err != nil {
					return nil, fmt.Errorf("second %d's histogram: %w", s.Index, err)
				}
				hists[s.Index] = append(hists[s.Index], h)
			}
		}
	}
	if len(bySecond) == 0 {
		return nil, nil
	}
	var out []timeline.Second
	for _, i := range slices.Sorted(maps.Keys(bySecond)) {
		s := bySecond[i]
		if hs := hists[i]; len(hs) > 0 {
			h, err := hdrlog.Merge(hs...)
			if err != nil {
				return nil, fmt.Errorf("second %d: %w", i, err)
			}
			sum := latency.Summarize(h)
			s.P50, s.P99, s.Max = sum.P50, sum.P99, sum.Max
			if s.Histogram, err = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
				return nil, err
			}
		}
		out = append(out, *s)
	}
	return out, nil
}
