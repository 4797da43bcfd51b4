package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// heard records what a Status hears, one word an event. Images build side by side, each build
// saying its phase, so it locks as progress.Line does.
type heard struct {
	mu     sync.Mutex
	events []string
}

func (h *heard) add(e string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *heard) Cell(i, n int, c plan.Cell) { h.add(fmt.Sprintf("cell %d/%d %s", i, n, c.Target)) }
func (h *heard) Phase(name string)          { h.add(strings.Fields(name)[0]) }
func (h *heard) Second(p load.Progress) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := string(p.Phase); len(h.events) == 0 || h.events[len(h.events)-1] != e {
		h.events = append(h.events, e)
	}
}
func (h *heard) Done(r results.Row) { h.add("done " + r.Target) }

// TestDetailAndStatus: every measured cell hands over its timeline, whose measured seconds add up
// to its row's successes, and its histogram, before its row is recorded; the status hears the
// cells and their phases in order.
func TestDetailAndStatus(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"a": ok, "b": ok}}
	p := planFor("a", "b")
	for i := range p.Cells {
		p.Cells[i].Load.Warmup = time.Second
	}
	var order []string
	details := map[string]Detail{}
	st := &heard{}
	r := &Runner{
		Lifecycle: f, Log: io.Discard, Status: st, Meta: Meta{Version: "test"},
		Detail: func(row results.Row, d Detail) error {
			order = append(order, "detail "+row.Target)
			details[row.Target] = d
			return nil
		},
		Record: func(row results.Row) error { order = append(order, "record "+row.Target); return nil },
	}
	rows, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		d := details[row.Target]
		var sum int64
		for _, s := range d.Cell.Measure {
			sum += s.Successes
		}
		if sum != row.Successes || d.Latencies.TotalCount() != row.Successes || len(d.Cell.Warmup) == 0 {
			t.Errorf("%s: timeline %d successes, histogram %d, %d warm-up seconds; row %d successes", row.Target, sum, d.Latencies.TotalCount(), len(d.Cell.Warmup), row.Successes)
		}
		if d.Cell.Key != (timeline.Key{Scenario: row.Scenario, Target: row.Target, Trial: row.Trial, RequestedRPS: row.RequestedRPS}) {
			t.Errorf("%s: detail keyed %+v", row.Target, d.Cell.Key)
		}
	}
	first := rows[0].Target
	second := rows[1].Target
	if want := fmt.Sprintf("detail %s,record %s,detail %s,record %s", first, first, second, second); strings.Join(order, ",") != want {
		t.Errorf("order %v, want %s", order, want)
	}
	want := fmt.Sprintf("build,build,cell 1/2 %s,verify,warmup,measure,done %s,cell 2/2 %s,verify,warmup,measure,done %s", first, first, second, second)
	if got := strings.Join(st.events, ","); got != want {
		t.Errorf("status heard %s\nwant %s", got, want)
	}
}

// TestRampsAreNotJudgedSteady: stages that change the rate are not meant to be steady; one rate
// held over stages is.
func TestRampsAreNotJudgedSteady(t *testing.T) {
	for _, tc := range []struct {
		stages string
		want   bool
	}{
		{"", false},
		{"30s:500", false},
		{"30s:500,30s:500", false},
		{"30s:500-5000", true},
		{"30s:500,30s:1000", true},
	} {
		stages, err := load.ParseStages(tc.stages)
		if tc.stages == "" {
			stages, err = nil, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := ramps(stages); got != tc.want {
			t.Errorf("ramps(%q) = %v, want %v", tc.stages, got, tc.want)
		}
	}
}
