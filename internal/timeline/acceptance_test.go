package timeline_test

import (
	"context"
	"encoding/csv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// TestHgrmP99IsTheCSVs: a cell measured against an in-process server with varied service
// times; its row in the results CSV and its .hgrm come from one histogram, so the .hgrm's 99th
// percentile is the CSV's latency_p99_ms to the digit, the interval log merges back to the same
// histogram, and the timeline's measured seconds add up to the row's successes.
func TestHgrmP99IsTheCSVs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	t.Cleanup(srv.Close)
	cfg := load.Config{
		Request:  load.Request{Method: http.MethodGet, URL: srv.URL},
		Check:    load.NewCheck(`"id"`),
		Model:    load.Model{Rate: 300, ExpectedLatency: 5 * time.Millisecond},
		Warmup:   time.Second,
		Duration: 3 * time.Second,
		Timeout:  5 * time.Second,
	}
	began := time.Now()
	res, err := load.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	csvPath := filepath.Join(dir, "20260102T030405Z.csv")
	w, err := results.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	row := results.Row{Scenario: "s", Target: "in-process", Trial: 1, RequestedRPS: 300, Successes: res.Successes,
		LatencyP50: res.Latency.P50, LatencyP99: res.Latency.P99, LatencyMax: res.Latency.Max, StartedAt: began.Add(cfg.Warmup)}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Close()
	cell := timeline.Cell{Key: timeline.Key{Scenario: row.Scenario, Target: row.Target, Trial: row.Trial, RequestedRPS: row.RequestedRPS},
		Warmup: res.WarmupTimeline, Measure: res.Timeline}
	base := timeline.HistogramBase(csvPath, cell.Key)
	if err := timeline.WriteHistograms(base, cell, row.StartedAt, cfg.Warmup, res.Latencies); err != nil {
		t.Fatal(err)
	}
	tw, err := timeline.Create(timeline.Path(csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Write(cell); err != nil {
		t.Fatal(err)
	}
	tw.Close()

	csvP99, csvSuccesses := csvColumns(t, csvPath)
	f, err := os.Open(base + ".hgrm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := hdrlog.ReadPercentiles(f)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r hdrlog.Row) bool { return r.Percentile == 0.99 })
	if i < 0 {
		t.Fatalf("no 0.99 row in %s.hgrm", base)
	}
	if got := strconv.FormatFloat(rows[i].Value, 'f', 3, 64); got != csvP99 {
		t.Errorf(".hgrm 99th percentile %s ms, CSV latency_p99_ms %s", got, csvP99)
	}

	h, err := timeline.ReadHistogram(base)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(res.Latencies) {
		t.Errorf("the interval log's measured intervals merge to %d values (p99 %d µs), the phase had %d (p99 %d µs)",
			h.TotalCount(), h.ValueAtQuantile(99), res.Latencies.TotalCount(), res.Latencies.ValueAtQuantile(99))
	}

	cells, err := timeline.ReadFile(timeline.Path(csvPath))
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range cells[0].Measure {
		sum += s.Successes
	}
	if strconv.FormatInt(sum, 10) != csvSuccesses || len(cells[0].Warmup) == 0 {
		t.Errorf("timeline: measured seconds add up to %d successes (%d warm-up seconds); the CSV's successes %s", sum, len(cells[0].Warmup), csvSuccesses)
	}
}

// csvColumns reads latency_p99_ms and successes of the file's one row as written.
func csvColumns(t *testing.T, path string) (p99, successes string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%s: %v, %d lines", path, err, len(recs))
	}
	p99i, si := slices.Index(recs[0], "latency_p99_ms"), slices.Index(recs[0], "successes")
	return recs[1][p99i], recs[1][si]
}
