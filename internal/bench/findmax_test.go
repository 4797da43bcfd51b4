package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/verify"
)

func TestToStep(t *testing.T) {
	slo := maxrate.SLO{P99: 100 * time.Millisecond, MaxErrors: 0.001}
	base := load.Result{Mode: load.Open, RequestedRate: 100, ExpectedLatency: 100 * time.Millisecond, InFlightLimit: 40, Duration: 10 * time.Second,
		Latency: latency.Summary{P50: 20 * time.Millisecond, P99: 50 * time.Millisecond}}
	cases := []struct {
		name          string
		mod           func(*load.Result)
		generatorBusy float64
		wantErrors    float64
		wantGenerator bool
		// wantUnanswered: the errors are the requests due and never answered, slots full.
		wantUnanswered bool
	}{
		{"all served", func(r *load.Result) { r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5 }, 0.9, 0, false, false},
		{"errors", func(r *load.Result) { r.Requests, r.Successes, r.Errors, r.PeakInFlight = 1000, 990, 10, 5 }, 0.9, 0.01, false, false},
		{"slots full: unsent requests are unserved users", func(r *load.Result) { r.Requests, r.Successes, r.PeakInFlight = 600, 600, 40 }, 0.9, 0.4, false, true},
		{"slots full, every request sent and answered: the errors' share", func(r *load.Result) { r.Requests, r.Successes, r.Errors, r.PeakInFlight = 1000, 400, 600, 40 }, 0.9, 0.6, false, false},
		{"slots full of the generator's making, short of CPU: its limit", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight, r.Latency.P99 = 600, 600, 40, 2*time.Second
			r.Fault, r.InvalidReason = fault.GeneratorBehind, "generator sent 60 rps of 100 requested (60.0%): all 40 in-flight slots were busy"
		}, 0.97, 0.4, true, true},
		{"slots full of the generator's making, CPU to spare: not its limit", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight, r.Latency.P99 = 600, 600, 40, 2*time.Second
			r.Fault, r.InvalidReason = fault.GeneratorBehind, "generator sent 60 rps of 100 requested (60.0%): all 40 in-flight slots were busy"
		}, 0.5, 0.4, false, true},
		{"generator short with slots free", func(r *load.Result) { r.Requests, r.Successes, r.PeakInFlight = 600, 600, 5 }, 0.9, 0, true, false},
		{"short with CPU to spare: held up by the target", func(r *load.Result) { r.Requests, r.Successes, r.PeakInFlight = 600, 600, 5 }, 0.5, 0, false, false},
		{"generator's own delay over 10% of the SLO's bound", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5
			r.OwnDelay.P99 = 12 * time.Millisecond
		}, 0.9, 0, true, false},
		{"late with CPU to spare: held up by the target", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5
			r.Latency.P99, r.OwnDelay.P99, r.OwnDelay.Max = 152*time.Millisecond, 23*time.Millisecond, 59*time.Millisecond
		}, 0.48, 0, false, false},
		{"generator late behind a target far over the bound", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5
			r.Latency.P99, r.OwnDelay.P99, r.OwnDelay.Max = 300*time.Millisecond, 12*time.Millisecond, 20*time.Millisecond
		}, 0.9, 0, false, false},
		{"generator late and short behind a target returning errors", func(r *load.Result) {
			r.Requests, r.Successes, r.Errors, r.PeakInFlight = 600, 590, 10, 5
			r.OwnDelay.P99 = 12 * time.Millisecond
		}, 0.9, 10.0 / 600, false, false},
		{"generator late by as much as the target is over", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5
			r.Latency.P99, r.OwnDelay.P99, r.OwnDelay.Max = 110*time.Millisecond, 12*time.Millisecond, 20*time.Millisecond
		}, 0.9, 0, true, false},
		{"own delay within 10% of the bound", func(r *load.Result) {
			r.Requests, r.Successes, r.PeakInFlight = 1000, 1000, 5
			r.OwnDelay.P99 = 8 * time.Millisecond
		}, 0.9, 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := base
			c.mod(&r)
			s, _ := toStep(r, 100, 10*time.Second, slo, c.generatorBusy)
			if d := s.ErrorRatio - c.wantErrors; d > 1e-9 || d < -1e-9 || s.GeneratorLimited != c.wantGenerator || s.Unanswered != c.wantUnanswered {
				t.Errorf("errors %.4f generator-limited %v unanswered %v, want %.4f %v %v", s.ErrorRatio, s.GeneratorLimited, s.Unanswered, c.wantErrors, c.wantGenerator, c.wantUnanswered)
			}
		})
	}
}

