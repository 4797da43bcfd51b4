package plan

import (
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/scenario"
)

// A mix plans every cell with its requests (each URL its path, until a run aims it), the cell's
// check saying whether any request stores rows; a closed loop from the command line is refused
// beside a stream of its own.
func TestMixIsPlanned(t *testing.T) {
	doc := `
targets:
  t: {build: ../scenario/testdata/ctx/t, port: 9001}
scenarios:
  m:
    requests:
      - {name: ingest, method: post, path: /ingest, weight: 80, check: {stores_rows: true}}
      - {name: page, path: /page, weight: 20, check: {contains: ["<table"]}}
      - {name: probe, path: /health, rate: 50}
    load: {rate: 100}
    targets: [t]
`
	f, err := scenario.Parse("mix.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(f, "m", Overrides{Load: given(t, "rate", "200")}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Cells[0].Load
	if got := load.FormatKinds(c.Kinds); got != "ingest:80,page:20,probe@50" || c.Model.Rate != 200 {
		t.Fatalf("kinds %s at %d rps, want ingest:80,page:20,probe@50 at 200", got, c.Model.Rate)
	}
	if c.Kinds[0].Request.Method != "POST" || c.Kinds[0].Request.URL != "/ingest" || c.Kinds[1].Check.Contains[0] != "<table" {
		t.Errorf("ingest %s %s, page check %v", c.Kinds[0].Request.Method, c.Kinds[0].Request.URL, c.Kinds[1].Check.Contains)
	}
	if !c.Check.StoresRows || c.Check.CallsDownstream || len(c.Check.Contains) > 0 {
		t.Errorf("the cell's check %+v: want it to store rows (ingest does), nothing else", c.Check)
	}
	if c.InFlightLimit() <= c.Model.InFlightLimit() {
		t.Errorf("in-flight limit %d, the load's alone %d: want room for the probe", c.InFlightLimit(), c.Model.InFlightLimit())
	}
	if _, err := Make(f, "m", Overrides{Load: given(t, "connections", "10")}, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "beside an open loop") {
		t.Errorf("a closed loop beside a stream of its own: %v", err)
	}
}
