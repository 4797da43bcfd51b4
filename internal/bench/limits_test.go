package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/limit"
	"github.com/iotbench/iotbench/internal/results"
)

// constructed is an in-process target whose limit is known by construction, and which tells its
// signals as a runtime would: from the state its requests really leave.
type constructed struct {
	began time.Time
	pool  chan struct{} // nil: no pool
	wait  atomic.Int64  // requests waiting for the pool
	loop  sync.Mutex    // held for the whole of a request's work when serial
	busy  atomic.Int64  // ns the loop was held
	work  time.Duration
	// serial: every request holds the loop for its work (a blocked event loop); otherwise each
	// waits on its own, as a timer does.
	serial bool
}

func (c *constructed) serve(w http.ResponseWriter, r *http.Request) {
	if c.pool != nil {
		c.wait.Add(1)
		c.pool <- struct{}{}
		c.wait.Add(-1)
		defer func() { <-c.pool }()
	}
	if c.serial {
		c.loop.Lock()
		start := time.Now()
		time.Sleep(c.work)
		c.busy.Add(int64(time.Since(start)))
		c.loop.Unlock()
	} else {
		time.Sleep(c.work)
	}
	w.Write([]byte(`{"id":1}`))
}

func (c *constructed) signals(w http.ResponseWriter, r *http.Request) {
	active := float64(c.busy.Load()) / 1e6
	pools := []map[string]any{}
	if c.pool != nil {
		pools = append(pools, map[string]any{"name": "db", "kind": "connections", "size": cap(c.pool), "busy": len(c.pool), "waiting": c.wait.Load()})
	}
	json.NewEncoder(w).Encode(map[string]any{
		"schema": 1, "runtime": "node", "cpuMs": 0, "jitMs": nil, "safepoint": nil, "threads": nil,
		"gc":        map[string]any{"count": 0, "pauseMs": 0, "maxPauseMs": 0},
		"eventLoop": map[string]any{"activeMs": active, "idleMs": float64(time.Since(c.began))/1e6 - active, "delayP99Ms": 0, "delayMaxMs": 0},
		"pools":     pools, "unavailable": map[string]string{},
	})
}

// Targets limited by construction, loaded for real: each limit named from the signals they give,
// and one limited by nothing iotbench can see named "not found". The loads are 1.5× or more of
// what the limit allows, or a fifth of it, so that no host's speed moves a case across its rule.
func TestConstructedLimitsAreNamed(t *testing.T) {
	for _, c := range []struct {
		name   string
		target *constructed
		rate   int
		kind   limit.Kind
		says   string
	}{
		// 4 connections held 20 ms each: 200 rps at most, asked 300.
		{"a pool of 4", &constructed{pool: make(chan struct{}, 4), work: 20 * time.Millisecond}, 300, limit.Pool, "the pool: db 4 of 4 busy"},
		// One request at a time, 5 ms each: 200 rps at most, asked 300.
		{"a blocked event loop", &constructed{serial: true, work: 5 * time.Millisecond}, 300, limit.EventLoop, "the event loop: busy"},
		// Waits of 20 ms side by side, nothing held: nothing iotbench sees bounds it.
		{"bounded by nothing it sees", &constructed{work: 20 * time.Millisecond}, 100, limit.NotFound, "not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.target.began = time.Now()
			srv := httptest.NewServer(http.HandlerFunc(c.target.signals))
			defer srv.Close()
			l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": c.target.serve}},
				src: &steadyUsage{cores: 0.3, memory: 100 << 20}, health: `{}`, signals: srv.URL}
			p := planFor("t")
			// Slots and a timeout for the whole queue an overload builds (100 rps over 4 s): a
			// full queue would make the row's first fault the in-flight slots, not the target.
			cfg := &p.Cells[0].Load
			cfg.Model.Rate, cfg.Model.ExpectedLatency, cfg.Timeout, cfg.Duration, cfg.Warmup = c.rate, 2*time.Second, 5*time.Second, 3*time.Second, time.Second
			r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(results.Row) error { return nil }}
			rows, err := r.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			// The rules on the target's signals are what is tested: a generator judged late on a
			// busy machine (this test's server shares its process) is the generator's rule's case.
			row := rows[0]
			row.Fault = fault.None
			got := row.Limit()
			if got.Kind != c.kind || !strings.Contains(got.String(), c.says) {
				t.Errorf("limit %q: %s; want %q saying %q (row: %s; own p99 %v, sent %.0f rps)", got.Kind, got, c.kind, c.says, rows[0].InvalidReason, rows[0].GeneratorDelayP99, rows[0].AchievedRPS)
			}
		})
	}
}
