package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/verify"
)

// fakeLifecycle starts in-process servers in place of containers, and counts what it removes.
type fakeLifecycle struct {
	mu      sync.Mutex
	handler map[string]http.HandlerFunc // by target; missing: the start fails
	started int
	removed int
	built   []string
	// machine is where the disturbance check reads CPU time: nil, a quiet machine of two CPUs whose
	// counters never move, so that no test hangs on this host's neighbours or its hypervisor.
	machine *resources.Host
	// accepted counts the connections the targets accepted.
	accepted atomic.Int64
}

func (f *fakeLifecycle) Machine() resources.Host {
	if f.machine != nil {
		return *f.machine
	}
	return resources.Host{CgroupRoot: "testdata/quiet-machine", ProcStat: "testdata/quiet-machine/stat"}
}

func (f *fakeLifecycle) Build(_ context.Context, b container.BuildSpec, _ io.Writer) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.built = append(f.built, b.Tag())
	return "sha256:" + b.Tag(), nil
}

func (f *fakeLifecycle) Start(_ context.Context, s container.Spec) (container.Instance, error) {
	h, ok := f.handler[s.Target]
	if !ok {
		return nil, errors.New("the container exited (code 1)\nlast lines: boom")
	}
	f.mu.Lock()
	f.started++
	f.mu.Unlock()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.accepted.Add(1)
		}
	}
	srv.Start()
	return &fakeInstance{srv: srv, f: f}, nil
}

type fakeInstance struct {
	srv *httptest.Server
	f   *fakeLifecycle
}

func (i *fakeInstance) URL() string                      { return i.srv.URL }
func (i *fakeInstance) Health() []byte                   { return []byte(`{"status":"UP"}`) }
func (i *fakeInstance) Logs(context.Context, int) string { return "log line" }
func (i *fakeInstance) Remove(context.Context) error {
	i.srv.Close()
	i.f.mu.Lock()
	i.f.removed++
	i.f.mu.Unlock()
	return nil
}

// ok is a healthy target with a 50 ms service time, long enough that scheduling jitter of a busy
// test machine stays well inside the generator's lag allowance.
func ok(w http.ResponseWriter, _ *http.Request) {
	time.Sleep(50 * time.Millisecond)
	io.WriteString(w, `{"id":1}`)
}

// planFor plans one short open-loop cell per target.
func planFor(targets ...string) *plan.Plan {
	p := &plan.Plan{GeneratorCPUs: []int{0}, Memory: "1g"}
	for i, t := range targets {
		p.Cells = append(p.Cells, plan.Cell{
			Scenario: "s", Target: t, Trial: 1, Build: container.BuildSpec{Context: "targets/" + t},
			Spec: container.Spec{Target: t, CPUSet: "1"}, Path: "/x",
			Load: load.Config{
				Request: load.Request{Method: "GET"}, Check: load.NewCheck(`"id"`),
				Model: load.Model{Rate: 100, ExpectedLatency: 50 * time.Millisecond}, Duration: time.Second, Timeout: time.Second,
			},
		})
		if i == 0 || p.Cells[i].Build.Tag() != p.Cells[i-1].Build.Tag() {
			p.Builds = append(p.Builds, p.Cells[i].Build)
		}
	}
	return p
}

func run(t *testing.T, f *fakeLifecycle, p *plan.Plan, ctx context.Context) ([]results.Row, []results.Row, string, error) {
	t.Helper()
	var recorded []results.Row
	var log strings.Builder
	r := &Runner{
		Lifecycle: f, Log: &log,
		Record: func(row results.Row) error { recorded = append(recorded, row); return nil },
		Meta:   Meta{Version: "test"},
	}
	rows, err := r.Run(ctx, p)
	return rows, recorded, log.String(), err
}

