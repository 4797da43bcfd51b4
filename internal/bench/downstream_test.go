package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/iotbench/iotbench/internal/container"
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
