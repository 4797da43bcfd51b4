package shard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

func TestSplit(t *testing.T) {
	open := func(rate int) load.Config { return load.Config{Model: load.Model{Rate: rate}} }
	closed := load.Config{Model: load.Model{Connections: 30}}
	var out strings.Builder
	for _, tc := range []struct {
		name  string
		cfg   load.Config
		count int
	}{
		{"2000 rps over 2", open(2000), 2},
		{"3000 rps over 3", open(3000), 3},
		{"one generator", open(999), 1},
		{"2001 rps over 2", open(2001), 2},
		{"30 connections over 3", closed, 3},
		{"30 connections over 4", closed, 4},
		{"none", open(100), 0},
		{"poisson 2000 rps over 2", load.Config{Model: load.Model{Rate: 2000, Arrival: arrival.Poisson, Seed: 3}}, 2},
		{"stages over 2", load.Config{Model: load.Model{Rate: 1001, Stages: stages(t, "10s:500-1502")}}, 2},
		{"poisson stages over 2", load.Config{Model: load.Model{Rate: 1000, Arrival: arrival.Poisson, Stages: stages(t, "10s:500-1500")}}, 2},
		{"poisson stages over 3", load.Config{Model: load.Model{Rate: 1000, Arrival: arrival.Poisson, Stages: stages(t, "10s:500-1500")}}, 3},
		{"warm-up until steady over 2", load.Config{Model: load.Model{Rate: 1000}, Warmup: time.Minute, WarmupAuto: true}, 2},
		{"https over 2", load.Config{Model: load.Model{Rate: 1000}, Request: load.Request{Protocol: protocol.HTTPS}}, 2},
		{"h2c over 2", load.Config{Model: load.Model{Rate: 1000}, Request: load.Request{Protocol: protocol.H2C, Streams: 4}}, 2},
		{"warm-up until steady, one generator", load.Config{Model: load.Model{Rate: 1000}, Warmup: time.Minute, WarmupAuto: true}, 1},
		{"a mix with a probe over 2", load.Config{Model: load.Model{Rate: 1000}, Kinds: mixKinds(50)}, 2},
		{"a poisson mix with a probe over 2", load.Config{Model: load.Model{Rate: 1000, Arrival: arrival.Poisson, Seed: 3}, Kinds: mixKinds(50)}, 2},
		{"a mix of stages over 2", load.Config{Model: load.Model{Rate: 1000, Stages: stages(t, "10s:500-1500")}, Kinds: mixKinds(50)}, 2},
		{"a closed-loop mix over 3", load.Config{Model: load.Model{Connections: 30}, Kinds: mixKinds(0)[:2]}, 3},
		{"a probe at 51 rps over 2", load.Config{Model: load.Model{Rate: 1000}, Kinds: mixKinds(51)}, 2},
		{"a mix, one generator", load.Config{Model: load.Model{Rate: 999}, Kinds: mixKinds(51)}, 1},
	} {
		specs, err := Split(tc.cfg, tc.count)
		fmt.Fprintf(&out, "%s:", tc.name)
		if err != nil {
			fmt.Fprintf(&out, " error: %v\n", err)
			continue
		}
		for _, s := range specs {
			// As the shard's engine runs it.
			m := s.config().Model
			arrival := ""
			if m.Arrival != "" {
				arrival = fmt.Sprintf(", %s seed %d", m.Arrival, m.Seed)
			}
			if len(m.Stages) > 0 {
				arrival += fmt.Sprintf(", stages %s", load.FormatStages(m.Stages))
			}
			if len(m.Stages) > 0 || m.Share.Count > 0 {
				arrival += fmt.Sprintf(", share %d/%d", m.Share.Index, m.Share.Count)
			}
			if len(s.Load.Kinds) > 0 {
				arrival += ", requests " + load.FormatKinds(s.Load.Kinds)
			}
			if r := s.config().Request; r.Protocol != "" {
				arrival += fmt.Sprintf(", %s streams %d", r.Protocol, r.Streams)
			}
			fmt.Fprintf(&out, " [%s: rate %d, connections %d, offset %s%s]", s.Name(), m.Rate, m.Connections, s.Offset(), arrival)
		}
		out.WriteString("\n")
	}
	goldenFile(t, "split", out.String())
}

// A Job's shards share one spec (the first's), each given its index: each then runs as the
// shard of that index would, its own draws and its own share of the schedule.
func TestSpecOfAJobTakesItsIndex(t *testing.T) {
	for _, m := range []load.Model{
		{Rate: 1000, Arrival: arrival.Poisson, Seed: 7},
		{Rate: 1000, Stages: stages(t, "10s:500-1500")},
	} {
		specs, err := Split(load.Config{Model: m, Kinds: mixKinds(50)}, 2)
		if err != nil {
			t.Fatal(err)
		}
		job := specs[0]
		job.Index = 1
		if got, want := job.config().Model, specs[1].config().Model; got.Seed != want.Seed || got.Share != want.Share {
			t.Errorf("%s: the job's shard 2 runs seed %d, share %+v; the split's %d, %+v", m.ArrivalProcess(), got.Seed, got.Share, want.Seed, want.Share)
		}
	}
}

