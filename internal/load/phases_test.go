package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/timeline"
)

// waitFor polls cond for up to a second: the server's goroutines see a connection or a request a
// moment after the kernel has it.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A closed loop has every connection open before its clock starts, warm-up or not (wrk does so):
// its measured phase does not pay for the handshakes, nor its own delay for their wait.
func TestClosedLoopOpensItsConnectionsBeforeTheMeasuredPhase(t *testing.T) {
	for _, warmup := range []time.Duration{0, 300 * time.Millisecond} {
		srv, accepted := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Millisecond)
			io.WriteString(w, `{"id":1}`)
		}, 0)
		const conns = 200
		cfg := config(srv.URL, Model{Connections: conns}, 500*time.Millisecond)
		cfg.Warmup = warmup
		var atStart int64 = -1
		cfg.Measuring = func() {
			waitFor(func() bool { return accepted.Load() >= conns })
			atStart = accepted.Load()
		}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if atStart != conns || accepted.Load() != conns {
			t.Errorf("warm-up %v: %d connections accepted as the measured phase began, %d in all; want all %d before it, none after", warmup, atStart, accepted.Load(), conns)
		}
		if res.Successes == 0 {
			t.Errorf("warm-up %v: no success", warmup)
		}
	}
}

// wrk's way with a request past its timeout: a timeout in the error column, the connection kept,
// and the late answer counted in wrk's Requests/sec but not in its latency. iotbench's own way
// closes the connection and opens another.
func TestWrkCompatCountsALateAnswerOnItsConnection(t *testing.T) {
	for _, compat := range []Compat{Wrk, ""} {
		var n atomic.Int64
		srv, accepted := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 3 {
				time.Sleep(600 * time.Millisecond) // past the 200 ms timeout
			}
			io.WriteString(w, `{"id":1}`)
		}, 0)
		cfg := config(srv.URL, Model{Connections: 1}, 1500*time.Millisecond)
		cfg.Timeout, cfg.Compat = 200*time.Millisecond, compat
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Timeouts != 1 || res.Errors != 1 {
			t.Errorf("compat %q: %d timeouts, %d errors; want the one late request as a timeout", compat, res.Timeouts, res.Errors)
		}
		switch compat {
		case Wrk:
			w := res.Wrk
			if accepted.Load() != 1 {
				t.Errorf("wrk: %d connections, want the one kept through the late answer", accepted.Load())
			}
			if w == nil || w.Timeouts != 1 || w.Latencies != w.Requests-1 || w.Requests < res.Successes || w.Requests > res.Successes+1 {
				t.Fatalf("wrk figures %+v for %d successes: want the late answer among the requests (one more, the last maybe answered after the phase), a timeout, out of the latency", w, res.Successes)
			}
			if w.MeanLatency() >= cfg.Timeout || w.RequestsPerSecond(res.Duration) <= 0 || w.Bytes == 0 {
				t.Errorf("wrk mean latency %v, %.1f rps, %d bytes", w.MeanLatency(), w.RequestsPerSecond(res.Duration), w.Bytes)
			}
		default:
			if accepted.Load() != 2 || res.Wrk != nil {
				t.Errorf("own: %d connections (want 2: the late request's closed), wrk figures %+v (want none)", accepted.Load(), res.Wrk)
			}
		}
	}
}

