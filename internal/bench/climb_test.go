package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// A climb towards an earlier search's boundary runs its whole length on a target that holds it,
// and ends once 3 seconds in a row break the SLO on one that no longer does, saying so (judged
// once the second after them has closed too: after 5 s of the climb's 8).
func TestAClimbEndsWhereTheTargetBreaks(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		broke   bool
	}{
		{"holding 640 rps", limited(32, 50*time.Millisecond), false},
		{"answering in 300 ms", func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(300 * time.Millisecond)
			io.WriteString(w, `{"id":1}`)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			log := &strings.Builder{}
			r := &Runner{Log: log}
			p := planFor("t")
			in := &instance{r: r, p: p, c: p.Cells[0], ctr: &fakeInstance{srv: srv}}
			m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01}, Step: 2 * time.Second}
			// 10 → 160 rps, doubling every 2 s: 8 s.
			begin := time.Now()
			broke, err := r.climb(context.Background(), in, p.Cells[0], 10, 160, m)
			took := time.Since(begin)
			t.Logf("took %s:\n%s", took, log)
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(log.String(), "the climb ended after ")
			if broke != c.broke || said != c.broke {
				t.Errorf("broke %v, the log says so %v; want %v", broke, said, c.broke)
			}
			if !c.broke && took < 8*time.Second {
				t.Errorf("the climb took %s, want its whole 8 s", took)
			}
		})
	}
}

// A climb's last seconds are judged too, though it ends before they can be (each second is
// judged once it has closed): a 3-s climb on a target answering in 300 ms broke the SLO.
func TestAClimbsLastSecondsAreJudged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, `{"id":1}`)
	}))
	defer srv.Close()
	log := &strings.Builder{}
	r := &Runner{Log: log}
	p := planFor("t")
	in := &instance{r: r, p: p, c: p.Cells[0], ctr: &fakeInstance{srv: srv}}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01}, Step: time.Second}
	broke, err := r.climb(context.Background(), in, p.Cells[0], 10, 80, m) // 10 → 80 rps: 3 s
	if err != nil {
		t.Fatal(err)
	}
	if !broke || !strings.Contains(log.String(), "its last 3 seconds over the SLO") {
		t.Errorf("broke %v, want its 3 seconds, all over the SLO, to have broken it:\n%s", broke, log)
	}
}

// A search without a bracket ramps until the target breaks the SLO, unmeasured, and its steps
// start between the ramp's bracket (no row for the ramp): 8 slots × 50 ms hold 160 rps, and a
// step meets a 200 ms p99 up to about 208.
func TestARampBracketsTheSearch(t *testing.T) {
	o, rows, log := rampedSearch(t, 4*time.Second, 80, 1280)
	t.Logf("bracket %v: max %d, first failed %d, steps %v\n%s", o.Bracket, o.Max, o.FirstFailed, stepRates(o.Steps), log)
	b := o.Bracket
	if b == (maxrate.Bracket{}) || b.High <= 160 || b.Low != int(maxrate.RampLow*float64(b.High)) {
		t.Fatalf("bracket %v: want one from a ramp that broke above 160 rps", b)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("the ramp broke at %d rps after", b.High)) ||
		!strings.Contains(log.String(), fmt.Sprintf("(%d rps: p99 ", b.High)) {
		t.Errorf("the log does not say where the ramp broke, and how its first failing second failed:\n%s", log)
	}
	if len(o.Steps) == 0 || o.Steps[0].Rate <= b.Low || o.Steps[0].Rate > b.High {
		t.Errorf("steps %v: want the first inside the bracket %v", stepRates(o.Steps), b)
	}
	if !o.GeneratorLimited() && (o.Max < 120 || o.Max > 220) {
		t.Errorf("max %d, want near 160–208 rps", o.Max)
	}
	if want := len(o.Steps) + len(o.Fractions); len(rows) != want {
		t.Errorf("%d rows, want one per step (%d): the ramp is no step", len(rows), want)
	}
}