// limited serves at most slots requests at once, each taking service: capacity slots/service.
func limited(slots int, service time.Duration) http.HandlerFunc {
	sem := make(chan struct{}, slots)
	return func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		time.Sleep(service)
		<-sem
		io.WriteString(w, `{"id":1}`)
	}
}

func TestFindMaxRecordsEveryStep(t *testing.T) {
	// 8 slots × 50 ms: 160 rps at most. Over a 0.5 s step a rate r above it queues (r − 160) / 2
	// requests, drained at 160 rps: p99 ≈ 50 ms + the last one's wait stays below 200 ms up to
	// r ≈ 208. Long service times leave the generator 20 ms of lag on a busy test machine.
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}} // "down" fails to start
	p := planFor("t", "down")
	var rows, down []results.Row
	r := &Runner{Lifecycle: f, Log: &strings.Builder{}, Record: func(row results.Row) error {
		if row.Target == "down" {
			down = append(down, row)
		} else {
			rows = append(rows, row)
		}
		return nil
	}}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 20, Resolution: maxrate.Resolution{RPS: 20}, Limit: 3200, LatencyAt: maxrate.LatencyAt{50, 75, 90}},
		Step:   500 * time.Millisecond}
	found, err := r.FindMax(context.Background(), p, m)
	if err != nil {
		t.Fatal(err)
	}
	// Every row says where its search measured latency below the maximum, as the summary reads it.
	for _, row := range append(slices.Clone(rows), down...) {
		if row.LatencyAt != "50%,75%,90%" {
			t.Errorf("row %d of %s: latency at %q, want the search's 50%%,75%%,90%%", row.Trial, row.Target, row.LatencyAt)
		}
	}
	byTarget := map[string]maxrate.Outcome{}
	for _, o := range found {
		byTarget[o.Target] = o
	}
	if len(found) != 2 || !strings.HasPrefix(byTarget["down"].Failed, string(fault.StartFailed)) {
		t.Fatalf("results %+v, want the second target's start failure", found)
	}
	// A search whose target never started leaves one row saying why, and no measurement.
	if len(down) != 1 || !strings.HasPrefix(down[0].InvalidReason, string(fault.StartFailed)) || down[0].Requests != 0 || down[0].Loaded() {
		t.Errorf("rows of the target that did not start: %+v", down)
	}
	res := byTarget["t"]
	t.Logf("max %d rps, first failed %d, %d steps, generator-limited %v", res.Max, res.FirstFailed, len(res.Steps), res.GeneratorLimited())
	switch last := rows[len(rows)-1]; {
	case res.GeneratorLimited():
		// A starved test machine: the search must stop at the generator's limit, say so, and
		// report only rates below it.
		if !strings.HasPrefix(last.InvalidReason, "generator-limited: ") || res.Max >= last.RequestedRPS || len(res.Fractions) != 0 {
			t.Errorf("generator-limited search: max %d, last step %d rps %q, %d fractions", res.Max, last.RequestedRPS, last.InvalidReason, len(res.Fractions))
		}
	case res.Max < 120 || res.Max > 220 || res.FirstFailed == 0 || res.FirstFailed-res.Max > 20:
		t.Errorf("max %d, first failed %d: want a maximum near 160–208 rps, within 20 of a failing step", res.Max, res.FirstFailed)
	case len(res.Fractions) != 3 || res.Fractions[2].Rate != res.Max*9/10:
		t.Errorf("fractions %+v of max %d", res.Fractions, res.Max)
	}
	if want := len(res.Steps) + len(res.Fractions); len(rows) != want {
		t.Errorf("%d rows recorded, want one per step (%d)", len(rows), want)
	}
	for i, row := range rows {
		t.Logf("step %d: %d rps, p99 %v, lag p99 %v, peak %d/%d, achieved %.1f: %s", i+1, row.RequestedRPS, row.LatencyP99, row.SendLagP99, row.PeakInFlight, row.Connections, row.AchievedRPS, row.InvalidReason)
		if row.Scenario != "s"+results.FindMaxSuffix || row.Trial != i+1 || row.Mode != "open" || row.Requests == 0 {
			t.Errorf("row %d: scenario %q trial %d mode %s requests %d", i, row.Scenario, row.Trial, row.Mode, row.Requests)
		}
		if i < len(res.Steps) && row.RequestedRPS != res.Steps[i].Rate {
			t.Errorf("row %d at %d rps, step at %d", i, row.RequestedRPS, res.Steps[i].Rate)
		}
	}
	if f.started != f.removed || f.started != 1 {
		t.Errorf("started %d, removed %d: one container per target searched", f.started, f.removed)
	}
}