// A split changes no model: the shards' arrivals merged (each shard's schedule after its offset)
// are the cell's process at the cell's rate. Uniform shards interleave into even spacing;
// Poisson shards, each drawing its own, add up to a Poisson process (gaps' coefficient of
// variation 1). Ten minutes of schedule, so the counts hold within 1% by far.
func TestSplitKeepsTheArrivalProcess(t *testing.T) {
	const rate, count, du = 1000, 4, 10 * time.Minute
	for _, tc := range []struct {
		arrival      arrival.Process
		minCV, maxCV float64
	}{{arrival.Uniform, 0, 0.01}, {arrival.Poisson, 0.95, 1.05}} {
		specs, err := Split(load.Config{Model: load.Model{Rate: rate, Arrival: tc.arrival, Seed: 1}}, count)
		if err != nil {
			t.Fatal(err)
		}
		var merged []time.Duration
		for _, s := range specs {
			due := load.Schedule(s.config().Model)
			for i := uint64(0); ; i++ {
				at := s.Offset() + due(i)
				if at > du {
					break
				}
				merged = append(merged, at)
			}
		}
		slices.Sort(merged)
		n, cv := float64(len(merged)), gapsCV(merged)
		if want := float64(rate) * du.Seconds(); math.Abs(n-want) > 0.01*want {
			t.Errorf("%s over %d shards: %.0f requests due in %v, want %.0f within 1%%", tc.arrival, count, n, du, want)
		}
		if cv < tc.minCV || cv > tc.maxCV {
			t.Errorf("%s over %d shards: merged gaps' coefficient of variation %.3f, want %.2f to %.2f", tc.arrival, count, cv, tc.minCV, tc.maxCV)
		}
	}
}

// mixKinds are a mix of an 80/20 share and, at probe rps when not 0, a probe of its own.
func mixKinds(probe int) []load.Kind {
	kinds := []load.Kind{
		{Name: "ingest", Request: load.Request{Method: "POST", URL: "http://127.0.0.1:1/ingest"}, Weight: 80},
		{Name: "page", Request: load.Request{Method: "GET", URL: "http://127.0.0.1:1/page"}, Weight: 20},
	}
	if probe > 0 {
		kinds = append(kinds, load.Kind{Name: "probe", Request: load.Request{Method: "GET", URL: "http://127.0.0.1:1/health"}, Rate: probe})
	}
	return kinds
}

