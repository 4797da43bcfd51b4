package shard

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
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
	} {
		specs, err := Split(tc.cfg, tc.count)
		fmt.Fprintf(&out, "%s:", tc.name)
		if err != nil {
			fmt.Fprintf(&out, " error: %v\n", err)
			continue
		}
		for _, s := range specs {
			fmt.Fprintf(&out, " [%s: rate %d, connections %d, offset %s]", s.Name(), s.Rate, s.Connections, s.Offset())
		}
		out.WriteString("\n")
	}
	golden(t, "split", out.String())
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
	golden(t, "merge", out.String())
}

// inProcess starts shards as goroutines of the test, over pipes, as the binary's would run.
func inProcess(ctx context.Context, _ int) (Process, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(ctx, inR, outW)
		outW.Close()
		inR.Close()
		done <- err
	}()
	return Process{In: inW, Out: outR, Wait: func() error { return <-done }}, nil
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
	res, err := Runner{Count: 2, Start: inProcess, Dir: dir}.Run(ctx, cfg)
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
		h, err := readHlog(filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i)))
		if err != nil || h.TotalCount() == 0 {
			t.Errorf("shard %d's interval log: %v, %v", i, h, err)
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
			return inProcess(ctx, i)
		}
		inR, inW := io.Pipe()
		go io.Copy(io.Discard, inR)
		return Process{In: inW, Out: strings.NewReader(`{"Error":"pinning the load generator to CPUs [7]: invalid argument"}` + "\n"), Wait: func() error { return nil }}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Runner{Count: 2, Start: broken, Dir: t.TempDir()}.Run(ctx, cfg)
	golden(t, "failed-shard", fmt.Sprintln(err))
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
	golden(t, "merge-dir-missing", strings.ReplaceAll(fmt.Sprintln(err), dir, "DIR"))
}