func TestAStepDecidedEarlyEndsThere(t *testing.T) {
	// 8 slots × 50 ms: 160 rps at most. At 640 rps, half the answers of the step's first second
	// take over 200 ms: 2% of the step's due requests are slow, so the step ends with that
	// second's successor, its verdict what it would have been. 80 rps meets the SLO to the end.
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}}
	var rows []results.Row
	log := &strings.Builder{}
	r := &Runner{Lifecycle: f, Log: log, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	step := 3 * time.Second
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 80, Resolution: maxrate.Resolution{RPS: 1000}, Limit: 640, Bracket: maxrate.Bracket{Low: 80, High: 640}},
		Step:   step}
	found, err := r.FindMax(context.Background(), planFor("t"), m)
	if err != nil {
		t.Fatal(err)
	}
	if res := found[0].Result; res.Max != 80 || res.FirstFailed != 640 {
		t.Fatalf("max %d, first failed %d: want 80 met and 640 failed\n%s", res.Max, res.FirstFailed, log)
	}
	var early, whole int
	for _, row := range rows {
		t.Logf("%d rps: %d requests, %.1f achieved: %s", row.RequestedRPS, row.Requests, row.AchievedRPS, row.InvalidReason)
		due := float64(row.RequestedRPS) * step.Seconds()
		switch row.RequestedRPS {
		case 640:
			if !strings.Contains(row.InvalidReason, "decided after 2s of 3s") || float64(row.Requests) > 2.0/3*due {
				t.Errorf("640 rps: %d requests of %.0f due, %q: want the step ended after 2 s, failed", row.Requests, due, row.InvalidReason)
			}
			early++
		case 80:
			if row.InvalidReason != "" || float64(row.Requests) < 0.9*due {
				t.Errorf("80 rps: %d requests of %.0f due, %q: want the whole step, met", row.Requests, due, row.InvalidReason)
			}
			whole++
		}
	}
	if early != 2 || whole != 2 {
		t.Errorf("%d steps at 640 rps and %d at 80, want each rate's vote of 2", early, whole)
	}
}

// recoveries notes, in the order they come, the steps a search records and the recoveries it logs.
type recoveries struct {
	mu     sync.Mutex
	events []searchEvent
	rows   []results.Row
}

// searchEvent is a step (its rate and whether it met the SLO) or a recovery (its rate).
type searchEvent struct {
	rate           int
	recovered, met bool
}

func (e *recoveries) Write(p []byte) (int, error) {
	var rate int
	if line := string(p); strings.Contains(line, "half the last rate met, unmeasured") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "%d rps:", &rate); err != nil {
			return 0, fmt.Errorf("recovery line %q: %v", line, err)
		}
		e.mu.Lock()
		e.events = append(e.events, searchEvent{rate: rate, recovered: true})
		e.mu.Unlock()
	}
	return len(p), nil
}

func (e *recoveries) record(row results.Row) error {
	e.mu.Lock()
	e.events = append(e.events, searchEvent{rate: row.RequestedRPS, met: row.Valid})
	e.rows = append(e.rows, row)
	e.mu.Unlock()
	return nil
}

