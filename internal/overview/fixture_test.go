package overview

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
)

var fixture = flag.Bool("fixture", false, "measure the fixture run anew (testdata/run) against in-process servers")

// fixtureCSV is a run measured by TestMakeFixture: two in-process targets, three trials each.
var fixtureCSV = filepath.Join("testdata", "run", "20260102T030405Z.csv")

// pauser answers after a short service time, and every period holds what arrives for pause: a
// target with a stop-the-world collector.
type pauser struct {
	service, period, pause time.Duration
	once                   sync.Once
	first                  time.Time
}

func (p *pauser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	p.once.Do(func() { p.first = now })
	_, _ = io.Copy(io.Discard, r.Body)
	wait := p.service
	if p.period > 0 {
		if into := now.Sub(p.first) % p.period; into < p.pause {
			wait += p.pause - into
		}
	}
	time.Sleep(wait)
	_, _ = io.WriteString(w, `{"id":1}`)
}

// TestMakeFixture measures the fixture run when asked (-fixture): its files are committed, so
// that the report's tests read a real run without measuring one.
func TestMakeFixture(t *testing.T) {
	if !*fixture {
		t.Skip("measures only with -fixture")
	}
	dir := filepath.Dir(fixtureCSV)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(fixtureCSV)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tw, err := timeline.Create(timeline.Path(fixtureCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	targets := []struct {
		name string
		h    func() http.Handler
	}{
		{"steady", func() http.Handler { return &pauser{service: 2 * time.Millisecond} }},
		{"pausing", func() http.Handler {
			return &pauser{service: time.Millisecond, period: 3 * time.Second, pause: 400 * time.Millisecond}
		}},
	}
	for trial := 1; trial <= 3; trial++ {
		for _, tg := range targets {
			srv := httptest.NewServer(tg.h())
			cfg := load.Config{
				Request: load.Request{Method: http.MethodGet, URL: srv.URL}, Check: load.NewCheck(`"id"`),
				Model:  load.Model{Rate: 300, ExpectedLatency: 500 * time.Millisecond},
				Warmup: 2 * time.Second, Duration: 6 * time.Second, Timeout: 5 * time.Second,
			}
			began := time.Now()
			res, err := load.Run(context.Background(), cfg)
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			row := results.Row{
				Scenario: "fixture", Target: tg.name, Trial: trial, Mode: string(res.Mode), RequestedRPS: 300,
				Connections: res.InFlightLimit, PeakInFlight: res.PeakInFlight, AchievedRPS: res.AchievedRate(),
				ThroughputRPS: res.Throughput(), Requests: res.Requests, Successes: res.Successes, Errors: res.Errors,
				Timeouts: res.Timeouts, SuccessRatio: res.SuccessRatio(), StatusCodes: load.FormatCodes(res.Codes),
				LatencyMean: res.Latency.Mean, LatencyP50: res.Latency.P50, LatencyP90: res.Latency.P90, LatencyP99: res.Latency.P99,
				LatencyP999: res.Latency.P999, LatencyMax: res.Latency.Max, SendLagP99: res.SendLag.P99, SendLagMax: res.SendLag.Max,
				GeneratorDelayP99: res.OwnDelay.P99, Duration: cfg.Duration, Warmup: cfg.Warmup, Valid: res.Valid, InvalidReason: res.InvalidReason,
				StartedAt: began.Add(cfg.Warmup), Version: "fixture", HostCPU: "in-process", Kernel: "—", Seed: 1,
			}
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
			cell := timeline.Cell{Key: summary.KeyOf(row), Warmup: res.WarmupTimeline, Measure: res.Timeline}
			if err := tw.Write(cell); err != nil {
				t.Fatal(err)
			}
			if err := timeline.WriteHistograms(timeline.HistogramBase(fixtureCSV, cell.Key), cell, row.StartedAt, cfg.Warmup, res.Latencies); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("%s trial %d: %.0f rps, p99 %v, valid %v %s\n", tg.name, trial, row.ThroughputRPS, row.LatencyP99, row.Valid, row.InvalidReason)
		}
	}
}
