package main

import (
	"math"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wrk 4.1.0's output, as printed on this machine.
const wrkOutput = `Running 2s test @ http://127.0.0.1:18777/
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.95ms    7.11ms  58.08ms   90.47%
    Req/Sec    27.21k     7.48k   39.69k    65.00%
  Latency Distribution
     50%  968.00us
     75%    4.00ms
     90%   10.80ms
     99%   36.52ms
  55630 requests in 2.07s, 9.50MB read
%sRequests/sec:  26933.94
Transfer/sec:      4.60MB
`

func TestParseWrk(t *testing.T) {
	cases := []struct {
		name       string
		extra      string
		wantErrors int64
	}{
		{"clean", "", 0},
		{"socket errors", "  Socket errors: connect 0, read 3, write 1, timeout 2\n", 6},
		{"non-2xx", "  Non-2xx or 3xx responses: 12\n", 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := parseWrk(strings.Replace(wrkOutput, "%s", c.extra, 1))
			if err != nil {
				t.Fatal(err)
			}
			if r.RPS != 26933.94 || r.P50 != 968*time.Microsecond || r.P99 != 36520*time.Microsecond || r.Errors != c.wantErrors {
				t.Errorf("got %+v, want 26933.94 rps, p50 968µs, p99 36.52ms, %d errors", r, c.wantErrors)
			}
		})
	}
	if _, err := parseWrk("wrk: invalid URL\n"); err == nil || !strings.Contains(err.Error(), "--latency") {
		t.Errorf("output without figures: err = %v", err)
	}
}

// wrk2's output (github.com/giltene/wrk2 at 44a94c1), abridged.
const wrk2Output = `Running 14s test @ http://127.0.0.1:34567/
  1 threads and 64 connections
  Thread calibration: mean lat.: 0.912ms, rate sampling interval: 10ms
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.91ms  402.50us   4.07ms   68.92%
    Req/Sec     2.11k   270.07     3.33k    73.40%
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%  870.00us
 75.000%    1.13ms
 90.000%    1.38ms
 99.000%    1.86ms
 99.900%    2.97ms
 99.990%    3.81ms
 99.999%    4.07ms
100.000%    4.07ms

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)

       0.061     0.000000            1         1.00
       4.071     1.000000         7461          inf
#[Mean    =        0.911, StdDeviation   =        0.402]
#[Max     =        4.068, Total count    =         7461]
#[Buckets =           27, SubBuckets     =         2048]
----------------------------------------------------------
  27712 requests in 14.00s, 4.73MB read
Requests/sec:   1979.38
Transfer/sec:    346.04KB
`

func TestParseWrk2(t *testing.T) {
	r, err := parseWrk(wrk2Output)
	if err != nil {
		t.Fatal(err)
	}
	if r.RPS != 1979.38 || r.P50 != 870*time.Microsecond || r.P99 != 1860*time.Microsecond || r.P999 != 2970*time.Microsecond {
		t.Errorf("got %+v, want 1979.38 rps, p50 870µs, p99 1.86ms, p99.9 2.97ms", r)
	}
}

func TestStatCPU(t *testing.T) {
	// Fields 14 and 15 (utime, stime) are 150 and 50 ticks; the name holds a space and a ')'.
	stat := "4242 (nginx: w) rker) S 1 4242 4242 0 -1 4194624 300 0 0 0 150 50 0 0 20 0 1 0 100 1000 200"
	if got := statCPU(stat); got != 2*time.Second {
		t.Errorf("statCPU = %v, want 2s (200 ticks)", got)
	}
}

func TestCapacityOf(t *testing.T) {
	ms := time.Millisecond
	open := func(rate int, achieved float64, p50 time.Duration) row {
		return row{client: "iotbench", isEngine: true, isOpen: true, requested: rate, achieved: achieved, p50: p50, valid: "yes"}
	}
	late := func(r row) row { r.valid = "no: generator delayed requests"; return r }
	repeated := func(r row) row { r.valid, r.repeated = "repeated: failed while disturbed", true; return r }
	cases := []struct {
		name        string
		rows        []row
		wantRate    int
		wantAtLeast bool
	}{
		{"all sustained", []row{open(5000, 1, ms/4), open(10000, 0.999, ms/2)}, 10000, true},
		{"sends too little", []row{open(5000, 1, ms/4), open(10000, 0.99, ms/4)}, 5000, false},
		{"queues behind itself", []row{open(5000, 1, ms/4), open(10000, 1, 40*ms)}, 5000, false},
		{"a pass above a failure is noise", []row{open(5000, 1, ms/4), open(10000, 1, 40*ms), open(15000, 1, ms/4)}, 5000, false},
		{"judged invalid by the engine", []row{open(5000, 1, ms/4), late(open(10000, 1, ms/4))}, 5000, false},
		{"none sustained", []row{open(5000, 0.5, ms/4)}, 0, false},
		{"the step at half the capacity is not a step of the search", []row{open(5000, 1, ms/4), open(10000, 1, ms/4), func(r row) row { r.isHalf = true; return r }(open(5000, 1, 40*ms))}, 10000, true},
		{"wrk2's steps are not the engine's", []row{{client: "wrk2", isOpen: true, requested: 5000, achieved: 0.9, valid: "3 errors"}, open(5000, 1, ms/4)}, 5000, true},
		{"a step failed while disturbed counts as run again", []row{open(5000, 1, ms/4), repeated(open(10000, 0.9, ms/4)), open(10000, 1, ms/4)}, 10000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := append([]row{{client: "wrk", isFloor: true, p50: ms / 8}, {client: "iotbench", isEngine: true, rps: 30000}}, c.rows...)
			got := capacityOf(rows)
			if got.Rate != c.wantRate || got.AtLeast != c.wantAtLeast || got.ClosedLoopRPS != 30000 || got.CPUs != 1 {
				t.Errorf("capacity %+v, want rate %d at least %v, closed 30000 on 1 CPU", got, c.wantRate, c.wantAtLeast)
			}
		})
	}
}