// A search's steps keep the connections of the loads before them: the target accepts no more than
// the most any one step may hold open (its in-flight bound) and a few for the checks, where
// separate steps would open their own each (268 where 100 were allowed, seen with the session
// removed). After a failing step, and only then, the target is
// loaded at half the last rate it met before the next step. The bracket's High, met, is voted on
// at once: its second step goes on from the first.
func TestASearchKeepsItsConnectionsAndRecoversBelowTheLastRateMet(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}} // 160 rps at most
	e := &recoveries{}
	r := &Runner{Lifecycle: f, Log: e, Record: e.record}
	m := MaxSearch{SLO: maxrate.SLO{P99: 80 * time.Millisecond, MaxErrors: 0.01}, StepWarmup: 100 * time.Millisecond,
		Search: maxrate.Config{Start: 40, Resolution: maxrate.Resolution{RPS: 80}, Limit: 640, Bracket: maxrate.Bracket{Low: 80, High: 120}},
		Step:   300 * time.Millisecond}
	if _, err := r.FindMax(context.Background(), planFor("t"), m); err != nil {
		t.Fatal(err)
	}
	met, failed, recovered, bound := m.Search.Start, 0, 0, 0
	var errs int64
	for i, ev := range e.events {
		t.Logf("%+v", ev)
		switch {
		case ev.recovered:
			recovered++
			if i == 0 || e.events[i-1].met || e.events[i-1].recovered {
				t.Errorf("event %d: a recovery not after a failing step", i+1)
			}
			if ev.rate != met/2 {
				t.Errorf("event %d: recovered at %d rps, want half the last rate met, %d", i+1, ev.rate, met)
			}
		case ev.met:
			met = ev.rate
		default:
			failed++
			if i+1 < len(e.events) && !e.events[i+1].recovered {
				t.Errorf("event %d: the step after a failing one (%d rps) came without a recovery", i+2, ev.rate)
			}
		}
	}
	if failed == 0 || recovered == 0 {
		t.Fatalf("%d failing steps, %d recoveries: the search must have both to test", failed, recovered)
	}
	// Every connection of a load is held by a request in flight when it is opened; kept,
	// they stay open, so no more are opened than the highest in-flight bound of the search's
	// loads (its steps': the warm-up's and recoveries' rates are lower), bar one for each request
	// that ended in an error (its connection is closed) and a few for the health checks.
	for _, row := range e.rows {
		bound = max(bound, row.Connections)
		errs += row.Errors
	}
	// A step right after one that met the SLO at its rate goes on from it, without a warm-up of
	// its own; every other step has one.
	goneOn := 0
	for i, row := range e.rows {
		want := m.StepWarmup
		if i > 0 && e.rows[i-1].Valid && e.rows[i-1].RequestedRPS == row.RequestedRPS {
			want, goneOn = 0, goneOn+1
		}
		if row.Warmup != want {
			t.Errorf("step %d (%d rps): warm-up %s, want %s", i+1, row.RequestedRPS, row.Warmup, want)
		}
	}
	if goneOn == 0 || goneOn == len(e.rows) {
		t.Errorf("%d of %d steps went on from the one before: the search must have both kinds to test", goneOn, len(e.rows))
	}
	if got, most := f.accepted.Load(), int64(bound+4)+errs; got > most {
		t.Errorf("the target accepted %d connections over the search, more than the %d one set of connections may open", got, most)
	}
}

func TestFindMaxStopsWhenTheTargetDies(t *testing.T) {
	// After 40 requests every answer, health included, is a dropped connection: a target killed
	// for running out of memory. The search must end there, not bisect through failing steps.
	var served atomic.Int64
	dies := func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) > 40 {
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, `{"id":1}`)
	}
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": dies}}
	var rows []results.Row
	r := &Runner{Lifecycle: f, Log: &strings.Builder{}, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 20, Resolution: maxrate.Resolution{RPS: 20}, Limit: 3200}, Step: 500 * time.Millisecond}
	found, err := r.FindMax(context.Background(), planFor("t"), m)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Failed, "stopped answering") {
		t.Fatalf("results %+v, want the search ended by the target's death", found)
	}
	if len(rows) > 4 {
		t.Errorf("%d steps recorded: the search went on after the target died", len(rows))
	}
}