// A server that stops answering does not stop the clock. wrk's way keeps each request past its
// timeout on its connection, so every slot ends up held and none frees to ask the pacer whether
// the load is over; the phase must end at its end all the same, with or without a warm-up.
func TestASilentServerEndsThePhaseOnTime(t *testing.T) {
	for _, compat := range []Compat{Wrk, ""} {
		for _, warmup := range []time.Duration{0, 300 * time.Millisecond} {
			var measuring atomic.Bool
			var held atomic.Int64
			silent := make(chan struct{})
			srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
				if measuring.Load() {
					held.Add(1)
					select {
					case <-silent:
					case <-r.Context().Done():
					}
				}
				io.WriteString(w, `{"id":1}`)
			}, 0)
			t.Cleanup(func() { close(silent) }) // before the server's Close, which waits for its handlers
			cfg := config(srv.URL, Model{Connections: 4}, 500*time.Millisecond)
			cfg.Warmup, cfg.Timeout, cfg.Compat = warmup, 100*time.Millisecond, compat
			cfg.Measuring = func() { measuring.Store(true) } // silent from the measured phase on
			// Far longer than the phase: only a phase that never ends reaches it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := Run(ctx, cfg)
			cancel()
			if err != nil {
				t.Fatalf("compat %q, warm-up %v: %v (the phase did not end)", compat, warmup, err)
			}
			if res.Duration != cfg.Duration || held.Load() == 0 {
				t.Errorf("compat %q, warm-up %v: a phase of %v, %d requests held; want %v, the server silent", compat, warmup, res.Duration, held.Load(), cfg.Duration)
			}
			// wrk's way after a warm-up: the warm-up's requests still in the server at the
			// boundary may hold every slot through the phase, which then releases none. Whatever
			// it released timed out.
			mayReleaseNone := compat == Wrk && warmup > 0
			if res.Successes != 0 || res.Errors != res.Timeouts || (res.Timeouts == 0 && !mayReleaseNone) {
				t.Errorf("compat %q, warm-up %v: %d successes, %d errors, %d timeouts; want only the silence's timeouts", compat, warmup, res.Successes, res.Errors, res.Timeouts)
			}
		}
	}
}

// queueServer serves one request at a time, each for service, the others waiting their turn;
// or, parallel, each at once.
type queueServer struct {
	mu       sync.Mutex
	service  time.Duration
	parallel bool
	inside   atomic.Int64 // requests received and not yet answered
}

func (q *queueServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.inside.Add(1)
	defer q.inside.Add(-1)
	_, _ = io.Copy(io.Discard, r.Body)
	if !q.parallel {
		q.mu.Lock()
		defer q.mu.Unlock()
	}
	time.Sleep(q.service)
	io.WriteString(w, `{"id":1}`)
}

// The load goes on across the warm-up/measure boundary: the server's queue is not drained
// before the measured phase begins, in either loop, and the warm-up's requests in flight then
// are answered during it and counted in the warm-up.
func TestLoadGoesOnAcrossTheBoundary(t *testing.T) {
	for _, m := range []Model{{Connections: 8}, {Rate: 100, ExpectedLatency: 200 * time.Millisecond}} {
		q := &queueServer{service: 5 * time.Millisecond}
		if m.Mode() == Open { // 10 in flight at 100 rps (Little's law)
			q.service, q.parallel = 100*time.Millisecond, true
		}
		srv := httptest.NewServer(q)
		t.Cleanup(srv.Close)
		cfg := config(srv.URL, m, time.Second)
		cfg.Warmup = time.Second
		var queued int64 = -1
		cfg.Measuring = func() { queued = q.inside.Load() }
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if queued <= 0 || res.WarmupInFlight <= 0 {
			t.Errorf("%s loop: %d requests in the server, %d of the warm-up in flight as the measured phase began; want some: the queue was drained", m.Mode(), queued, res.WarmupInFlight)
		}
		if len(res.Timeline) == 0 || res.Timeline[0].Successes == 0 || len(res.WarmupTimeline) == 0 || res.Warmed < cfg.Warmup {
			t.Errorf("%s loop: measured first second %+v, %d warm-up seconds, warmed %v", m.Mode(), res.Timeline, len(res.WarmupTimeline), res.Warmed)
		}
		if m.Mode() == Open && (res.Requests < 99 || res.Requests > 101) {
			t.Errorf("open loop: %d requests measured, want 100: the warm-up's leaked into the phase", res.Requests)
		}
	}
}