func stages(t *testing.T, text string) []load.Stage {
	t.Helper()
	st, err := load.ParseStages(text)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Stages split without changing them: the shards' arrivals merged are as many as the stages'
// area, uniform ones exactly the cell's schedule.
func TestSplitKeepsTheStages(t *testing.T) {
	st := stages(t, "200s:500,200s:500-2000")
	for _, process := range []arrival.Process{arrival.Uniform, arrival.Poisson} {
		m := load.Model{Rate: 1000, Arrival: process, Stages: st, Seed: 1}
		specs, err := Split(load.Config{Model: m}, 4)
		if err != nil {
			t.Fatal(err)
		}
		var merged []time.Duration
		for _, s := range specs {
			due := load.Schedule(s.config().Model)
			for i := uint64(0); ; i++ {
				at := s.Offset() + due(i)
				if at > load.StagesDuration(st) {
					break
				}
				merged = append(merged, at)
			}
		}
		slices.Sort(merged)
		want := load.StagesRequests(st)
		if n := float64(len(merged)); math.Abs(n-want) > 0.01*want {
			t.Errorf("%s stages over 4 shards: %.0f requests, want %.0f within 1%%", process, n, want)
		}
		if process == arrival.Uniform {
			whole := load.Schedule(m)
			for i, at := range merged {
				if w := whole(uint64(i)); at != w {
					t.Fatalf("uniform stages over 4 shards: request %d due at %v, the cell's at %v", i, at, w)
				}
			}
		}
	}
}

// A mix splits without changing it: uniform, the shards' requests merged are due exactly when
// one generator's are, the probe's among them; Poisson, each request's count is its rate's
// within 4 standard deviations, and the probe's merged gaps stay exponential (coefficient of variation 1). Each
// weighted share keeps its weight, within a turn of the weights per shard.
func TestSplitKeepsTheMix(t *testing.T) {
	const du = 200 * time.Second
	for _, tc := range []struct {
		name string
		m    load.Model
	}{
		{"uniform", load.Model{Rate: 1000}},
		{"poisson", load.Model{Rate: 1000, Arrival: arrival.Poisson, Seed: 1}},
		{"uniform stages", load.Model{Rate: 1000, Stages: stages(t, "100s:500,100s:500-1500")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := load.Config{Model: tc.m, Kinds: mixKinds(60)}
			// due lists the requests of cfg's measured phase, by kind, and all of them.
			due := func(cfg load.Config, offset time.Duration, byKind [][]time.Duration) [][]time.Duration {
				next := load.MixSchedule(cfg)
				for i := uint64(0); ; i++ {
					at, kind := next(i)
					if at += offset; at > du {
						return byKind
					}
					byKind[kind] = append(byKind[kind], at)
				}
			}
			whole := due(cfg, 0, make([][]time.Duration, 3))
			specs, err := Split(cfg, 4)
			if err != nil {
				t.Fatal(err)
			}
			merged := make([][]time.Duration, 3)
			for _, s := range specs {
				merged = due(s.config(), s.Offset(), merged)
			}
			for k := range merged {
				slices.Sort(merged[k])
			}
			all := func(byKind [][]time.Duration) []time.Duration {
				out := slices.Concat(byKind...)
				slices.Sort(out)
				return out
			}
			if tc.m.Arrival != arrival.Poisson {
				if !slices.Equal(all(merged), all(whole)) {
					t.Errorf("the shards' requests merged (%d) are not due when one generator's (%d) are", len(all(merged)), len(all(whole)))
				}
				if !slices.Equal(merged[2], whole[2]) {
					t.Errorf("the shards' probes merged (%d) are not due when one generator's (%d) are", len(merged[2]), len(whole[2]))
				}
			}
			want := []float64{800 * du.Seconds(), 200 * du.Seconds(), 60 * du.Seconds()}
			if len(tc.m.Stages) > 0 {
				want[0], want[1] = 0.8*load.StagesRequests(tc.m.Stages), 0.2*load.StagesRequests(tc.m.Stages)
			}
			for k, w := range want {
				// Within a turn of the weights (5 requests) per shard, uniform; Poisson, within
				// 4 standard deviations of its count (√w).
				slack := 5 * float64(len(specs))
				if tc.m.Arrival == arrival.Poisson {
					slack = 4 * math.Sqrt(w)
				}
				if n := float64(len(merged[k])); math.Abs(n-w) > slack {
					t.Errorf("request %s: %.0f due over %d shards, want %.0f within %.0f", cfg.Kinds[k].Name, n, len(specs), w, slack)
				}
			}
			if tc.m.Arrival == arrival.Poisson {
				if cv := gapsCV(merged[2]); cv < 0.9 || cv > 1.1 {
					t.Errorf("the probe's merged gaps' coefficient of variation %.3f, want 1 ± 0.1", cv)
				}
			}
		})
	}
}

// gapsCV is the coefficient of variation of the gaps between sorted times, from 0.
func gapsCV(times []time.Duration) float64 {
	var sum, sumSq float64
	prev := time.Duration(0)
	for _, at := range times {
		gap := (at - prev).Seconds()
		sum, sumSq, prev = sum+gap, sumSq+gap*gap, at
	}
	n := float64(len(times))
	mean := sum / n
	return math.Sqrt(max(sumSq/n-mean*mean, 0)) / mean
}

// part is a shard's measurement of successes with the given latencies (ms), valid unless reason.
func part(i, n int, reason string, ms ...int64) Part {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range ms {
		h.RecordValue(v * 1000)
	}
	r := load.Result{
		Mode: load.Open, RequestedRate: 100, Duration: time.Second, Requests: int64(len(ms)) + 1, Successes: int64(len(ms)), Errors: 1,
		Codes: map[int]int64{200: int64(len(ms)), 500: 1}, ErrorKinds: map[string]int64{},
		Latency: latency.Summarize(h), OwnDelay: latency.Summary{Count: int64(len(ms)), P99: time.Duration(i+1) * time.Millisecond},
		Valid: reason == "", InvalidReason: reason,
	}
	return Part{Spec: Spec{Index: i, Count: n}, Result: r, Latencies: h}
}

func TestMerge(t *testing.T) {
	lost := part(1, 2, "", 5, 6)
	lost.Result.Successes = 3 // the log holds fewer than the shard counted
	var out strings.Builder
	for _, tc := range []struct {
		name  string
		parts []Part
	}{
		{"two valid shards", []Part{part(0, 2, "", 1, 2, 3), part(1, 2, "", 4, 5, 6, 7)}},
		{"the second shard delayed its requests", []Part{part(0, 2, "", 1, 2), part(1, 2, "generator delayed requests: its own p99 delay 3ms exceeds 1ms", 3, 4)}},
		{"a shard's log lost a latency", []Part{part(0, 2, "", 1), lost}},
		{"no shard", nil},
	} {
		res, err := Merge(tc.parts)
		fmt.Fprintf(&out, "%s: ", tc.name)
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			continue
		}
		fmt.Fprintf(&out, "requested %d, requests %d, successes %d, errors %d, codes %s, pooled %d, p50 %s, max %s, own delay p99 %s of %d, valid %v %q\n",
			res.RequestedRate, res.Requests, res.Successes, res.Errors, load.FormatCodes(res.Codes), res.Latencies.TotalCount(),
			res.Latency.P50.Round(time.Millisecond), res.Latency.Max.Round(time.Millisecond), res.OwnDelay.P99, res.OwnDelay.Count, res.Valid, res.InvalidReason)
	}
	goldenFile(t, "merge", out.String())
}

