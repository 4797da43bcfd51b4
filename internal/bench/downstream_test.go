package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
)

// envLifecycle records the environment each target was started with.
type envLifecycle struct {
	fakeLifecycle
	mu  sync.Mutex
	env map[string]map[string]string
}

func (l *envLifecycle) Start(ctx context.Context, s container.Spec) (container.Instance, error) {
	l.mu.Lock()
	l.env[s.Target] = s.Env
	l.mu.Unlock()
	return l.fakeLifecycle.Start(ctx, s)
}

func (l *envLifecycle) downstreamURL(target string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.env[target]["DOWNSTREAM_URL"]
}

// A target's work calls the downstream service iotbench runs, never the target itself; a target
// whose answers claim calls it did not make is invalid.
func TestDownstreamIsGivenAndItsCallsHeldToTheSuccesses(t *testing.T) {
	l := &envLifecycle{env: map[string]map[string]string{}}
	l.handler = map[string]http.HandlerFunc{
		"honest": func(w http.ResponseWriter, r *http.Request) {
			resp, err := http.Get(l.downstreamURL("honest"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok(w, r)
		},
		"liar":  ok,
		"other": ok,
	}
	p := planFor("honest", "liar", "other")
	p.Cells[0].Load.Check.CallsDownstream, p.Cells[1].Load.Check.CallsDownstream = true, true
	var log strings.Builder
	var rows []results.Row
	r := &Runner{Lifecycle: l, Log: &log, Meta: Meta{Version: "test"},
		Record: func(row results.Row) error { rows = append(rows, row); return nil }}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if u := l.downstreamURL("honest"); !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/downstream") {
		t.Errorf("DOWNSTREAM_URL %q, want iotbench's service on loopback", u)
	}
	if u := l.downstreamURL("other"); u != "" {
		t.Errorf("a target whose work calls nothing got DOWNSTREAM_URL %q", u)
	}
	for _, row := range rows {
		switch row.Target {
		case "honest", "other":
			// A busy test machine may find its own generator late: that is not the downstream check.
			if !row.Valid && !strings.HasPrefix(row.InvalidReason, "generator ") || strings.Contains(row.InvalidReason, "downstream") {
				t.Errorf("%s: invalid: %s", row.Target, row.InvalidReason)
			}
		case "liar":
			if row.Valid || !strings.Contains(row.InvalidReason, "downstream: 0 calls for") {
				t.Errorf("liar: valid %v, reason %q; want invalid for calls it did not make", row.Valid, row.InvalidReason)
			}
		}
	}
	if r.downstream != nil {
		t.Error("the downstream service outlives the run")
	}
}

// scriptedDownstream is a downstream service whose tallies are scripted: each says the calls
// so far (one more for every tally, as a target calling it once a request would), and late,
// the overruns since the tally before; fail makes every tally fail.
type scriptedDownstream struct {
	mu     sync.Mutex
	calls  int64
	cpu    time.Duration
	late   time.Duration
	fail   bool
	closed bool
}

func (s *scriptedDownstream) URL() string { return "http://127.0.0.1:9/downstream" }

func (s *scriptedDownstream) Tally() (downstream.Tally, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return downstream.Tally{}, errors.New("the downstream helper did not answer: EOF")
	}
	s.calls += 1000
	s.cpu += time.Second
	return downstream.Tally{Calls: s.calls, CPU: s.cpu, Late: latency.Summary{Count: 1000, P99: s.late}}, nil
}

func (s *scriptedDownstream) Close() error { s.closed = true; return nil }

// The service the runner is given is the one its targets call: a phase is judged on its tally
// (calls held to the successes; overruns past the bar a generator's own delay is held to are
// the target's latency, said in a warning), one whose tally cannot be read decides nothing, and
// the log says where the service runs.
func TestTheDownstreamServiceIsJudgedByItsTally(t *testing.T) {
	for _, c := range []struct {
		name        string
		service     *scriptedDownstream
		warning     string // in the row's warnings; "" none of the downstream's
		invalidWith string // in the invalid reason; "" valid (or the generator's on a busy host)
	}{
		{"on time", &scriptedDownstream{late: 500 * time.Microsecond}, "", ""},
		{"late", &scriptedDownstream{late: 30 * time.Millisecond}, "the downstream service answered late: its 20.0 ms wait overran by 30.0 ms at p99 (over 1000 calls; ", ""},
		{"untold", &scriptedDownstream{fail: true}, "", "downstream: its calls could not be counted: the downstream helper did not answer: EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFor("t")
			p.Cells[0].Load.Check.CallsDownstream = true
			l := &fakeLifecycle{handler: map[string]http.HandlerFunc{"t": ok}}
			var log strings.Builder
			var rows []results.Row
			r := &Runner{Lifecycle: l, Log: &log, Meta: Meta{Version: "test"},
				Downstream: func() (downstream.Service, string, error) { return c.service, "somewhere tested", nil },
				Record:     func(row results.Row) error { rows = append(rows, row); return nil }}
			if _, err := r.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			row := rows[0]
			if got := strings.Contains(row.Warnings, "the downstream service answered late"); got != (c.warning != "") || c.warning != "" && !strings.Contains(row.Warnings, c.warning) {
				t.Errorf("warnings %q, want %q", row.Warnings, c.warning)
			}
			switch {
			case c.invalidWith != "" && (row.Valid || !strings.Contains(row.InvalidReason, c.invalidWith)):
				t.Errorf("valid %v, reason %q; want invalid with %q", row.Valid, row.InvalidReason, c.invalidWith)
			case c.invalidWith == "" && strings.Contains(row.InvalidReason, "downstream"):
				t.Errorf("invalid for the downstream: %q", row.InvalidReason)
			}
			if !strings.Contains(log.String(), "(20ms a call, somewhere tested), given to the targets as DOWNSTREAM_URL") || !c.service.closed {
				t.Errorf("closed %v, log:\n%s", c.service.closed, log.String())
			}
		})
	}
}

// A helper's CPU time over the phase is the measurement's own: on CPUs busy with nothing else,
// the meter does not count it as other work (it would measure every cell again), while the
// same busy time with no helper to own it is a neighbour's.
func TestTheHelpersCPUIsTheMeasurementsOwn(t *testing.T) {
	for _, c := range []struct {
		helper    time.Duration
		disturbed bool
	}{{3 * time.Second, false}, {0, true}} {
		dir := t.TempDir()
		for name, text := range map[string]string{
			"cgroup.controllers": "cpu\n",
			"cpu.stat":           "usage_usec 1000000\n",
			"stat":               "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 5 0 0 0 0 0 0\ncpu1 0 0 0 5 0 0 0 0 0 0\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m := &meter{src: &steadyUsage{}, generatorCPUs: []int{0}, hostCPUs: []int{0, 1},
			machine: resources.Host{CgroupRoot: dir, ProcStat: filepath.Join(dir, "stat")}}
		m.start()
		// The CPUs spent 3 s over the phase (two CPUs' worth many times over): the helper's, or no one's known.
		if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 4000000\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		m.helperCPU = c.helper
		var row results.Row
		m.record(&row, load.Result{})
		if row.Disturbed != c.disturbed {
			t.Errorf("helper CPU %v of 3 s busy: disturbed %v (%q), want %v", c.helper, row.Disturbed, m.disturbed, c.disturbed)
		}
	}
}
