package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
)

// dyingLifecycle starts targets whose container "dies" after a number of requests: from then on
// they refuse connections, and Fate says how they ended.
type dyingLifecycle struct {
	fakeLifecycle
	after int64 // requests served before dying
	fate  container.Fate
	// oomBefore is the cgroup's oom_kill count when the target started.
	oomBefore int64
	// failBuild names a build context whose build fails.
	failBuild string
}

func (d *dyingLifecycle) Build(ctx context.Context, b container.BuildSpec, w io.Writer) (string, error) {
	if b.Context == d.failBuild {
		return "", errors.New("building " + b.Tag() + " failed: exit 1\nlast lines of the build:\nStep 3/9 : RUN mvn package\n[ERROR] no such artifact")
	}
	return d.fakeLifecycle.Build(ctx, b, w)
}

func (d *dyingLifecycle) Start(ctx context.Context, s container.Spec) (container.Instance, error) {
	var served atomic.Int64
	dying := &dyingInstance{d: d}
	d.handler = map[string]http.HandlerFunc{s.Target: func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) > d.after {
			dying.died.CompareAndSwap(nil, ptr(time.Now()))
			// A dead process: the connection is dropped without an answer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
		}
		ok(w, r)
	}}
	inst, err := d.fakeLifecycle.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	dying.fakeInstance = inst.(*fakeInstance)
	return dying, nil
}

func ptr[T any](v T) *T { return &v }

type dyingInstance struct {
	*fakeInstance
	d    *dyingLifecycle
	died atomic.Pointer[time.Time]
}

func (i *dyingInstance) Fate(context.Context) (container.Fate, error) {
	at := i.died.Load()
	if at == nil {
		return container.Fate{Running: true, OOMKills: i.d.oomBefore}, nil
	}
	f := i.d.fate
	f.FinishedAt = *at
	return f, nil
}

func (i *dyingInstance) Logs(context.Context, int) string { return "line 1\nKilled" }

// The instance's resources read as a container's do: until it dies, when its cgroup goes.
func (i *dyingInstance) Resources() (resources.Source, error) { return dyingCgroup{i}, nil }
func (i *dyingInstance) Startup() time.Duration               { return time.Second }
func (i *dyingInstance) ImageSize() int64                     { return 1 << 20 }
func (i *dyingInstance) Signals() string                      { return "" }

type dyingCgroup struct{ i *dyingInstance }

func (c dyingCgroup) Sample() (resources.Sample, error) {
	if c.i.died.Load() != nil {
		return resources.Sample{}, errors.New("its cgroup is gone")
	}
	return resources.Sample{At: time.Now(), Memory: 1 << 20}, nil
}

func TestAFailedTargetIsExplained(t *testing.T) {
	cases := []struct {
		name  string
		after int64
		fate  container.Fate
		want  string // the start of invalid_reason
	}{
		{"OOM-killed while measured", 30, container.Fate{OOMKilled: true, ExitCode: 137, OOMKills: 1},
			"target OOM-killed at its 1 GiB limit 0."},
		{"exits while measured", 30, container.Fate{ExitCode: 3, OOMKills: 0},
			"target exited with code 3 0."},
		{"stopped by its engine's restart", 30, container.Fate{ExitCode: 0, OOMKills: 0, EngineRestarted: true},
			"the Docker engine restarted 0."},
		{"OOM-killed by its cgroup's count alone", 30, container.Fate{ExitCode: 137, OOMKills: 2},
			"target OOM-killed at its 1 GiB limit"},
		{"dies during verification", 1, container.Fate{OOMKilled: true, ExitCode: 137, OOMKills: 1},
			string(fault.VerifyFailed) + ": target OOM-killed at its 1 GiB limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// 100 rps for 1 s after a 200 ms warm-up: about 20 warm-up requests, so 30 dies
			// early in the measured phase.
			d := &dyingLifecycle{after: c.after, fate: c.fate}
			p := planFor("t")
			p.Cells[0].Spec.Memory = 1 << 30
			p.Cells[0].Load.Warmup = 200 * time.Millisecond
			logs := t.TempDir()
			var rows []results.Row
			r := &Runner{Lifecycle: d, Log: io.Discard, LogDir: filepath.Join(logs, "run.logs"),
				Record: func(row results.Row) error { rows = append(rows, row); return nil }}
			if _, err := r.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			row := rows[0]
			if row.Valid || !strings.HasPrefix(row.InvalidReason, c.want) {
				t.Errorf("valid=%v reason %q, want it to start with %q", row.Valid, row.InvalidReason, c.want)
			}
			// The cause says why the target's resources could not be read to the end.
			if strings.Contains(row.Warnings, "resources not measured") {
				t.Errorf("warnings %q beside the named cause", row.Warnings)
			}
			if row.LogFile != filepath.Join("run.logs", "s.t.1.log") {
				t.Fatalf("log_file %q", row.LogFile)
			}
			if got, err := os.ReadFile(filepath.Join(logs, row.LogFile)); err != nil || !strings.Contains(string(got), "Killed") {
				t.Errorf("kept log %q, %v", got, err)
			}
			if d.started != d.removed {
				t.Errorf("started %d, removed %d", d.started, d.removed)
			}
		})
	}
}