// mixPart is a shard's measurement of a mix of two requests, ingest and probe, with the given
// latencies (ms) each, the probe invalid for probeReason unless it is empty.
func mixPart(i, n int, probeReason string, ingest, probe []int64) Part {
	kinds := []Part{part(i, n, "", ingest...), part(i, n, probeReason, probe...)}
	whole := part(i, n, "", slices.Concat(ingest, probe)...)
	// Each kind's one error: the whole's two.
	whole.Result.Requests, whole.Result.Errors, whole.Result.Codes[500] = whole.Result.Requests+1, 2, 2
	whole.Result.RequestedRate = 50
	for k, name := range []string{"ingest", "probe"} {
		kinds[k].Result.Kind, kinds[k].Result.Latencies = name, kinds[k].Latencies
		kinds[k].Result.RequestedRate = []int{40, 10}[k]
		whole.Result.Kinds = append(whole.Result.Kinds, kinds[k].Result)
	}
	load.JudgeMix(&whole.Result)
	whole.Spec.TotalRate, whole.Spec.Load.Kinds = 80, []load.Kind{{Name: "ingest", Weight: 4}, {Name: "probe", Rate: 10}}
	return whole
}

// TestMergeMix: a mix's requests merge as its whole does, each request's counts and latencies
// the shards' added, and a request invalid on one shard is invalid in the merge, naming the
// shard, with the whole invalid for it as one generator's would be.
func TestMergeMix(t *testing.T) {
	lost := mixPart(1, 2, "", []int64{5}, []int64{6})
	lost.Result.Kinds[1].Successes = 2
	var out strings.Builder
	for _, tc := range []struct {
		name  string
		parts []Part
	}{
		{"two valid shards", []Part{mixPart(0, 2, "", []int64{1, 2, 3}, []int64{4}), mixPart(1, 2, "", []int64{5, 6}, []int64{7, 8})}},
		{"the second shard's probe failed", []Part{mixPart(0, 2, "", []int64{1}, []int64{2}), mixPart(1, 2, "success ratio 0.5000 below 0.99", []int64{3}, []int64{4})}},
		{"a shard's log lost a probe's latency", []Part{mixPart(0, 2, "", []int64{1}, []int64{2}), lost}},
	} {
		res, err := Merge(tc.parts)
		fmt.Fprintf(&out, "%s:", tc.name)
		if err != nil {
			fmt.Fprintf(&out, " error: %v\n", err)
			continue
		}
		for _, r := range append([]load.Result{res}, res.Kinds...) {
			fmt.Fprintf(&out, "\n  %s: requested %d, requests %d, successes %d, errors %d, codes %s, pooled %d, p50 %s, max %s, valid %v %q",
				cmp.Or(r.Kind, "whole"), r.RequestedRate, r.Requests, r.Successes, r.Errors, load.FormatCodes(r.Codes), r.Latencies.TotalCount(),
				r.Latency.P50.Round(time.Millisecond), r.Latency.Max.Round(time.Millisecond), r.Valid, r.InvalidReason)
		}
		var sum int64
		for _, k := range res.Kinds {
			sum += k.Requests
		}
		if sum != res.Requests {
			t.Errorf("%s: the requests' counts add up to %d, the whole's is %d", tc.name, sum, res.Requests)
		}
		out.WriteString("\n")
	}
	goldenFile(t, "merge-mix", out.String())
}

// inProcess starts shards as goroutines of the test (InProcess); one left running after its
// run fails the test, with where it is stuck.
func inProcess(t *testing.T) Starter {
	return func(ctx context.Context, i int) (Process, error) {
		p, err := InProcess(ctx, i)
		wait := p.Wait
		p.Wait = func() error {
			err := wait()
			if errors.Is(err, ErrLeftRunning) {
				t.Error(err)
			}
			return err
		}
		return p, err
	}
}

