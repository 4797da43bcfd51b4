package bench

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
)

// serverLifecycle is fakeLifecycle with database servers, and the order of what it did.
type serverLifecycle struct {
	fakeLifecycle
	events []string
	// dbFails makes every server start fail; db counts the rows the server holds.
	dbFails bool
	db      func() int64
}

func (s *serverLifecycle) Start(ctx context.Context, spec container.Spec) (container.Instance, error) {
	s.events = append(s.events, "start "+spec.Target+" DATABASE_URL="+spec.Env["DATABASE_URL"]+" DB_POOL_SIZE="+spec.Env["DB_POOL_SIZE"])
	inst, err := s.fakeLifecycle.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &loggedInstance{inst, s}, nil
}

type loggedInstance struct {
	container.Instance
	s *serverLifecycle
}

func (i *loggedInstance) Remove(ctx context.Context) error {
	i.s.events = append(i.s.events, "remove target")
	return i.Instance.Remove(ctx)
}

func (s *serverLifecycle) StartDatabase(_ context.Context, spec container.DBSpec) (container.Database, error) {
	s.events = append(s.events, "start server "+spec.Target+" on "+spec.CPUSet)
	if s.dbFails {
		return nil, errors.New("the database of t: the container exited (code 1) before the server accepted logins")
	}
	return &fakeDatabase{s: s}, nil
}

type fakeDatabase struct{ s *serverLifecycle }

func (d *fakeDatabase) URL() string { return "postgresql://iot:pw@127.0.0.1:18080/iot" }
func (d *fakeDatabase) CountRows(context.Context) (int64, error) {
	return d.s.db(), nil
}
func (d *fakeDatabase) Resources() (resources.Source, error) {
	return nil, errors.New("no cgroup in this test")
}
func (d *fakeDatabase) Logs(context.Context, int) string { return "server log" }
func (d *fakeDatabase) Remove(context.Context) error {
	d.s.events = append(d.s.events, "remove server")
	return nil
}

// TestCellOnPostgres runs one storing cell on a database server: the server starts first and
// its address reaches the target, both are removed (target first) whatever happens, and the rows
// are counted in the server as well as through /stats.
func TestCellOnPostgres(t *testing.T) {
	const url = "DATABASE_URL=postgresql://iot:pw@127.0.0.1:18080/iot DB_POOL_SIZE=20"
	cases := []struct {
		name string
		// intoServer: the target's writes reach the server (else it stores elsewhere).
		intoServer, dbFails, targetFails bool
		events                           []string
		reason                           string // "" = measured, with the server's rows
	}{
		{"stores into the server", true, false, false,
			[]string{"start server t on 1", "start t " + url, "remove target", "remove server"}, ""},
		{"stores elsewhere", false, false, false,
			[]string{"start server t on 1", "start t " + url, "remove target", "remove server"},
			string(fault.VerifyFailed) + ": the rows the database server counts grew by 0 (50 → 50), want 3"},
		{"server does not start", true, true, false,
			[]string{"start server t on 1"},
			string(fault.StartFailed) + ": the database of t: the container exited (code 1) before the server accepted logins"},
		{"target does not start", true, false, true,
			[]string{"start server t on 1", "start t " + url, "remove server"},
			string(fault.StartFailed) + ": the container exited (code 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := &store{delay: 25 * time.Millisecond}
			s := &serverLifecycle{dbFails: c.dbFails}
			s.db = func() int64 {
				if !c.intoServer {
					return 50
				}
				target.mu.Lock()
				defer target.mu.Unlock()
				return 50 + target.rows
			}
			if !c.targetFails {
				s.handler = map[string]http.HandlerFunc{"t": target.ServeHTTP}
			}
			p := planFor("t")
			check := &p.Cells[0].Load.Check
			check.JSONFields, check.ContentType, check.StoresRows = []string{"id"}, "application/json", true
			p.Cells[0].Spec.Env = map[string]string{"DB_POOL_SIZE": "20"}
			p.Cells[0].DB = plan.Database{Kind: "postgres", PoolSize: 20, Build: container.BuildSpec{Context: "db/postgres"},
				Spec: container.DBSpec{Target: "t", Port: 18080, CPUSet: "1"}}
			p.Builds = append(p.Builds, p.Cells[0].DB.Build)
			var log strings.Builder
			var rows []results.Row
			r := &Runner{Lifecycle: s, Log: &log, Record: func(row results.Row) error { rows = append(rows, row); return nil }}
			if _, err := r.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if strings.Join(s.events, "\n") != strings.Join(c.events, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(s.events, "\n"), strings.Join(c.events, "\n"))
			}
			row := rows[0]
			if row.DB != "postgres" || row.DBPoolSize != 20 || row.DBCPUSet != "1" || row.DBImageID != "sha256:iotbench/postgres:latest" {
				t.Errorf("row settings db=%q pool=%d cpuset=%q image=%q", row.DB, row.DBPoolSize, row.DBCPUSet, row.DBImageID)
			}
			if c.reason != "" {
				if row.Valid || !strings.HasPrefix(row.InvalidReason, c.reason) {
					t.Errorf("reason %q, want it to start with %q", row.InvalidReason, c.reason)
				}
				return
			}
			if row.Successes == 0 || row.DBRowsStored < row.Successes || row.DBRowsStored > row.Requests {
				t.Errorf("the server counted %d new rows for %d successes of %d requests (%s)", row.DBRowsStored, row.Successes, row.Requests, row.InvalidReason)
			}
			if !strings.Contains(row.Warnings, "database server resources not measured") {
				t.Errorf("warnings %q: a server whose cgroup cannot be read must say so", row.Warnings)
			}
		})
	}
}

// TestVerifyHoldsStatsToTheServer: iotbench verify on a server fails a target whose /stats counts
// other rows than the server holds.
func TestVerifyHoldsStatsToTheServer(t *testing.T) {
	for _, intoServer := range []bool{true, false} {
		target := &store{}
		s := &serverLifecycle{}
		s.handler = map[string]http.HandlerFunc{"t": target.ServeHTTP}
		s.db = func() int64 {
			if intoServer {
				return 0
			}
			return 7
		}
		p := planFor("t")
		p.Cells[0].DB = plan.Database{Kind: "postgres", PoolSize: 10, Build: container.BuildSpec{Context: "db/postgres"}, Spec: container.DBSpec{Target: "t"}}
		p.Builds = append(p.Builds, p.Cells[0].DB.Build)
		var log strings.Builder
		r := &Runner{Lifecycle: s, Log: &log}
		failed, err := r.Verify(context.Background(), p, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "FAIL the rows are in the database server: /stats counts 0 rows, the database server 7"
		if intoServer {
			want = "ok   the rows are in the database server"
		}
		if len(failed) == map[bool]int{true: 0, false: 1}[intoServer] && strings.Contains(log.String(), want) {
			continue
		}
		t.Errorf("into the server %v: failed %v, log:\n%s\nwant %q", intoServer, failed, log.String(), want)
	}
}