func TestEveryCellIsRecordedAndRemoved(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{
		"good":   ok,
		"broken": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) },
	}}
	p := planFor("good", "broken", "crashing")
	rows, recorded, log, err := run(t, f, p, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || len(recorded) != 3 {
		t.Fatalf("%d rows, %d recorded, want 3 each", len(rows), len(recorded))
	}
	// Targets take turns in a shuffled order: find each one's row.
	byTarget := map[string]results.Row{}
	for _, r := range rows {
		byTarget[r.Target] = r
	}
	// The good cell's validity also depends on this machine's timing (the engine's tests cover
	// that); here it must have been measured, error-free.
	if r := byTarget["good"]; r.SuccessRatio != 1 || r.Requests < 90 || r.ImageID != "sha256:iotbench/good:latest" || r.GeneratorCPUSet != "0" || r.Version != "test" || r.TargetRuntime != `{"status":"UP"}` {
		t.Errorf("good row: %+v", r)
	}
	for name, reason := range map[string]string{"broken": string(fault.VerifyFailed) + ": ", "crashing": string(fault.StartFailed) + ": the container exited (code 1)"} {
		if r := byTarget[name]; r.Valid || !strings.Contains(r.InvalidReason, reason) {
			t.Errorf("row %s: valid=%v reason=%q, want invalid with %q", r.Target, r.Valid, r.InvalidReason, reason)
		}
	}
	if f.started != f.removed {
		t.Errorf("started %d targets, removed %d", f.started, f.removed)
	}
	if !strings.Contains(log, "log line") {
		t.Errorf("the failed verification did not show the target's log:\n%s", log)
	}
	if len(f.built) != 3 {
		t.Errorf("built %v, want each distinct context once", f.built)
	}
}

func TestCancelledRunStillRemovesTheTarget(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"good": ok}}
	p := planFor("good")
	p.Cells[0].Load.Duration = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, recorded, _, err := run(t, f, p, ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the cancellation", err)
	}
	if len(recorded) != 0 {
		t.Errorf("recorded %d rows for an interrupted cell", len(recorded))
	}
	if f.started != 1 || f.removed != 1 {
		t.Errorf("started %d, removed %d: the interrupted target was left behind", f.started, f.removed)
	}
}

func TestBuildProgressShowsOnlyStepsThatRun(t *testing.T) {
	var out strings.Builder
	w := &stepLines{w: &out}
	io.WriteString(w, "Step 1/3 : FROM debian:trixie\n ---> c1297cbae173\nStep 2/3 : RUN apt-get upd")
	io.WriteString(w, "ate\n ---> Using cache\n ---> 2ab\nStep 3/3 : COPY src ./src\n ---> 9f1\n")
	if got, want := out.String(), "  Step 1/3 : FROM debian:trixie\n  Step 3/3 : COPY src ./src\n"; got != want {
		t.Errorf("progress:\n%q\nwant:\n%q", got, want)
	}
}

// slowBuilds builds each image in 200 ms, recording which overlapped.
type slowBuilds struct {
	fakeLifecycle
	building map[string]bool // by tag, those under way
	overlaps [][2]string     // tags built at the same time, the later one second
	most     int
}

func (s *slowBuilds) Build(ctx context.Context, b container.BuildSpec, w io.Writer) (string, error) {
	s.mu.Lock()
	for other := range s.building {
		s.overlaps = append(s.overlaps, [2]string{other, b.Tag()})
	}
	s.building[b.Tag()] = true
	s.most = max(s.most, len(s.building))
	s.mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	s.mu.Lock()
	delete(s.building, b.Tag())
	s.mu.Unlock()
	return s.fakeLifecycle.Build(ctx, b, w)
}