// TestRunMergesWhatTheServerServed loads a loopback server from two shards: every request the
// server answered is in the merged count, and every success in the pooled histogram.
func TestRunMergesWhatTheServerServed(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	measuring := 0
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Check: load.NewCheck("ok"),
		Model: load.Model{Rate: 200, ExpectedLatency: 10 * time.Millisecond}, Warmup: 200 * time.Millisecond,
		Duration: time.Second, Timeout: 2 * time.Second,
		Measuring: func() { measuring++; served.Store(0) },
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Runner{Count: 2, Start: inProcess(t), Dir: dir}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if measuring != 1 {
		t.Errorf("Measuring called %d times, want once", measuring)
	}
	if res.Requests != served.Load() || res.Requests == 0 {
		t.Errorf("merged %d requests, the server served %d in the measured phase", res.Requests, served.Load())
	}
	if res.Latencies.TotalCount() != res.Successes || res.RequestedRate != 200 {
		t.Errorf("pooled %d latencies of %d successes, requested %d rps", res.Latencies.TotalCount(), res.Successes, res.RequestedRate)
	}
	for i := 1; i <= 2; i++ {
		p, err := readPart(Spec{}, load.Result{}, filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i)))
		if err != nil || p.Latencies.TotalCount() == 0 {
			t.Errorf("shard %d's interval log: %v, %v", i, p.Latencies, err)
		}
	}
}

// TestRunMergesAMix loads a loopback server with a mix from two shards: each request's merged
// count is what the server served of it, the weighted shares keep their weights, and each
// shard's interval log holds each request's histogram.
func TestRunMergesAMix(t *testing.T) {
	var mu sync.Mutex
	served := map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[r.URL.Path]++
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	kinds := mixKinds(20)
	for i := range kinds {
		kinds[i].Request.URL = srv.URL + kinds[i].Request.URL[len("http://127.0.0.1:1"):]
		kinds[i].Check = load.NewCheck("ok")
	}
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Kinds: kinds,
		Model: load.Model{Rate: 200, ExpectedLatency: 10 * time.Millisecond}, Warmup: 200 * time.Millisecond,
		Duration: time.Second, Timeout: 2 * time.Second,
		Measuring: func() { mu.Lock(); clear(served); mu.Unlock() },
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Runner{Count: 2, Start: inProcess(t), Dir: dir}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kinds) != len(kinds) {
		t.Fatalf("merged %d requests' results, want %d", len(res.Kinds), len(kinds))
	}
	mu.Lock()
	defer mu.Unlock()
	var sum int64
	for k, r := range res.Kinds {
		path := kinds[k].Request.URL[len(srv.URL):]
		if r.Kind != kinds[k].Name || r.Requests != served[path] || r.Requests == 0 || r.Latencies.TotalCount() != r.Successes {
			t.Errorf("request %s (merged as %q): %d requests (%d latencies of %d successes), the server served %d", kinds[k].Name, r.Kind, r.Requests, r.Latencies.TotalCount(), r.Successes, served[path])
		}
		// Its seconds, pooled from the shards', add up to it.
		var successes int64
		for _, sec := range r.Timeline {
			successes += sec.Successes
		}
		if successes != r.Successes {
			t.Errorf("request %s: its merged seconds hold %d successes, it %d", r.Kind, successes, r.Successes)
		}
		sum += r.Requests
	}
	if sum != res.Requests {
		t.Errorf("the requests' counts add up to %d, the whole's is %d", sum, res.Requests)
	}
	// 80/20 of each shard's 100, within a turn of the weights (5 requests) each.
	if ingest, page := res.Kinds[0].Requests, res.Kinds[1].Requests; ingest < 4*page-2*5 || ingest > 4*page+2*5 {
		t.Errorf("ingest %d, page %d: not 80/20 within a turn per shard", ingest, page)
	}
	if want := []int{160, 40, 20}; res.Kinds[0].RequestedRate != want[0] || res.Kinds[1].RequestedRate != want[1] || res.Kinds[2].RequestedRate != want[2] {
		t.Errorf("requested %d, %d, %d rps; want %v", res.Kinds[0].RequestedRate, res.Kinds[1].RequestedRate, res.Kinds[2].RequestedRate, want)
	}
	for i := 1; i <= 2; i++ {
		m := load.Result{Kinds: []load.Result{{Kind: "ingest"}, {Kind: "page"}, {Kind: "probe"}}}
		if _, err := readPart(Spec{}, m, filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i))); err != nil {
			t.Errorf("shard %d's interval log: %v", i, err)
		}
	}
}

