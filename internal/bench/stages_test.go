package bench

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// A cell of stages gets a row for each stage, named after it, with the stage's own figures and
// settings; a stage of an invalid cell is invalid too. A cell without stages gets none.
func TestStageRows(t *testing.T) {
	stages, err := load.ParseStages("1s:100,1s:100-300")
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Cell{Scenario: "s", Target: "t", Trial: 1, Load: load.Config{Model: load.Model{Rate: 150, Stages: stages}}}
	h := hdrhistogram.New(1, 60_000_000, 3)
	h.RecordValue(2000)
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	res := load.Result{Mode: load.Open, InFlightLimit: 50, Timeline: []timeline.Second{
		{Index: 0, Successes: 1, OwnDelayP99: time.Microsecond, Histogram: enc},
		{Index: 1, Successes: 1, OwnDelayP99: time.Microsecond, Histogram: enc},
	}}
	row := results.Row{Scenario: "s", Target: "t", Trial: 1, Stages: "1s:100,1s:100-300", RequestedRPS: 150, Connections: 50, Valid: false, InvalidReason: "target exited with code 1"}
	res.Latencies = h
	cutStages(&res, c.Load)
	got := stageRows(row, c, res)
	if len(got) != 2 {
		t.Fatalf("%d stage rows, want 2", len(got))
	}
	for k, want := range []struct {
		scenario, stages string
		rate             int
	}{{"s.stage-1", "1s:100", 100}, {"s.stage-2", "1s:100-300", 200}} {
		r := got[k]
		if r.Scenario != want.scenario || r.Stage != k+1 || r.Stages != want.stages || r.RequestedRPS != want.rate || r.Duration != time.Second || r.Successes != 1 {
			t.Errorf("stage %d: %s stage %d stages %s at %d rps over %v, %d successes; want %s, %s at %d over 1s, 1",
				k+1, r.Scenario, r.Stage, r.Stages, r.RequestedRPS, r.Duration, r.Successes, want.scenario, want.stages, want.rate)
		}
		if r.Valid || r.InvalidReason == "" {
			t.Errorf("stage %d of an invalid cell: valid %v (%q)", k+1, r.Valid, r.InvalidReason)
		}
	}
	// Each stage's seconds and histogram are kept under its row's key, as the report reads them.
	details := map[timeline.Key]Detail{}
	r := &Runner{Detail: func(_ results.Row, d Detail) error { details[d.Cell.Key] = d; return nil }}
	r.detail(&row, res, nil)
	for k, sr := range got {
		d, ok := details[detailKey(sr)]
		if !ok || len(d.Cell.Measure) != 1 || d.Cell.Measure[0].Index != k || d.Latencies == nil || d.Latencies.TotalCount() != 1 {
			t.Errorf("stage %d: detail %v kept under its row's key %v; want its one second and its one latency", k+1, ok, detailKey(sr))
		}
	}
	if len(details) != 3 {
		t.Errorf("%d details kept, want the cell's and its 2 stages'", len(details))
	}
	c.Load.Model.Stages = nil
	if rows := stageRows(row, c, res); rows != nil {
		t.Errorf("a cell without stages got %d stage rows", len(rows))
	}
}