func TestFindMaxEndsOnATargetThatStopsStoring(t *testing.T) {
	// Verification's writes are stored, then every later write is answered and dropped: the first
	// step must catch it and end the search.
	s := &store{delay: 5 * time.Millisecond, storeFirst: verify.Tries}
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": s.ServeHTTP}}
	p := planFor("t")
	p.Cells[0].Load.Check.StoresRows = true
	p.Cells[0].Load.Request.Method = http.MethodPost
	var rows []results.Row
	r := &Runner{Lifecycle: f, Log: &strings.Builder{}, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 20, Resolution: maxrate.Resolution{RPS: 20}, Limit: 3200}, Step: 500 * time.Millisecond}
	found, err := r.FindMax(context.Background(), p, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.Contains(found[0].Failed, "did not store") || len(rows) != 1 {
		t.Fatalf("outcome %+v after %d step(s), want the search ended at the first step by the stored-row check", found, len(rows))
	}
	if rows[0].Valid || !strings.HasPrefix(rows[0].InvalidReason, "stored rows: ") {
		t.Errorf("step row valid=%v reason %q, want invalid by the stored-row check", rows[0].Valid, rows[0].InvalidReason)
	}
}

func TestFindMaxSearchesOncePerTrial(t *testing.T) {
	// Two trials of one target: two searches, each in its own container, whose steps are
	// numbered on from one search to the next.
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}}
	p := planFor("t")
	second := p.Cells[0]
	second.Trial = 2
	p.Cells = append(p.Cells, second)
	var rows []results.Row
	r := &Runner{Lifecycle: f, Log: &strings.Builder{}, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 40, Resolution: maxrate.Resolution{RPS: 40}, Limit: 640}, Step: 300 * time.Millisecond, StepWarmup: 100 * time.Millisecond}
	found, err := r.FindMax(context.Background(), p, m)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		warm := m.StepWarmup
		if i > 0 && rows[i-1].Valid && rows[i-1].RequestedRPS == row.RequestedRPS && rows[i-1].Search == row.Search {
			warm = 0 // goes on from the step before
		}
		if row.Warmup != warm || row.Duration != m.Step {
			t.Errorf("step at %d rps: warm-up %v and %v measured, want %v then %v", row.RequestedRPS, row.Warmup, row.Duration, warm, m.Step)
		}
	}
	if len(found) != 2 || found[0].Search == found[1].Search || f.started != 2 || f.removed != 2 {
		t.Fatalf("%d outcomes (searches %+v), %d containers started, %d removed; want two searches in two containers", len(found), found, f.started, f.removed)
	}
	for i, row := range rows {
		if row.Trial != i+1 {
			t.Errorf("row %d has trial %d: steps must be numbered on across searches", i, row.Trial)
		}
	}
	if want := len(found[0].Steps) + len(found[0].Fractions) + len(found[1].Steps) + len(found[1].Fractions); len(rows) != want {
		t.Errorf("%d rows, want one per step of both searches (%d)", len(rows), want)
	}
}

