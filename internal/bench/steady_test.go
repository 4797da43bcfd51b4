package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
)

// A target whose service time grows through the phase (a leak, a growing table) is measured,
// and its row says it was not steady, and which figure moved.
func TestGrowingDelayIsNotSteady(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-second phase")
	}
	growing := growingDelay()
	p := planFor("leaky")
	p.Cells[0].Load.Model.Rate = 50
	p.Cells[0].Load.Model.ExpectedLatency = 150 * time.Millisecond
	p.Cells[0].Load.Duration = 10 * time.Second
	rows, _, log, err := run(t, &fakeLifecycle{handler: map[string]http.HandlerFunc{"leaky": growing}}, p, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if !r.SteadyJudged || r.Steady || !r.NotSteady() || !strings.Contains(r.Warnings, "not steady: ") || !strings.Contains(r.Warnings, "p50 rose ") {
		t.Errorf("steady=%v judged=%v warnings %q; want a not-steady row whose p50 rose", r.Steady, r.SteadyJudged, r.Warnings)
	}
	// A valid row's verdict line says so (its validity hangs on this machine's load).
	if r.Valid && !strings.Contains(log, "NOT STEADY (never ranked): p50 rose ") {
		t.Errorf("the log does not say so:\n%s", log)
	}
}

// A find-max step whose latency climbs through it does not meet the SLO, whatever its p99.
func TestFindMaxStepNotSteadyFailsItsSLO(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-second step")
	}
	growing := growingDelay()
	p := planFor("leaky")
	// The first step is what is judged: the search stops there.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rows []results.Row
	r := &Runner{Lifecycle: &fakeLifecycle{handler: map[string]http.HandlerFunc{"leaky": growing}}, Log: &strings.Builder{},
		Record: func(row results.Row) error { rows = append(rows, row); cancel(); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 2 * time.Second, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 40, Resolution: maxrate.Resolution{RPS: 40}, Limit: 40}, Step: 10 * time.Second}
	if _, err := r.FindMax(ctx, p, m); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if len(rows) == 0 || rows[0].Valid || !strings.HasPrefix(rows[0].InvalidReason, "slo not met: not steady: ") || !strings.Contains(rows[0].InvalidReason, " rose ") {
		t.Fatalf("%d step(s); the first: valid %v, reason %q; want it failed as not steady", len(rows), len(rows) > 0 && rows[0].Valid, rows[0].InvalidReason)
	}
}

// growingDelay is a target whose service time grows through the phase: 5 ms, then 10 ms more for
// every second since the first request (100 ms more over a 10-second phase).
func growingDelay() http.HandlerFunc {
	var once sync.Once
	var began time.Time
	return func(w http.ResponseWriter, _ *http.Request) {
		once.Do(func() { began = time.Now() })
		time.Sleep(5*time.Millisecond + time.Since(began)/100)
		io.WriteString(w, `{"id":1}`)
	}
}