// A ramp that meets the SLO to the search's limit brackets the search below its last second's
// rate: no step doubles up from the first rate (8 slots × 50 ms hold 160 rps; the limit is 120).
func TestARampUnbrokenToTheLimitBracketsTheSearch(t *testing.T) {
	o, _, log := rampedSearch(t, 2*time.Second, 30, 120)
	t.Logf("bracket %v: max %d, steps %v\n%s", o.Bracket, o.Max, stepRates(o.Steps), log)
	b := o.Bracket
	if b == (maxrate.Bracket{}) || b.High > 120 || b.Low != int(maxrate.RampLow*float64(b.High)) {
		t.Fatalf("bracket %v: want one below the limit, from the ramp's last second", b)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("the ramp met the SLO to its end, %d rps", b.High)) {
		t.Errorf("the log does not say the ramp met the SLO to its end:\n%s", log)
	}
	if len(o.Steps) == 0 || o.Steps[0].Rate <= b.Low {
		t.Errorf("steps %v: want none below the bracket %v", stepRates(o.Steps), b)
	}
	if !o.GeneratorLimited() && o.Max != 120 {
		t.Errorf("max %d, want the limit, 120", o.Max)
	}
}

// rampedSearch searches a target of 8 slots × 50 ms (160 rps) under a 200 ms p99 from start up
// to limit, ramping first: its outcome, its rows and its log.
func rampedSearch(t *testing.T, ramp time.Duration, start, limit int) (maxrate.Outcome, []results.Row, *strings.Builder) {
	t.Helper()
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": limited(8, 50*time.Millisecond)}}
	var rows []results.Row
	log := &strings.Builder{}
	r := &Runner{Lifecycle: f, Log: log, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01}, Ramp: ramp,
		Search: maxrate.Config{Start: start, Resolution: maxrate.Resolution{RPS: 20}, Limit: limit}, Step: 500 * time.Millisecond}
	found, err := r.FindMax(context.Background(), planFor("t"), m)
	if err != nil {
		t.Fatal(err)
	}
	return found[0], rows, log
}

func stepRates(steps []maxrate.Step) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.Rate
	}
	return out
}

// An even search's climb from its warm-up rate reaches its bracket's met rate in one doubling,
// whether that rate is odd or even; a bracket below twice the first rate climbs from the first.
func TestAnEvenSearchClimbsToItsBracketInOneDoubling(t *testing.T) {
	for _, tc := range []struct{ start, low, stages int }{
		{500, 2027, 1}, {500, 25259, 1}, {500, 9588, 1}, {500, 1000, 1}, {500, 999, 1}, {500, 1001, 1},
		{500, 800, 1}, {500, 4000, 1}, {40, 200, 1},
	} {
		cfg := maxrate.Config{Start: tc.start, Bracket: maxrate.Bracket{Low: tc.low, High: tc.low + 1}}
		from := warmupRate(cfg)
		if from < tc.start || from > tc.low {
			t.Errorf("start %d, bracket from %d: warms up at %d, want between them", tc.start, tc.low, from)
		}
		if got := len(climbStages(from, tc.low, time.Second)); got != tc.stages {
			t.Errorf("start %d, bracket from %d: warms up at %d and climbs in %d doublings, want %d", tc.start, tc.low, from, got, tc.stages)
		}
	}
	if got := warmupRate(maxrate.Config{Start: 500}); got != 500 {
		t.Errorf("an odd search warms up at %d rps, want its first rate 500", got)
	}
}

// warmingJIT is a target of 8 slots × 50 ms (160 rps) whose JIT starts compiling the first time
// more than 6 requests are in flight, and compiles for compile: meanwhile its requests take
// 100 ms (80 rps), and the jitCompileMs of its health answer (any path but /x) grows a second a
// second, as a JVM's did through the ramp that broke it.
type warmingJIT struct {
	compile  time.Duration
	slots    chan struct{}
	inFlight atomic.Int64
	mu       sync.Mutex
	began    time.Time // of the compiling; zero before
}

func newWarmingJIT(compile time.Duration) *warmingJIT {
	return &warmingJIT{compile: compile, slots: make(chan struct{}, 8)}
}

// compiled is the JIT's compilation time so far, and whether it is compiling now.
func (j *warmingJIT) compiled() (time.Duration, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.began.IsZero() {
		return 0, false
	}
	busy := time.Since(j.began)
	return min(busy, j.compile), busy < j.compile
}

func (j *warmingJIT) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/x" {
		busy, _ := j.compiled()
		fmt.Fprintf(w, `{"status":"UP","jitCompileMs":%d}`, busy.Milliseconds())
		return
	}
	if j.inFlight.Add(1) > 6 {
		j.mu.Lock()
		if j.began.IsZero() {
			j.began = time.Now()
		}
		j.mu.Unlock()
	}
	defer j.inFlight.Add(-1)
	j.slots <- struct{}{}
	service := 50 * time.Millisecond
	if _, compiling := j.compiled(); compiling {
		service *= 2
	}
	time.Sleep(service)
	<-j.slots
	io.WriteString(w, `{"id":1}`)
}