func TestAProcessKilledInsideARunningTargetIsNamed(t *testing.T) {
	// A cluster worker killed for memory while the container runs on: its cgroup's count grows.
	l := &countingFate{}
	l.handler = map[string]http.HandlerFunc{"t": func(w http.ResponseWriter, req *http.Request) {
		l.kills.Store(2)
		ok(w, req)
	}}
	l.kills.Store(1) // one kill before this cell: not the cell's
	p := planFor("t")
	p.Cells[0].Spec.Memory = 512 << 20
	var rows []results.Row
	r := &Runner{Lifecycle: l, Log: io.Discard, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want := "a process of the target was OOM-killed at its 512 MiB limit (1 kill(s)); the target still runs"
	if rows[0].Valid || !strings.HasPrefix(rows[0].InvalidReason, want) {
		t.Errorf("valid=%v reason %q, want %q", rows[0].Valid, rows[0].InvalidReason, want)
	}
}

// countingFate is a lifecycle whose targets keep running while their oom_kill count is whatever
// the test stores.
type countingFate struct {
	fakeLifecycle
	kills atomic.Int64
}

func (c *countingFate) Start(ctx context.Context, s container.Spec) (container.Instance, error) {
	inst, err := c.fakeLifecycle.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	return countingInstance{inst.(*fakeInstance), c}, nil
}

type countingInstance struct {
	*fakeInstance
	c *countingFate
}

func (i countingInstance) Fate(context.Context) (container.Fate, error) {
	return container.Fate{Running: true, OOMKills: i.c.kills.Load()}, nil
}

func TestAFailedBuildCostsOnlyItsTarget(t *testing.T) {
	d := &dyingLifecycle{after: 1 << 40, failBuild: "targets/broken"}
	p := planFor("good", "broken")
	p.Cells = append(p.Cells, p.Cells[1])
	p.Cells[2].Trial = 2
	var rows []results.Row
	r := &Runner{Lifecycle: d, Log: io.Discard, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want one per cell", len(rows))
	}
	for _, row := range rows {
		switch row.Target {
		case "good":
			if row.Requests == 0 || !row.Loaded() {
				t.Errorf("the other target was not measured: %+v", row)
			}
		case "broken":
			want := string(fault.BuildFailed) + ": building iotbench/broken:latest failed: exit 1 | last lines of the build: | Step 3/9 : RUN mvn package | [ERROR] no such artifact"
			if row.Valid || row.InvalidReason != want || row.Loaded() || row.Requests != 0 {
				t.Errorf("broken trial %d: reason %q, want %q", row.Trial, row.InvalidReason, want)
			}
		}
	}
	if d.started != 1 {
		t.Errorf("%d containers started, want only the one that built", d.started)
	}
}

func TestATargetThatCannotStartIsSkippedAfterTwoTries(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{}} // every start fails
	p := planFor("down")
	for trial := 2; trial <= 4; trial++ {
		c := p.Cells[0]
		c.Trial = trial
		p.Cells = append(p.Cells, c)
	}
	rows, _, _, err := run(t, f, p, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, row := range rows {
		reasons = append(reasons, strings.SplitN(row.InvalidReason, ":", 2)[0])
	}
	if got := strings.Join(reasons, ","); got != "start-failed,start-failed,skipped,skipped" {
		t.Errorf("reasons %s, want two failed starts then the target skipped", got)
	}
}

func TestResumeSkipsRecordedCellsAndRefusesOtherSettings(t *testing.T) {
	p := planFor("a", "b")
	for _, t := range []string{"a", "b"} {
		c := p.Cells[0]
		c.Target, c.Trial, c.Spec.Target, c.Build.Context = t, 2, t, "targets/"+t
		p.Cells = append(p.Cells, c)
	}
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"a": ok, "b": ok}}
	const seed = 7
	// The first run is cut after two cells.
	var first []results.Row
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{Lifecycle: f, Log: io.Discard, Seed: seed, Record: func(row results.Row) error {
		first = append(first, row)
		if len(first) == 2 {
			cancel()
		}
		return nil
	}}
	if _, err := r.Run(ctx, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("cut run: %v", err)
	}
	var order []string
	for _, c := range ordered(p.Cells, seed) {
		order = append(order, c.Target+"/"+string(rune('0'+c.Trial)))
	}
	var second []results.Row
	r = &Runner{Lifecycle: f, Log: io.Discard, Seed: seed, Resumed: first, Record: func(row results.Row) error { second = append(second, row); return nil }}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range append(first, second...) {
		got = append(got, row.Target+"/"+string(rune('0'+row.Trial)))
	}
	if strings.Join(got, " ") != strings.Join(order, " ") {
		t.Errorf("cells measured %v, want each once in the seeded order %v", got, order)
	}

	longer := planFor("a", "b")
	longer.Cells = append(longer.Cells, p.Cells[2:]...)
	for i := range longer.Cells {
		longer.Cells[i].Load.Duration = 2 * time.Second
	}
	for _, c := range []struct {
		name string
		p    *plan.Plan
		seed int64
		want string
	}{
		{"other settings", longer, seed, "was measured with duration_s 1; this run would use 2"},
		{"other cells", planFor("a"), seed, "which this run does not plan"},
		{"another seed", p, seed + 1, "ordered by seed 7, this run by 8"},
	} {
		r = &Runner{Lifecycle: f, Log: io.Discard, Seed: c.seed, Resumed: first, Record: func(results.Row) error { return nil }}
		_, err := r.Run(context.Background(), c.p)
		var re *ResumeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a ResumeError saying %q", c.name, err, c.want)
		}
	}
}