// TestRunNamesTheShardThatFailed: a shard that cannot measure fails the run, named.
func TestRunNamesTheShardThatFailed(t *testing.T) {
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: "http://127.0.0.1:1/"},
		Model:   load.Model{Rate: 100, ExpectedLatency: 10 * time.Millisecond}, Duration: time.Second, Timeout: time.Second,
	}
	broken := func(ctx context.Context, i int) (Process, error) {
		if i == 0 {
			return inProcess(t)(ctx, i)
		}
		inR, inW := io.Pipe()
		go io.Copy(io.Discard, inR)
		return Process{In: inW, Out: strings.NewReader(`{"Error":"pinning the load generator to CPUs [7]: invalid argument"}` + "\n"), Wait: func() error { return nil }}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Runner{Count: 2, Start: broken, Dir: t.TempDir()}.Run(ctx, cfg)
	goldenFile(t, "failed-shard", fmt.Sprintln(err))
}

// TestRunFileAndMergeDir: shards given their start up front, as an indexed Job's are, leave
// results in a shared folder whose merge counts what the server served.
func TestRunFileAndMergeDir(t *testing.T) {
	var served atomic.Int64
	measuring := atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if measuring.Load() {
			served.Add(1)
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Check: load.NewCheck("ok"),
		Model: load.Model{Rate: 200, ExpectedLatency: 10 * time.Millisecond}, Warmup: 100 * time.Millisecond,
		Duration: time.Second, Timeout: 2 * time.Second,
	}
	specs, err := Split(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Now().Add(time.Second)
	time.AfterFunc(time.Until(start), func() { measuring.Store(true) })
	errs := make(chan error, len(specs))
	for _, s := range specs {
		go func() { errs <- RunFile(context.Background(), s, start, dir) }()
	}
	for range specs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	res, err := MergeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Requests still in flight when the phase ends are the phase's, answered after it: compare
	// with what the server saw from the start on.
	if res.Requests != served.Load() || res.Requests == 0 || res.Latencies.TotalCount() != res.Successes {
		t.Errorf("merged %d requests (%d latencies of %d successes), the server served %d from the start", res.Requests, res.Latencies.TotalCount(), res.Successes, served.Load())
	}
	os.Remove(filepath.Join(dir, "shard-2.json"))
	_, err = MergeDir(dir)
	goldenFile(t, "merge-dir-missing", strings.ReplaceAll(fmt.Sprintln(err), dir, "DIR"))
}

func TestEstimateOffset(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	// sample: asked at t0+sent, answered at t0+received (this clock), the shard's clock at t0+remote.
	sample := func(sent, received, remote float64) ClockSample {
		return ClockSample{Sent: t0.Add(ms(sent)), Received: t0.Add(ms(received)), Remote: t0.Add(ms(remote))}
	}
	for _, tc := range []struct {
		name      string
		samples   []ClockSample
		offset    time.Duration
		roundTrip time.Duration
		err       string
	}{
		{"same clock, symmetric", []ClockSample{sample(0, 2, 1)}, 0, ms(2), ""},
		{"shard 3 s ahead", []ClockSample{sample(0, 4, 3002)}, 3 * time.Second, ms(4), ""},
		{"shard 250 ms behind", []ClockSample{sample(10, 12, -239)}, ms(-250), ms(2), ""},
		{"the shortest round trip is kept", []ClockSample{sample(0, 40, 35), sample(50, 51, 50.5), sample(60, 90, 61)}, 0, ms(1), ""},
		{"a slow answer skews only its own sample", []ClockSample{sample(0, 100, 90), sample(200, 202, 1201)}, time.Second, ms(2), ""},
		{"a clock that went back is skipped", []ClockSample{sample(10, 5, 0), sample(20, 24, 122)}, ms(100), ms(4), ""},
		{"every sample went back", []ClockSample{sample(10, 5, 0), sample(30, 20, 0)}, 0, 0, "no usable clock sample of 2: the clock here went back during each"},
		{"none", nil, 0, 0, "no usable clock sample of 0: the clock here went back during each"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EstimateOffset(tc.samples)
			if fmt.Sprint(err) != tc.err && (err != nil || tc.err != "") {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if err == nil && (got.Offset != tc.offset || got.RoundTrip != tc.roundTrip) {
				t.Errorf("offset %s, round trip %s; want %s, %s", got.Offset, got.RoundTrip, tc.offset, tc.roundTrip)
			}
		})
	}
}

// fakeClock is a clock that moves 1 ms each time this machine reads it; a fake shard reads it
// without moving it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *fakeClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// fakeShard speaks the protocol as a shard whose clock is skew ahead of c, read halfway through
// each of the parent's questions. It answers with a canned result of 3 latencies, its interval
// log sent back when the spec asks, and reports the spec and start time it got.
func fakeShard(c *fakeClock, skew time.Duration, host string, contained bool, got chan<- message, cpus ...int) Starter {
	return func(ctx context.Context, i int) (Process, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			defer outW.Close()
			dec, enc := json.NewDecoder(inR), json.NewEncoder(outW)
			var spec message
			if err := dec.Decode(&spec); err != nil {
				done <- err
				return
			}
			enc.Encode(message{Warm: true})
			for {
				var m message
				if err := dec.Decode(&m); err != nil {
					done <- err
					return
				}
				if m.Ping {
					enc.Encode(message{Clock: c.peek().Add(skew + time.Millisecond/2).UnixNano()})
					continue
				}
				got <- message{Spec: spec.Spec, Start: m.Start}
				break
			}
			p := part(spec.Spec.Index, spec.Spec.Count, "", 1, 2, 3)
			p.Result.Latencies = p.Latencies
			var hlog bytes.Buffer
			if err := writeHlog(&hlog, *spec.Spec, c.peek(), p.Result); err != nil {
				done <- err
				return
			}
			p.Result.Latencies = nil
			out := message{Result: &p.Result, CPU: time.Second, CPUs: cpus}
			if spec.Spec.SendHlog {
				out.Hlog = hlog.Bytes()
			} else {
				os.WriteFile(spec.Spec.Hlog, hlog.Bytes(), 0o644)
			}
			done <- enc.Encode(out)
		}()
		return Process{In: inW, Out: outR, Wait: func() error { return <-done }, Host: host, Contained: contained}, nil
	}
}

