package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
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
	res := load.Result{Mode: load.Open, Requests: 100, Successes: 80, Errors: 20, Valid: false, Fault: fault.Errors, InvalidReason: "request page: success ratio 0 below 0.99",
		Kinds: []load.Result{
			{Kind: "ingest", Mode: load.Open, RequestedRate: 80, Requests: 80, Successes: 80, Valid: true},
			{Kind: "page", Mode: load.Open, RequestedRate: 20, Requests: 20, Errors: 20, Fault: fault.Errors, InvalidReason: "success ratio 0 below 0.99"},
		}}
	row := results.Row{Scenario: "s", Target: "t", Trial: 1, Streams: "ingest:80,page:20", RequestedRPS: 100, Connections: 50, CPUSet: "1", RPSPerCore: 9,
		Valid: res.Valid, Fault: res.Fault, InvalidReason: res.InvalidReason}
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
	row.SetFault(fault.TargetDied, "target exited with code 1; "+row.InvalidReason)
	for _, r := range kindRows(row, c, res) {
		if r.Valid || !strings.Contains(r.InvalidReason, "the cell: target exited") {
			t.Errorf("%s of a cell whose target died: valid %v (%s)", r.Request, r.Valid, r.InvalidReason)
		}
	}
	// The cell invalid because the generator delayed one request: that request's row says so,
	// with the cause its CPU gives, as the cell's does (blame); the other's stays valid.
	res.Fault, res.InvalidReason = fault.GeneratorDelayed, "request page: generator delayed requests"
	res.Kinds[1].Fault, res.Kinds[1].InvalidReason = fault.GeneratorDelayed, "generator delayed requests"
	row.SetFault(res.Fault, res.InvalidReason)
	row.GeneratorCPUPercent = 95
	blame(&row)
	rows := kindRows(row, c, res)
	if in, page := rows[0], rows[1]; !in.Valid || page.Valid || !strings.HasSuffix(page.InvalidReason, "short of CPU (it used 95% of its CPUs): give it more CPU or lower the rate") {
		t.Errorf("the generator late for page: ingest valid %v (%s), page valid %v (%s); want ingest valid, page invalid and blamed", in.Valid, in.InvalidReason, page.Valid, page.InvalidReason)
	}
	c.Load.Kinds = nil
	if rows := kindRows(row, c, res); rows != nil {
		t.Errorf("a cell of one request got %d request rows", len(rows))
	}
}

// A mix through the runner: each request verified before load (a failing one named), then the
// cell's row and one per request, the requests' counts adding up to the cell's.
func TestMixIsRunAndVerified(t *testing.T) {
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(5 * time.Millisecond)
			io.WriteString(w, body)
		}
	}
	for _, tc := range []struct {
		name, bBody, want string
	}{
		{"every request passes", `{"ok":1}`, ""},
		{"one request fails its check", `{"nope":1}`, string(fault.VerifyFailed) + ": request b: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/a", answer(`{"id":1}`))
			mux.HandleFunc("/b", answer(tc.bBody))
			mux.HandleFunc("/p", answer(`{"up":1}`))
			f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": mux.ServeHTTP}}
			p := planFor("t")
			p.Cells[0].Load.Check = load.Check{}
			p.Cells[0].Load.Kinds = []load.Kind{
				{Name: "a", Weight: 3, Request: load.Request{Method: "GET", URL: "/a"}, Check: load.NewCheck(`"id"`)},
				{Name: "b", Weight: 1, Request: load.Request{Method: "GET", URL: "/b"}, Check: load.NewCheck(`"ok"`)},
				{Name: "p", Rate: 20, Request: load.Request{Method: "GET", URL: "/p"}, Check: load.NewCheck(`"up"`)},
			}
			details := map[timeline.Key]Detail{}
			r := &Runner{
				Lifecycle: f, Log: io.Discard, Meta: Meta{Version: "test"}, Record: func(results.Row) error { return nil },
				Detail: func(_ results.Row, d Detail) error { details[d.Cell.Key] = d; return nil },
			}
			rows, err := r.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if len(rows) != 1 || !strings.HasPrefix(rows[0].InvalidReason, tc.want) || rows[0].Requests != 0 {
					t.Fatalf("%d rows, the first %q with %d requests; want one, %q, never loaded", len(rows), rows[0].InvalidReason, rows[0].Requests, tc.want)
				}
				return
			}
			if len(rows) != 4 {
				t.Fatalf("%d rows, want the cell's and 3 requests'", len(rows))
			}
			whole, a, b, probe := rows[0], rows[1], rows[2], rows[3]
			if whole.Request != "" || a.Scenario != "s.request-a" || probe.Request != "p" || whole.Streams != "a:3,b:1,p@20" || whole.RequestedRPS != 120 {
				t.Errorf("rows %s/%q, %s, %s/%q; streams %s at %d rps", whole.Scenario, whole.Request, a.Scenario, probe.Scenario, probe.Request, whole.Streams, whole.RequestedRPS)
			}
			// Turns of a, b, a, a (or so): a is three times b, up to one turn's three.
			if d := a.Requests - 3*b.Requests; a.Requests+b.Requests+probe.Requests != whole.Requests || b.Requests == 0 || d < -3 || d > 3 {
				t.Errorf("requests: a %d, b %d, probe %d of %d; want a three times b, within a turn", a.Requests, b.Requests, probe.Requests, whole.Requests)
			}
			if a.Errors+b.Errors+probe.Errors != 0 {
				t.Errorf("errors %d, %d, %d: %s", a.Errors, b.Errors, probe.Errors, whole.InvalidReason)
			}
			// Every row has its timeline and histogram, keyed as the row, adding up to it.
			for _, row := range rows {
				d, ok := details[detailKey(row)]
				if !ok {
					t.Errorf("%s: no timeline nor histogram kept", row.Scenario)
					continue
				}
				var successes int64
				for _, sec := range d.Cell.Measure {
					successes += sec.Successes
				}
				if successes != row.Successes || d.Latencies.TotalCount() != row.Successes {
					t.Errorf("%s: its seconds %d successes, its histogram %d; the row %d", row.Scenario, successes, d.Latencies.TotalCount(), row.Successes)
				}
			}
		})
	}
}