// A ramp broken while the target's JIT compiled through its failing seconds is run again once the
// target has recovered, from the recovery's rate, and its bracket is the second ramp's: the JIT
// done, the target's 160 rps lie inside it, not above it. A JIT that compiles on breaks two
// ramps and no more; the search goes on from the second's bracket.
func TestARampBrokenWhileTheJITCompilesIsRunAgain(t *testing.T) {
	for _, c := range []struct {
		name    string
		compile time.Duration
		ramps   int
	}{{"compiling for 5 s", 5 * time.Second, 2}, {"compiling on", time.Hour, 2}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			jit := newWarmingJIT(c.compile)
			l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": jit.ServeHTTP}},
				src: &steadyUsage{}, health: `{"status":"UP","jitCompileMs":0}`}
			log := &strings.Builder{}
			var rows []results.Row
			var kept []timeline.Cell
			r := &Runner{Lifecycle: l, Log: log, Record: func(row results.Row) error { rows = append(rows, row); return nil },
				Unmeasured: func(c timeline.Cell) error { kept = append(kept, c); return nil }}
			m := MaxSearch{SLO: maxrate.SLO{P99: 200 * time.Millisecond, MaxErrors: 0.01}, Ramp: 2 * time.Second,
				Search: maxrate.Config{Start: 20, Resolution: maxrate.Resolution{RPS: 20}, Limit: 1280}, Step: 500 * time.Millisecond}
			found, err := r.FindMax(context.Background(), planFor("t"), m)
			if err != nil {
				t.Fatal(err)
			}
			o := found[0]
			t.Logf("bracket %v: max %d, steps %v\n%s", o.Bracket, o.Max, stepRates(o.Steps), log)
			if got := strings.Count(log.String(), "ramping from "); got != c.ramps {
				t.Fatalf("%d ramps, want %d", got, c.ramps)
			}
			if !strings.Contains(log.String(), "the target's JIT compiled for ") {
				t.Error("the log does not say the JIT compiled through the ramp's failing seconds")
			}
			recovered := strings.Index(log.String(), "half the last rate met")
			second := strings.LastIndex(log.String(), "ramping from ")
			if recovered < 0 || recovered > second {
				t.Error("the second ramp did not wait for the target to recover")
			}
			stillCompiling := strings.Contains(log.String(), "its JIT still compiling after 2 ramps")
			if forever := c.compile == time.Hour; stillCompiling != forever {
				t.Errorf("the log says the JIT was still compiling after the last ramp: %v, want %v", stillCompiling, forever)
			}
			if c.compile < time.Hour && o.Bracket.High <= 160 {
				t.Errorf("bracket %v: want the second ramp's, above the warm target's 160 rps", o.Bracket)
			}
			checkKeptRamps(t, kept, rows[0].Scenario, c.ramps, 1280)
		})
	}
}

// checkKeptRamps checks the cells a search's ramps were kept as (Runner.Unmeasured): one a ramp,
// in order, keyed by its scenario's ramp, the search and the rate it rose towards, its seconds
// the unmeasured ones, rising from its first second and ending in the seconds that broke it.
func checkKeptRamps(t *testing.T, kept []timeline.Cell, scenario string, ramps, towards int) {
	t.Helper()
	if len(kept) != ramps {
		t.Fatalf("%d ramps kept, want %d", len(kept), ramps)
	}
	for i, c := range kept {
		want := timeline.Key{Scenario: fmt.Sprintf("%s.ramp-%d", scenario, i+1), Target: "t", Trial: 1, RequestedRPS: towards}
		if c.Key != want {
			t.Errorf("ramp %d kept as %+v, want %+v", i+1, c.Key, want)
		}
		if len(c.Measure) > 0 || len(c.Warmup) < maxrate.RampBreak {
			t.Errorf("ramp %d kept %d measured and %d unmeasured seconds, want none measured and %d or more unmeasured", i+1, len(c.Measure), len(c.Warmup), maxrate.RampBreak)
			continue
		}
		// After the ramp's last second come those in which its last requests were answered.
		first, most := c.Warmup[0], int64(0)
		var over bool
		for _, s := range c.Warmup {
			over, most = over || s.P99 > 200*time.Millisecond, max(most, s.Due)
		}
		if first.Index != 0 || first.Due >= most || !over {
			t.Errorf("ramp %d's seconds: from second %d, due %d, up to %d due in a second, some over the SLO %v: want from second 0, rising, some over",
				i+1, first.Index, first.Due, most, over)
		}
	}
}