// TestResumePairedRunWithAddedRounds: a paired run whose --until added rounds, cut in an added
// round, resumes with those rounds planned again, each side of each round measured once.
func TestResumePairedRunWithAddedRounds(t *testing.T) {
	f := &fakeLifecycle{handler: map[string]http.HandlerFunc{"a": ok}}
	const seed = 3
	pairedPlan := func() *plan.Plan {
		p, err := plan.Pair(planFor("a"), planFor("a"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	more := func(rows []results.Row) bool { return len(rows) < 6 } // three rounds in all
	var first []results.Row
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{Lifecycle: f, Log: io.Discard, Seed: seed, More: more, Record: func(row results.Row) error {
		first = append(first, row)
		if len(first) == 3 { // the first side of the first added round
			cancel()
		}
		return nil
	}}
	if _, err := r.Run(ctx, pairedPlan()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cut run: %v", err)
	}
	var second []results.Row
	r = &Runner{Lifecycle: f, Log: io.Discard, Seed: seed, More: more, Resumed: first, Record: func(row results.Row) error { second = append(second, row); return nil }}
	if _, err := r.Run(context.Background(), pairedPlan()); err != nil {
		t.Fatalf("resumed: %v", err)
	}
	seen := map[string]int{}
	for _, row := range append(first, second...) {
		seen[fmt.Sprintf("%s%d", row.Variant, row.Trial)]++
	}
	if len(first) != 3 || len(second) != 3 || len(seen) != 6 {
		t.Errorf("first %d rows, then %d; measured %v; want each side of rounds 1–3 once", len(first), len(second), seen)
	}
}

// A failed cell names a kept log only when there is a log: a container's start error carries its
// last lines, which are kept beside the results; a service iotbench did not start has none, so
// nothing is written or named, whether nothing listened at its address or it answered badly.
func TestOnlyALogIsKept(t *testing.T) {
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := "http://" + refusing.Addr().String()
	refusing.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer failing.Close()
	for _, c := range []struct {
		name string
		lc   container.Lifecycle
		kept string // a line of the kept log; empty: none kept
	}{
		{"a container that exits as it starts", &fakeLifecycle{}, "boom"},
		{"a service nothing listens at", container.Running{BaseURL: nothing}, ""},
		{"a service answering 500", container.Running{BaseURL: failing.URL}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := t.TempDir()
			var rows []results.Row
			var log strings.Builder
			r := &Runner{Lifecycle: c.lc, Log: &log, LogDir: filepath.Join(logs, "run.logs"),
				Record: func(row results.Row) error { rows = append(rows, row); return nil }}
			if _, err := r.Run(context.Background(), planFor("t")); err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Valid {
				t.Fatalf("rows %+v, want one, invalid", rows)
			}
			row := rows[0]
			named := strings.Contains(log.String(), "the target's last log lines")
			if c.kept == "" {
				if row.LogFile != "" || named {
					t.Errorf("log_file %q, the log names one: %v; want none kept:\n%s", row.LogFile, named, log.String())
				}
				if entries, _ := os.ReadDir(filepath.Join(logs, "run.logs")); len(entries) > 0 {
					t.Errorf("%d files written beside the results, want none", len(entries))
				}
				return
			}
			if got, err := os.ReadFile(filepath.Join(logs, row.LogFile)); row.LogFile == "" || !named || err != nil || !strings.Contains(string(got), c.kept) {
				t.Errorf("log_file %q (named in the log: %v) holds %q, %v; want %q kept", row.LogFile, named, got, err, c.kept)
			}
		})
	}
}