func TestImagesBuildSideBySideAfterTheirContextsFirst(t *testing.T) {
	// Two JVM images, three JS images, a database's: buildsAtOnce at a time, and no image of a
	// context beside that context's first (whose layers the others reuse once it is done).
	p := &plan.Plan{Builds: []container.BuildSpec{
		{Context: "targets/jvm", Dockerfile: "spring-mvc/Dockerfile"},
		{Context: "targets/js", Dockerfile: "fastify/Dockerfile"},
		{Context: "targets/jvm", Dockerfile: "javalin/Dockerfile"},
		{Context: "targets/js", Dockerfile: "koa/Dockerfile"},
		{Context: "targets/js", Dockerfile: "express/Dockerfile"},
		{Context: "db/postgres"},
	}}
	s := &slowBuilds{building: map[string]bool{}}
	var log strings.Builder
	r := &Runner{Lifecycle: s, Log: &log}
	b, err := r.build(context.Background(), p)
	if err != nil || len(b.ids) != len(p.Builds) || len(b.failed) != 0 {
		t.Fatalf("built %v, failed %v, err %v: want all %d", b.ids, b.failed, err, len(p.Builds))
	}
	if s.most != buildsAtOnce {
		t.Errorf("at most %d builds at once, want %d", s.most, buildsAtOnce)
	}
	firsts := map[string]bool{"iotbench/jvm-spring-mvc:latest": true, "iotbench/js-fastify:latest": true, "iotbench/postgres:latest": true}
	folder := func(tag string) string { return strings.Split(strings.TrimPrefix(tag, "iotbench/"), "-")[0] }
	for _, o := range s.overlaps {
		if folder(o[0]) == folder(o[1]) && (firsts[o[0]] || firsts[o[1]]) {
			t.Errorf("%s and %s built at the same time, one of them its context's first", o[0], o[1])
		}
	}
	for i, spec := range p.Builds {
		if !strings.Contains(log.String(), fmt.Sprintf("build %d/%d: %s from %s\n", i+1, len(p.Builds), spec.Tag(), spec.Context)) {
			t.Errorf("the log does not name build %d:\n%s", i+1, log.String())
		}
	}
}

