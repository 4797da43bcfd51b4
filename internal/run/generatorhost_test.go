package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
)

// TestLayoutShards deals shards out to generator hosts and pins them there
// (testdata/generator-layout.golden).
func TestLayoutShards(t *testing.T) {
	here := genHost{Engine: container.LocalEngine, CPUs: []int{0, 1, 2}}
	two := genHost{Engine: "tcp://10.0.0.3:2375", Remote: "10.0.0.3", CPUs: []int{0, 1}}
	four := genHost{Engine: "tcp://10.0.0.4:2375", Remote: "10.0.0.4", CPUs: []int{0, 1, 2, 3}}
	unpinned := genHost{Engine: container.LocalEngine} // a --url run pins nothing
	var out strings.Builder
	for _, tc := range []struct {
		name  string
		n     int
		hosts []genHost
	}{
		{"one shard a host", 2, []genHost{two, four}},
		{"four shards over two hosts", 4, []genHost{two, four}},
		{"five shards over two hosts of two and four CPUs", 5, []genHost{two, four}},
		{"three shards on this machine's three generator CPUs", 3, []genHost{here}},
		{"four shards on three CPUs share them", 4, []genHost{here}},
		{"unpinned", 2, []genHost{unpinned}},
		{"fewer shards than hosts", 1, []genHost{two, four}},
		{"no host", 2, nil},
	} {
		places, err := layoutShards(tc.n, tc.hosts)
		fmt.Fprintf(&out, "%s:", tc.name)
		if err != nil {
			fmt.Fprintf(&out, " error: %v\n", err)
			continue
		}
		for i, p := range places {
			fmt.Fprintf(&out, " [shard %d: %s cpuset %q]", i+1, tc.hosts[p.Host].Engine, p.CPUSet)
		}
		out.WriteString("\n")
	}
	golden.Check(t, "testdata/generator-layout.golden", []byte(out.String()))
}

// TestCheckGeneratorHost: the traffic rule, as a generator host is accepted or refused.
func TestCheckGeneratorHost(t *testing.T) {
	var out strings.Builder
	for _, tc := range []struct{ name, remote, target string }{
		{"this machine, targets here", "", ""},
		{"this machine, targets on another host", "", "10.0.0.2"},
		{"another host, targets on a third", "10.0.0.3", "10.0.0.2"},
		{"another host, targets here", "10.0.0.3", ""},
		{"the targets' own host", "10.0.0.2", "10.0.0.2"},
	} {
		fmt.Fprintf(&out, "%s: %v\n", tc.name, checkGeneratorHost(tc.remote, tc.target))
	}
	golden.Check(t, "testdata/generator-host-check.golden", []byte(out.String()))
}

// fakeShardEngine runs each shard "container" in this process (shard.InProcess), over pipes, as
// an engine's attach stream would carry it, and records the specs it was asked for; a shard left
// running after its run fails the test.
type fakeShardEngine struct {
	t     *testing.T
	mu    sync.Mutex
	specs []container.ShardSpec
}

func (e *fakeShardEngine) StartShard(ctx context.Context, s container.ShardSpec) (container.Attached, error) {
	e.mu.Lock()
	e.specs = append(e.specs, s)
	e.mu.Unlock()
	p, err := shard.InProcess(ctx, s.Index)
	wait := func() error {
		err := p.Wait()
		if errors.Is(err, shard.ErrLeftRunning) {
			e.t.Error(err)
		}
		return err
	}
	return container.Attached{In: p.In, Out: p.Out, Wait: wait}, err
}

// TestShardsOnGeneratorHostsMergeWhatTheServerServed runs a cell's shards through the starter
// of generator hosts, on two fake engines (one "another host"): each gets its shards with their
// image and cpuset, their interval logs come back through the stream, the merge counts what
// the server served, and the other host's clock was measured.
func TestShardsOnGeneratorHostsMergeWhatTheServerServed(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	hosts := []genHost{{Engine: container.LocalEngine, CPUs: []int{1}}, {Engine: "tcp://10.0.0.3:2375", Remote: "10.0.0.3", CPUs: []int{0, 1}}}
	places, err := layoutShards(3, hosts)
	if err != nil {
		t.Fatal(err)
	}
	here, there := &fakeShardEngine{t: t}, &fakeShardEngine{t: t}
	start := shardStarter(places, []shardEngine{here, there}, []string{"iotbench/shard:aaaa", "iotbench/shard:bbbb"}, []string{"", "10.0.0.3"})
	cfg := load.Config{
		Request: load.Request{Method: "GET", URL: srv.URL}, Check: load.NewCheck("ok"),
		Model: load.Model{Rate: 150, ExpectedLatency: 10 * time.Millisecond}, Warmup: 100 * time.Millisecond,
		Duration: time.Second, Timeout: 2 * time.Second, Measuring: func() { served.Store(0) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := shard.Runner{Count: 3, Start: start}.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != served.Load() || res.Requests == 0 || res.Latencies.TotalCount() != res.Successes || res.Generators != 3 {
		t.Errorf("merged %d requests of %d shards (%d latencies of %d successes), the server served %d", res.Requests, res.Generators, res.Latencies.TotalCount(), res.Successes, served.Load())
	}
	if !res.ClockMeasured {
		t.Error("the other host's clock was not measured")
	}
	got := fmt.Sprintf("here %+v; there %+v", here.specs, there.specs)
	want := "here [{Image:iotbench/shard:aaaa Index:0 CPUSet:1 Memory:1073741824} {Image:iotbench/shard:aaaa Index:2 CPUSet:1 Memory:1073741824}]; " +
		"there [{Image:iotbench/shard:bbbb Index:1 CPUSet:0 Memory:1073741824}]"
	if got != want {
		t.Errorf("shards started:\n got %s\nwant %s", got, want)
	}
}

func TestDownstreamIsRefusedOnARemoteEngine(t *testing.T) {
	p := &plan.Plan{Cells: []plan.Cell{{Scenario: "io-heavy"}, {Scenario: "enterprise", Load: load.Config{Check: load.Check{CallsDownstream: true}}}}}
	err := downstreamReachable(p, "10.77.1.2")
	if err == nil || !strings.Contains(err.Error(), "scenario enterprise calls the downstream service") || !strings.Contains(err.Error(), "10.77.1.2") {
		t.Errorf("err = %v, want enterprise refused on 10.77.1.2", err)
	}
	if err := downstreamReachable(&plan.Plan{Cells: p.Cells[:1]}, "10.77.1.2"); err != nil {
		t.Errorf("a scenario without downstream calls: %v", err)
	}
}