func TestEvenSearchesStartFromTheOddOnesBoundary(t *testing.T) {
	// Three searches of one target: the second starts from the first's boundary, its first step at
	// the first's failing rate; the third, odd, doubles from the start again.
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}}
	p := planFor("t")
	p.Cells[0].Load.Warmup = 100 * time.Millisecond
	for trial := 2; trial <= 3; trial++ {
		c := p.Cells[0]
		c.Trial = trial
		p.Cells = append(p.Cells, c)
	}
	var rows []results.Row
	log := &strings.Builder{}
	r := &Runner{Lifecycle: f, Log: log, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 40, Resolution: maxrate.Resolution{RPS: 40}, Limit: 640}, Step: 300 * time.Millisecond,
		StepWarmup: 100 * time.Millisecond}
	found, err := r.FindMax(context.Background(), p, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 3 {
		t.Fatalf("%d searches, want 3", len(found))
	}
	for _, o := range found {
		if len(o.Steps) == 0 {
			t.Fatalf("search %d ran no step: %+v", o.Search, o)
		}
		t.Logf("search %d from %v: max %d, first failed %d, %d steps, the first at %d rps", o.Search, o.Bracket, o.Max, o.FirstFailed, len(o.Steps), o.Steps[0].Rate)
	}
	first, second, third := found[0], found[1], found[2]
	if b := first.Boundary(); b == (maxrate.Bracket{}) {
		t.Skipf("the first search found no boundary (a starved test machine): %+v", first.Result)
	}
	if second.Bracket != first.Boundary() || second.Steps[0].Rate != first.FirstFailed {
		t.Errorf("second search from %v, first step at %d rps: want the first's boundary %v, its failing rate first", second.Bracket, second.Steps[0].Rate, first.Boundary())
	}
	// It warms up at half the boundary's met rate (above the first rate here), where the odd
	// searches warm up at the first rate, and climbs from there to the met rate unmeasured.
	half := (first.Max + 1) / 2
	if half <= m.Search.Start {
		t.Fatalf("the first search's max %d is under twice the first rate %d: the test shows nothing", first.Max, m.Search.Start)
	}
	for _, want := range []string{
		fmt.Sprintf("warm-up 100ms at %d rps\n  from search 1's boundary: %d rps met, %d failed", half, first.Max, first.FirstFailed),
		fmt.Sprintf("climbing from %d to %d rps in %s", half, first.Max, m.Step), // one doubling
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, log)
		}
	}
	if n := len(first.Steps) + len(first.Fractions) + len(second.Steps) + len(second.Fractions) + len(third.Steps) + len(third.Fractions); len(rows) != n {
		t.Errorf("%d rows, want one per step (%d): the climb is no step", len(rows), n)
	}
	if third.Bracket != (maxrate.Bracket{}) || third.Steps[0].Rate != m.Search.Start {
		t.Errorf("third search from %v, first step at %d rps: want it doubling from %d", third.Bracket, third.Steps[0].Rate, m.Search.Start)
	}
	for _, o := range found {
		if !o.GeneratorLimited() && (o.Max < 120 || o.Max > 220) {
			t.Errorf("search %d: max %d, want near 160–208 rps", o.Search, o.Max)
		}
	}
}

// disturbedSearch searches a target of 4 slots × 50 ms (80 rps at most, so rates up to 320 fail)
// while a process spins beside the generator and the target; it answers the steps' rows.
func disturbedSearch(t *testing.T, keepDisturbed bool) []results.Row {
	t.Helper()
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	busyNeighbour(t)
	l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(4, 50*time.Millisecond)}, machine: &resources.ThisHost},
		src: &steadyUsage{}, health: `{}`}
	p := planFor("t")
	p.GeneratorCPUs, p.Cells[0].Spec.CPUSet = cpus, cpuset.Format(cpus)
	var rows []results.Row
	r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(row results.Row) error { rows = append(rows, row); return nil }, KeepDisturbed: keepDisturbed}
	m := MaxSearch{SLO: maxrate.SLO{P99: 150 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 40, Resolution: maxrate.Resolution{RPS: 40}, Limit: 320}, Step: 300 * time.Millisecond}
	if _, err := r.FindMax(context.Background(), p, m); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestFindMaxRepeatsAStepFailedWhileDisturbed(t *testing.T) {
	// Every failing step is disturbed, so it is run again, up to three times, before it counts; a
	// passing one counts at once.
	rows := disturbedSearch(t, false)
	repeated, run := 0, 0
	for i, row := range rows {
		t.Logf("step %d: %d rps, p99 %v: %s %s", i+1, row.RequestedRPS, row.LatencyP99, row.InvalidReason, row.Warnings)
		if !strings.HasPrefix(row.InvalidReason, "repeated: failed while disturbed") {
			run = 0
			continue
		}
		repeated++
		if run++; run > maxDisturbedAttempts-1 {
			t.Errorf("step %d: repeated more than %d times", i+1, maxDisturbedAttempts)
		}
		if i+1 == len(rows) || rows[i+1].RequestedRPS != row.RequestedRPS {
			t.Errorf("step %d at %d rps was repeated, but the next step is not at its rate", i+1, row.RequestedRPS)
		}
		if !strings.Contains(row.Warnings, "disturbed: other processes used") {
			t.Errorf("step %d: warnings %q", i+1, row.Warnings)
		}
	}
	if repeated == 0 {
		t.Error("no failing step was repeated while a neighbour spun (4 slots × 50 ms: 80 rps at most, so rates up to 320 fail)")
	}
}