func TestSchedWaitSince(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, math.Inf(1)}
	at := func(gcs uint64, counts ...uint64) goRuntime {
		return goRuntime{schedWait: &metrics.Float64Histogram{Counts: counts, Buckets: buckets}, gcs: gcs}
	}
	cases := []struct {
		name          string
		before, after goRuntime
		wantP99       time.Duration
		wantGCs       uint64
	}{
		// Waits before the step do not count: only the 100 new ones, 2 of them over 100 µs.
		{"only the step's waits", at(1, 0, 500, 0, 500, 0), at(3, 0, 550, 48, 502, 0), time.Millisecond, 2},
		{"all short", at(0, 0, 0, 0, 0, 0), at(0, 10, 990, 0, 0, 0), 10 * time.Microsecond, 0},
		{"past the last bound: its lower end", at(0, 0, 0, 0, 0, 0), at(0, 0, 0, 0, 0, 5), time.Millisecond, 0},
		{"no waits", at(0, 1, 1, 1, 1, 1), at(0, 1, 1, 1, 1, 1), 0, 0},
	}
	for _, c := range cases {
		p99, gcs := c.after.since(c.before)
		if p99 != c.wantP99 || gcs != c.wantGCs {
			t.Errorf("%s: p99 %s, %d GCs; want %s, %d", c.name, p99, gcs, c.wantP99, c.wantGCs)
		}
	}
}

func TestRepeatWhy(t *testing.T) {
	ms := time.Millisecond
	passing := row{isEngine: true, isOpen: true, valid: "yes", achieved: 1, p50: ms / 4}
	failing := row{isEngine: true, isOpen: true, valid: "no: generator delayed requests", achieved: 1, p50: ms / 4}
	wrk2 := row{client: "wrk2", isOpen: true, valid: "12 errors", achieved: 0.9, p50: ms / 4}
	disturbed := failing
	disturbed.others, disturbed.othersKnown = 0.2, true
	closed := failing
	closed.isOpen = false
	cases := []struct {
		name    string
		r       row
		attempt int
		want    string // a part of the reason; "" when the step stands
	}{
		{"passed", passing, 1, ""},
		{"failed once", failing, 1, "confirm"},
		{"failed twice", failing, 2, ""},
		{"failed while disturbed", disturbed, 2, "0.20 cores"},
		{"failed while disturbed, attempts used up", disturbed, maxAttempts, ""},
		{"closed loop", closed, 1, ""},
		{"wrk2 is not the engine", wrk2, 1, ""},
	}
	for _, c := range cases {
		got := repeatWhy(c.r, ms/8, c.attempt)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A flag's list reads each value or names the flag it cannot read; an empty text is none.
func TestList(t *testing.T) {
	rates, err := list("-rates", " 100, 200 ,", positive(strconv.Atoi), "positive integers")
	if err != nil || !slices.Equal(rates, []int{100, 200}) {
		t.Errorf("rates %v, %v", rates, err)
	}
	if none, err := list("-tls-rates", "", positive(strconv.Atoi), "positive integers"); err != nil || len(none) != 0 {
		t.Errorf("an empty list: %v, %v", none, err)
	}
	for _, text := range []string{"100,x", "100,0", "-5"} {
		if _, err := list("-rates", text, positive(strconv.Atoi), "positive integers"); err == nil || !strings.Contains(err.Error(), "-rates") {
			t.Errorf("-rates %q: %v", text, err)
		}
	}
	if d, err := list("-inflight", "200ms,1s", positive(time.ParseDuration), "durations"); err != nil || !slices.Equal(d, []time.Duration{200 * time.Millisecond, time.Second}) {
		t.Errorf("durations %v, %v", d, err)
	}
	if _, err := list("-inflight", "200ms,-1s", positive(time.ParseDuration), "durations"); err == nil {
		t.Error("a negative delay was taken")
	}
}