// TestRunCorrectsTheStartByEachClock: shards on other hosts get the common start moved by their
// clocks' offsets, measured; a shard here gets it as it is; a contained shard is not pinned by
// the parent and sends its interval log back, kept where a local shard's would be.
func TestRunCorrectsTheStartByEachClock(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)}
	got := make(chan message, 3)
	shards := []Starter{
		fakeShard(clock, 7*time.Second, "", false, got), // this machine: its clock is not asked
		fakeShard(clock, 3*time.Second, "10.77.1.2", true, got),
		fakeShard(clock, -250*time.Millisecond, "10.77.2.2", true, got),
	}
	start := func(ctx context.Context, i int) (Process, error) { return shards[i](ctx, i) }
	cfg := load.Config{Request: load.Request{Method: "GET", URL: "http://127.0.0.1:1/"}, Model: load.Model{Rate: 300, ExpectedLatency: time.Millisecond}, Duration: time.Second}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Runner{Count: 3, CPUs: []int{4, 5, 6}, Start: start, Dir: dir, Now: clock.Now}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[int]time.Time{}
	for range 3 {
		m := <-got
		starts[m.Spec.Index] = time.Unix(0, m.Start)
		contained := m.Spec.Index > 0
		if m.Spec.SendHlog != contained || (len(m.Spec.CPUs) == 0) != contained {
			t.Errorf("shard %d (contained %v): SendHlog %v, CPUs %v", m.Spec.Index+1, contained, m.Spec.SendHlog, m.Spec.CPUs)
		}
	}
	if d := starts[1].Sub(starts[0]); d != 3*time.Second {
		t.Errorf("the shard 3 s ahead starts %s after the local one, want 3s", d)
	}
	if d := starts[2].Sub(starts[0]); d != -250*time.Millisecond {
		t.Errorf("the shard 250 ms behind starts %s after the local one, want -250ms", d)
	}
	if !res.ClockMeasured || res.ClockOffset != 3*time.Second || res.Generators != 3 {
		t.Errorf("clock offset %s (measured %v), generators %d; want 3s, true, 3", res.ClockOffset, res.ClockMeasured, res.Generators)
	}
	if res.Successes != 9 || res.Latencies.TotalCount() != 9 {
		t.Errorf("merged %d successes, %d latencies; want 9", res.Successes, res.Latencies.TotalCount())
	}
	for i := 1; i <= 3; i++ {
		if _, err := readPart(Spec{}, load.Result{}, filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i))); err != nil {
			t.Errorf("shard %d's interval log: %v", i, err)
		}
	}
}

// TestRunCountsTheCPUsOfOtherHosts: the generator's CPUs on other hosts are each host's CPUs
// once, however many of its shards share them, with the CPU time of the shards there; a shard on
// this machine adds neither (its CPUs are the generator's own here).
func TestRunCountsTheCPUsOfOtherHosts(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)}
	got := make(chan message, 4)
	shards := []Starter{
		fakeShard(clock, 0, "", false, got, 0, 1),
		fakeShard(clock, 0, "10.77.1.2", true, got, 0, 1, 2, 3),
		fakeShard(clock, 0, "10.77.1.2", true, got, 0, 1, 2, 3), // sharing its host's CPUs
		fakeShard(clock, 0, "10.77.2.2", true, got, 5),
	}
	start := func(ctx context.Context, i int) (Process, error) { return shards[i](ctx, i) }
	cfg := load.Config{Request: load.Request{Method: "GET", URL: "http://127.0.0.1:1/"}, Model: load.Model{Rate: 400, ExpectedLatency: time.Millisecond}, Duration: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Runner{Count: 4, CPUs: []int{0, 1}, Start: start, Dir: t.TempDir(), Now: clock.Now}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.RemoteGeneratorCPUs != 5 || res.RemoteGeneratorCPU != 3*time.Second {
		t.Errorf("other hosts' CPUs %d, their CPU time %s; want 5 (4 + 1) and 3s", res.RemoteGeneratorCPUs, res.RemoteGeneratorCPU)
	}
	// Every shard's time is the generator's, this machine's shard too: carried in the result,
	// not added to process state that a later cell would read.
	if res.ShardCPU != 4*time.Second {
		t.Errorf("the shards' CPU time %s, want 4s (1s each)", res.ShardCPU)
	}
}