func TestFindMaxKeepDisturbedRepeatsNoStep(t *testing.T) {
	// With KeepDisturbed, a step failed while a neighbour spun counts as measured, marked
	// disturbed.
	rows := disturbedSearch(t, true)
	failed := 0
	for i, row := range rows {
		if strings.HasPrefix(row.InvalidReason, "repeated:") {
			t.Errorf("step %d at %d rps repeated: %s", i+1, row.RequestedRPS, row.InvalidReason)
		}
		if strings.HasPrefix(row.InvalidReason, "slo not met") && strings.Contains(row.Warnings, "disturbed: other processes used") {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no step failed while disturbed (4 slots × 50 ms: 80 rps at most, so rates up to 320 fail): %d steps", len(rows))
	}
}

// mortal is a target that dies as one out of memory does when more than most requests arrive in
// a tenth of a second (a rate over most × 10): every later request is a dropped connection, and its
// container says it was OOM-killed.
type mortal struct {
	most   int64
	mu     sync.Mutex
	bucket int64
	n      int64
	dead   atomic.Bool
}

func (m *mortal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	if b := time.Now().UnixMilli() / 100; b != m.bucket {
		m.bucket, m.n = b, 0
	}
	m.n++
	if m.n > m.most {
		m.dead.Store(true)
	}
	m.mu.Unlock()
	if m.dead.Load() {
		panic(http.ErrAbortHandler)
	}
	time.Sleep(20 * time.Millisecond)
	io.WriteString(w, `{"id":1}`)
}

// mortals starts each container as a new mortal target.
type mortals struct {
	*fakeLifecycle
	most int64
}

func (l *mortals) Start(_ context.Context, s container.Spec) (container.Instance, error) {
	m := &mortal{most: l.most}
	l.mu.Lock()
	l.started++
	l.mu.Unlock()
	return &mortalInstance{fakeInstance{srv: httptest.NewServer(m), f: l.fakeLifecycle}, m}, nil
}

type mortalInstance struct {
	fakeInstance
	m *mortal
}

func (i *mortalInstance) Fate(context.Context) (container.Fate, error) {
	if i.m.dead.Load() {
		return container.Fate{OOMKilled: true, OOMKills: 1}, nil
	}
	return container.Fate{Running: true}, nil
}

func TestFindMaxGoesOnBelowARateTheTargetDiedAt(t *testing.T) {
	// Dead above 500 rps (50 requests in a tenth of a second); 320 passes with room, 640 kills it.
	l := &mortals{fakeLifecycle: &fakeLifecycle{}, most: 50}
	var rows []results.Row
	var log strings.Builder
	r := &Runner{Lifecycle: l, Log: &log, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01},
		Search: maxrate.Config{Start: 20, Resolution: maxrate.Resolution{RPS: 100}, Limit: 3200}, Step: 500 * time.Millisecond}
	found, err := r.FindMax(context.Background(), planFor("t"), m)
	if err != nil {
		t.Fatal(err)
	}
	o := found[0]
	if o.Failed != "" || o.Max < 320 || o.Max >= 640 {
		t.Fatalf("outcome %+v, want a maximum from 320 below the 640 rps the target died at\n%s", o, log.String())
	}
	died := map[int]int{}
	for _, row := range rows {
		if row.Fault == fault.TargetDied {
			died[row.RequestedRPS]++
		}
	}
	if died[640] != 1 || l.started != 1+len(died) {
		t.Errorf("died at %v in %d containers, want once at 640 rps and a container more for each death", died, l.started)
	}
	for rate, n := range died {
		if n > 1 {
			t.Errorf("died %d times at %d rps: a rate the target died at was run again", n, rate)
		}
	}
}
