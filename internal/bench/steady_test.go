package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A target whose service time grows through the phase (a leak, a growing table) is measured,
// and its row says it was not steady, and which figure moved.
func TestGrowingDelayIsNotSteady(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-second phase")
	}
	var once sync.Once
	var began time.Time
	// 5 ms, then 10 ms more for every second since the first request: 100 ms more over the phase.
	growing := func(w http.ResponseWriter, _ *http.Request) {
		once.Do(func() { began = time.Now() })
		time.Sleep(5*time.Millisecond + time.Since(began)/100)
		io.WriteString(w, `{"id":1}`)
	}
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