func TestCancelledBuildsStopAtTheNextImage(t *testing.T) {
	// One context: its first image (0–200 ms), then two of its others side by side (200–400 ms),
	// cancelled at 300 ms: the last is not begun.
	p := &plan.Plan{Builds: []container.BuildSpec{
		{Context: "targets/jvm", Dockerfile: "spring-mvc/Dockerfile"},
		{Context: "targets/jvm", Dockerfile: "javalin/Dockerfile"},
		{Context: "targets/jvm", Dockerfile: "ktor/Dockerfile"},
		{Context: "targets/jvm", Dockerfile: "webflux/Dockerfile"},
	}}
	s := &slowBuilds{building: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := (&Runner{Lifecycle: s, Log: io.Discard}).build(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the cancellation", err)
	}
	if len(s.built) == len(p.Builds) {
		t.Errorf("built %v after the cancellation, want the chain stopped", s.built)
	}
}

// store is a target of the ingest kind: POST stores a row (unless it stops storing after
// storeFirst writes, when storeFirst > 0) and answers after delay; GET /stats counts the rows.
type store struct {
	mu         sync.Mutex
	rows       int64
	writes     int64
	storeFirst int64
	delay      time.Duration
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path == "/stats" {
		fmt.Fprintf(w, `{"rows":%d}`, s.rows)
		return
	}
	s.writes++
	if s.storeFirst == 0 || s.writes <= s.storeFirst {
		s.rows++
	}
	s.mu.Unlock()
	time.Sleep(s.delay)
	s.mu.Lock()
	fmt.Fprintf(w, `{"id":%d,"processingMs":50}`, s.writes)
}

func TestVerificationAndStoredRows(t *testing.T) {
	ingest := load.Check{Contains: []string{`"id"`}, JSONFields: []string{"id", "processingMs"}, ContentType: "application/json",
		MinLatency: 20 * time.Millisecond, StoresRows: true}
	cases := []struct {
		name   string
		target *store
		expect load.Check
		want   string // in invalid_reason; empty: no verification or row problem
	}{
		{"stores every row", &store{delay: 25 * time.Millisecond}, ingest, ""},
		{"answers 200 without storing", &store{delay: 25 * time.Millisecond, storeFirst: -1}, ingest,
			string(fault.VerifyFailed) + ": /stats rows grew by 0"},
		// ≈30 warm-up writes, then it stores ≈30 of the ≈100 measured ones.
		{"stops storing under load", &store{delay: 25 * time.Millisecond, storeFirst: verify.Tries + 60}, ingest,
			"did not store"},
		{"skips the work", &store{}, ingest, string(fault.VerifyFailed) + ": POST"},
		{"not storing goes unseen where the scenario does not write", &store{delay: 25 * time.Millisecond, storeFirst: -1},
			load.NewCheck(`"id"`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": c.target.ServeHTTP}}
			p := planFor("t")
			p.Cells[0].Load.Check = c.expect
			p.Cells[0].Load.Request.Method = http.MethodPost
			p.Cells[0].Load.Warmup = 300 * time.Millisecond
			rows, _, _, err := run(t, f, p, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			reason := rows[0].InvalidReason
			if c.want == "" && (strings.HasPrefix(reason, string(fault.VerifyFailed)) || strings.Contains(reason, "stored rows")) ||
				c.want != "" && (rows[0].Valid || !strings.Contains(reason, c.want)) {
				t.Errorf("valid=%v reason=%q, want %q", rows[0].Valid, reason, c.want)
			}
			if strings.HasPrefix(c.want, string(fault.VerifyFailed)) && rows[0].Requests != 0 {
				t.Errorf("a target that failed verification was loaded: %d requests", rows[0].Requests)
			}
		})
	}
}

// TestMoreAddsRounds is --until's loop: the runner asks after the planned rounds, adds one round
// of both sides while told to, and stops when told.
func TestMoreAddsRounds(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"a": ok}}
	cand := planFor("a")
	base := planFor("a")
	p, err := plan.Pair(cand, base, 0)
	if err != nil {
		t.Fatal(err)
	}
	var asked []int
	r := &Runner{Lifecycle: f, Log: &strings.Builder{}, Record: func(results.Row) error { return nil },
		More: func(rows []results.Row) bool { asked = append(asked, len(rows)); return len(rows) < 6 }}
	rows, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(asked) != "[2 4 6]" || len(rows) != 6 || p.Rounds() != 3 {
		t.Fatalf("asked after %v rows, %d rows, %d rounds; want after 2, 4 and 6 rows, 6 rows in 3 rounds", asked, len(rows), p.Rounds())
	}
	seen := map[string]bool{}
	for _, row := range rows {
		seen[fmt.Sprintf("%s%d", row.Variant, row.Trial)] = true
	}
	if len(seen) != 6 {
		t.Errorf("rows %v: want base and candidate of rounds 1–3 once each", seen)
	}
}

// A warm-up until steady that runs to its most says so in its row: its figures were measured
// before the target settled. A fixed warm-up of the same length says nothing: it was asked for.
func TestAWarmupThatNeverSettledIsAWarning(t *testing.T) {
	for _, auto := range []bool{true, false} {
		f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}}
		p := planFor("t")
		// Shorter than SteadyWindow: no warm-up this long can be judged steady.
		p.Cells[0].Load.Warmup, p.Cells[0].Load.WarmupAuto = 2*time.Second, auto
		_, recorded, _, err := run(t, f, p, context.Background())
		if err != nil || len(recorded) != 1 {
			t.Fatalf("auto %v: %d rows, %v", auto, len(recorded), err)
		}
		warned := strings.Contains(recorded[0].Warnings, "the warm-up ran to its most (2s) and never settled: measured as it stood")
		if warned != auto || recorded[0].WarmupTaken < 2*time.Second {
			t.Errorf("auto %v: warm-up %v, warnings %q; want the warning only for a warm-up until steady", auto, recorded[0].WarmupTaken, recorded[0].Warnings)
		}
	}
}
