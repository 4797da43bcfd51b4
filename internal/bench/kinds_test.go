package bench

import (
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
)

// A mix gets a row for each request, named after it, with its own figures; a request's row is
// invalid with its cell, unless the cell is invalid only for another request. The stored-row
// check counts the requests that store rows only.
func TestKindRows(t *testing.T) {
	kinds := []load.Kind{
		{Name: "ingest", Weight: 80, Check: load.Check{StoresRows: true}},
		{Name: "page", Weight: 20},
	}
	c := plan.Cell{Scenario: "s", Target: "t", Trial: 1, Load: load.Config{Kinds: kinds, Model: load.Model{Rate: 100}}}
	res := load.Result{Mode: load.Open, Requests: 100, Successes: 80, Errors: 20, Valid: false, InvalidReason: "request page: success ratio 0 below 0.99",
		Kinds: []load.Result{
			{Kind: "ingest", Mode: load.Open, RequestedRate: 80, Requests: 80, Successes: 80, Valid: true},
			{Kind: "page", Mode: load.Open, RequestedRate: 20, Requests: 20, Errors: 20, InvalidReason: "success ratio 0 below 0.99"},
		}}
	row := results.Row{Scenario: "s", Target: "t", Trial: 1, Streams: "ingest:80,page:20", RequestedRPS: 100, Connections: 50, CPUSet: "1", RPSPerCore: 9,
		Valid: res.Valid, InvalidReason: res.InvalidReason}
	got := kindRows(row, c, res)
	if len(got) != 2 {
		t.Fatalf("%d request rows, want 2", len(got))
	}
	in, page := got[0], got[1]
	if in.Scenario != "s.request-ingest" || in.Request != "ingest" || in.RequestedRPS != 80 || in.Successes != 80 || in.Streams != row.Streams || in.RPSPerCore != 0 || in.Connections != 50 {
		t.Errorf("ingest row: %s request %s at %d rps, %d successes, streams %s, %v rps/core, %d connections", in.Scenario, in.Request, in.RequestedRPS, in.Successes, in.Streams, in.RPSPerCore, in.Connections)
	}
	if !in.Valid || page.Valid || page.Scenario != "s.request-page" || page.Errors != 20 {
		t.Errorf("ingest valid %v (%s), page %s valid %v, %d errors: want ingest valid, page invalid", in.Valid, in.InvalidReason, page.Scenario, page.Valid, page.Errors)
	}
	if s, f := storing(c.Load, res); s != 80 || f != 0 {
		t.Errorf("stored-row check counts %d successes, %d errors; want ingest's 80 and 0", s, f)
	}
	// The cell invalid for its target: every request's row says so.
	row.InvalidReason = "target exited with code 1; " + row.InvalidReason
	for _, r := range kindRows(row, c, res) {
		if r.Valid || !strings.Contains(r.InvalidReason, "the cell: target exited") {
			t.Errorf("%s of a cell whose target died: valid %v (%s)", r.Request, r.Valid, r.InvalidReason)
		}
	}
	c.Load.Kinds = nil
	if rows := kindRows(row, c, res); rows != nil {
		t.Errorf("a cell of one request got %d request rows", len(rows))
	}
}
