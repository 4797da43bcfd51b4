package load

import (
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/timeline"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestTallyAllocatesNothingPerResult: the generator's own bookkeeping must not make garbage per
// request, or its collections delay the schedule it is measuring.
func TestTallyAllocatesNothingPerResult(t *testing.T) {
	cfg := Config{Check: NewCheck(`"id"`), Model: Model{Rate: 1000, ExpectedLatency: time.Millisecond}, Timeout: time.Second}
	began := time.Now()
	tl := newTally(cfg, time.Second, &pacer{rate: 1000}, time.Now())
	tl.began = began
	tl.seconds = timeline.NewRecorder(began, time.Second, 3*time.Second)
	ok := &vegeta.Result{Code: 200, Body: []byte(`{"id":1}`), Timestamp: began.Add(time.Millisecond), Latency: 2 * time.Millisecond}
	failed := &vegeta.Result{Code: 500, Error: "500 Internal Server Error", Timestamp: began.Add(time.Millisecond), Latency: time.Millisecond}
	timedOut := &vegeta.Result{Error: `Post "http://127.0.0.1:1/": ` + errTimeout.Error(), Timestamp: began.Add(time.Millisecond), Latency: time.Second}
	for _, r := range []*vegeta.Result{ok, failed, timedOut} {
		due := began.Add(time.Millisecond) // request 0's, at 1000 rps
		tl.add(r, due, time.Time{}, 0)     // the first of each kind creates its map entries
		if allocs := testing.AllocsPerRun(1000, func() { tl.add(r, due, time.Time{}, 0) }); allocs != 0 {
			t.Errorf("adding a result with code %d error %q allocates %.1f times, want 0", r.Code, r.Error, allocs)
		}
	}
	// Each kind added once, then 1001 times by AllocsPerRun (its runs and one warm-up).
	res := tl.result()
	if res.Requests != 3006 || res.Successes != 1002 || res.Timeouts != 1002 || res.Codes[500] != 1002 {
		t.Errorf("counted %d requests, %d successes, %d timeouts, codes %v; want 3006, 1002, 1002, 500:1002",
			res.Requests, res.Successes, res.Timeouts, res.Codes)
	}
	// Due at 1 ms, sent at 1 ms, answered 2 ms later: 2 ms from the due time, no lag (the
	// recorder's floor is 1 µs).
	if res.Latency.P50 != 2*time.Millisecond || res.SendLag.Max > time.Microsecond {
		t.Errorf("latency p50 %v, send lag max %v; want 2ms and none", res.Latency.P50, res.SendLag.Max)
	}
}

// A latency ends when the answer reached the kernel, when that is known, else when it was read;
// it starts at the due time in open loop, when sent in closed loop.
func TestTallyLatencyEndsWhenTheAnswerArrived(t *testing.T) {
	began := time.Now()
	due := began.Add(time.Millisecond) // request 0's, at 1000 rps
	sent := due.Add(300 * time.Microsecond)
	read := sent.Add(5 * time.Millisecond)
	arrived := sent.Add(2 * time.Millisecond)
	cases := []struct {
		name     string
		open     bool
		received time.Time
		want     time.Duration
	}{
		{"open loop, arrival known", true, arrived, 2300 * time.Microsecond},
		{"open loop, arrival unknown", true, time.Time{}, 5300 * time.Microsecond},
		{"closed loop, arrival known", false, arrived, 2 * time.Millisecond},
		{"closed loop, arrival unknown", false, time.Time{}, 5 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Check: NewCheck(`"id"`), Model: Model{Connections: 1}, Timeout: time.Second}
			var sch schedule // closed loop: none
			if tc.open {
				cfg.Model = Model{Rate: 1000, ExpectedLatency: time.Millisecond}
				sch = &pacer{rate: 1000}
			}
			tl := newTally(cfg, time.Second, sch, began)
			tl.add(&vegeta.Result{Code: 200, Body: []byte(`{"id":1}`), Timestamp: sent, Latency: read.Sub(sent)}, due, tc.received, 0)
			// The recorder keeps 3 significant digits.
			if got := tl.result().Latency.P50; got < tc.want*999/1000 || got > tc.want*1001/1000 {
				t.Errorf("latency %v, want %v", got, tc.want)
			}
		})
	}
}