// TestServeAnswersItsClockAndSendsItsLog loads a loopback server from two shards that run as a
// contained shard on another host would: the real Serve answers the clock questions (the same
// clock: no offset beyond the exchange's own error) and sends its interval log back.
func TestServeAnswersItsClockAndSendsItsLog(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Check: load.NewCheck("ok"),
		Model: load.Model{Rate: 200, ExpectedLatency: 10 * time.Millisecond}, Warmup: 100 * time.Millisecond,
		Duration: time.Second, Timeout: 2 * time.Second, Measuring: func() { served.Store(0) },
	}
	remote := func(ctx context.Context, i int) (Process, error) {
		p, err := inProcess(t)(ctx, i)
		p.Host, p.Contained = "10.77.1.2", true
		return p, err
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Runner{Count: 2, Start: remote, Dir: dir}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != served.Load() || res.Requests == 0 || res.Latencies.TotalCount() != res.Successes {
		t.Errorf("merged %d requests (%d latencies of %d successes), the server served %d", res.Requests, res.Latencies.TotalCount(), res.Successes, served.Load())
	}
	// One clock: the estimate's error is at most half a pipe's round trip.
	if !res.ClockMeasured || res.ClockOffset > time.Second {
		t.Errorf("clock offset %s (measured %v) between a process and itself", res.ClockOffset, res.ClockMeasured)
	}
	// Both shards on "one other host", this process: its CPUs, once.
	if allowed, err := hostinfo.AllowedCPUs(); err != nil || res.RemoteGeneratorCPUs != len(allowed) {
		t.Errorf("other hosts' CPUs %d, want this process's %v (%v)", res.RemoteGeneratorCPUs, allowed, err)
	}
	for i := 1; i <= 2; i++ {
		if p, err := readPart(Spec{}, load.Result{}, filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i))); err != nil || p.Latencies.TotalCount() == 0 {
			t.Errorf("shard %d's interval log, sent back: %v", i, err)
		}
	}
}

// warmShard starts an in-process shard on a loopback server and waits until it is warm: its
// start is what the caller sends next.
func warmShard(t *testing.T, ctx context.Context) (Process, *json.Encoder, *json.Decoder) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	specs, err := Split(load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Model: load.Model{Rate: 100, ExpectedLatency: 10 * time.Millisecond},
		Warmup: 100 * time.Millisecond, Duration: time.Second, Timeout: time.Second,
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	specs[0].SendHlog = true
	p, err := inProcess(t)(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(p.In)
	if err := enc.Encode(message{Spec: &specs[0]}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(p.Out)
	var m message
	if err := dec.Decode(&m); err != nil || !m.Warm {
		t.Fatalf("the shard answered %+v, %v; want warm", m, err)
	}
	return p, enc, dec
}

// TestAShardRefusesAStartTooFarAhead: a start an hour ahead (a clock stepped since it was
// measured) is an error, not an hour's wait.
func TestAShardRefusesAStartTooFarAhead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, enc, dec := warmShard(t, ctx)
	if err := enc.Encode(message{Start: time.Now().Add(time.Hour).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	var m message
	if err := dec.Decode(&m); err != nil || !strings.Contains(m.Error, "ahead, more than the 10s a start may be") {
		t.Errorf("a start an hour ahead: the shard answered %+v, %v", m, err)
	}
	p.In.Close()
	if err := p.Wait(); err == nil {
		t.Error("the shard that refused its start ended without an error")
	}
}

// TestACancelledShardStopsWaitingForItsStart: a shard waiting for a start 8 s ahead ends when its
// run is cancelled, well before then (4 s: room for a slow host).
func TestACancelledShardStopsWaitingForItsStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, enc, dec := warmShard(t, ctx)
	if err := enc.Encode(message{Start: time.Now().Add(8 * time.Second).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	go dec.Decode(new(message))
	time.Sleep(100 * time.Millisecond) // the start heard
	cancel()
	began := time.Now()
	err := p.Wait()
	if waited := time.Since(began); waited > 4*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled shard ended after %v with %v; want context.Canceled at once", waited, err)
	}
}