// A warm-up until steady ends once its figures are steady and the target says it has settled,
// before its maximum.
func TestWarmupAutoEndsWhenSteady(t *testing.T) {
	if testing.Short() {
		t.Skip("warms up for 21 s at least")
	}
	// A 50 ms answer: a busy machine's drift of a few tenths of a millisecond is a trend of a
	// 1 ms answer's p99 (10% of its level), as CI found once (never steady in 60 s), not of this one.
	cfg := config(serve(t, &stub{delay: 50 * time.Millisecond}), Model{Rate: 200, ExpectedLatency: 50 * time.Millisecond}, time.Second)
	cfg.Warmup, cfg.WarmupAuto = time.Minute, true
	const unsettled = 3 // the target says it is still compiling the first 3 times it is asked
	asked := 0
	cfg.Settled = func() bool { asked++; return asked > unsettled }
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	least := (SteadyWindow + 1 + unsettled) * time.Second
	if res.Warmed < least || res.Warmed >= cfg.Warmup {
		t.Errorf("warmed %v, want from %v (a steady window after the first second, then %d s unsettled) to below the maximum %v", res.Warmed, least, unsettled, cfg.Warmup)
	}
	if asked != unsettled+1 {
		t.Errorf("the target was asked %d times, want %d: once a second, only once the figures were steady", asked, unsettled+1)
	}
	if res.Requests < 195 || res.Requests > 205 {
		t.Errorf("%d requests measured, want ≈200", res.Requests)
	}
}

// seconds makes per-second figures: throughput and p99 for each second.
func seconds(tput []int64, p99ms []float64) []timeline.Second {
	out := make([]timeline.Second, len(tput))
	for i := range tput {
		p99 := time.Duration(p99ms[i] * float64(time.Millisecond))
		out[i] = timeline.Second{Index: i, Successes: tput[i], P50: p99 / 2, P99: p99}
	}
	return out
}

// jvmThroughput is a warm-up's seconds as measured: spring-mvc-virtual-jdk21 on one CPU, 256
// connections on /ingest (iot-ingest's io-corrected, trial 1), its first 24 s. A 10-s window
// at 1% took its last ten seconds for steady, and the measured phase that followed climbed
// from 2,200 to 4,600 rps.
var jvmThroughput = []int64{0, 252, 443, 629, 1034, 1256, 1615, 1363, 1949, 1678, 1579, 1921, 1682, 2303, 2183, 2483, 2663, 2483, 2702, 2685, 2759, 2772, 3142, 3061}

func TestSteadyWarmup(t *testing.T) {
	flat := func(n int) ([]int64, []float64) {
		tput, p99 := make([]int64, n), make([]float64, n)
		for i := range n {
			tput[i] = 1000 + int64(i%3)*7 - 7 // noise around a level
			p99[i] = 20 + float64(i%4) - 1.5
		}
		return tput, p99
	}
	falling := func(n int) ([]int64, []float64) { // a JVM compiling: p99 falls every second
		tput, p99 := flat(n)
		for i := range p99 {
			p99[i] = 100 - 5*float64(i)
		}
		return tput, p99
	}
	settled := func(n int) ([]int64, []float64) { // falls for 8 s, then flat
		tput, p99 := flat(n)
		for i := range 8 {
			p99[i] = 100 - 10*float64(i)
		}
		return tput, p99
	}
	jvm := func(n int) ([]int64, []float64) {
		_, p99 := flat(n)
		return jvmThroughput, p99
	}
	cases := []struct {
		name string
		make func(int) ([]int64, []float64)
		n    int
		want bool
	}{
		{"flat, long enough", flat, SteadyWindow + 1, true},
		{"flat, one second short (the first is left out)", flat, SteadyWindow, false},
		{"p99 falling", falling, 18, false},
		{"settled after falling", settled, 8 + SteadyWindow, true},
		{"settled, window still mostly on the fall", settled, 8 + SteadyWindow - 6, false},
		{"a JVM compiling on one CPU (its throughput up 50% in 10 s: p = 0.012)", jvm, len(jvmThroughput), false},
	}
	for _, c := range cases {
		series := seconds(c.make(c.n))
		if got := SteadyWarmup(series, 30*time.Second); got != c.want {
			t.Errorf("%s (%d s): steady %v, want %v", c.name, c.n, got, c.want)
		}
	}
}
