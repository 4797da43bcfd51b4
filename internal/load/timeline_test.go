package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/timeline"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// staller answers at once, except that requests arriving in [from, to) after its first request
// are all held until release after it: a target's pause (a GC, a lock) on a schedule.
type staller struct {
	from, to, release time.Duration

	once  sync.Once
	first time.Time
}

func (s *staller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.once.Do(func() { s.first = now })
	_, _ = io.Copy(io.Discard, r.Body)
	if at := now.Sub(s.first); at >= s.from && at < s.to {
		time.Sleep(time.Until(s.first.Add(s.release)))
	}
	_, _ = io.WriteString(w, `{"id":1}`)
}

// TestTimelineShowsAPauseInItsSeconds: a target that holds every request arriving between 2 and
// 3 s until 3.5 s answers nothing in second 2, and second 3 carries the held requests' latency,
// while the seconds around it stay fast. The bounds are wide: the machine's own hiccups are
// tens of milliseconds, the pause a second.
func TestTimelineShowsAPauseInItsSeconds(t *testing.T) {
	const rate = 200
	srv := httptest.NewServer(&staller{from: 2 * time.Second, to: 3 * time.Second, release: 3500 * time.Millisecond})
	t.Cleanup(srv.Close)
	// An expected latency of 1 s leaves in-flight room for the whole pause.
	res, err := Run(context.Background(), config(srv.URL, Model{Rate: rate, ExpectedLatency: time.Second}, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tl := res.Timeline
	if len(tl) < 5 {
		t.Fatalf("%d seconds in a 5 s phase: %+v", len(tl), tl)
	}
	for _, i := range []int{0, 1, 4} {
		if tl[i].P99 > 500*time.Millisecond || tl[i].Successes < rate/2 {
			t.Errorf("second %d: p99 %v, %d successes; want a fast, full second", i, tl[i].P99, tl[i].Successes)
		}
	}
	if tl[2].Successes > rate/10 || tl[2].InFlight < rate/2 {
		t.Errorf("second 2 (paused): %d successes, %d in flight at its end; want almost none answered, most of its requests waiting", tl[2].Successes, tl[2].InFlight)
	}
	if tl[3].P99 < time.Second || tl[3].Max < time.Second || tl[3].Successes < rate {
		t.Errorf("second 3 (released): p99 %v, max %v, %d successes; want the held requests' second and more", tl[3].P99, tl[3].Max, tl[3].Successes)
	}
	checkTimelineAddsUp(t, res)
}

// checkTimelineAddsUp: the measured seconds hold every request of the phase, and their
// histograms merged are the phase's histogram, the one its percentiles come from.
func checkTimelineAddsUp(t *testing.T, res Result) {
	t.Helper()
	var successes, errs, sent int64
	merged := hdrhistogram.New(res.Latencies.LowestTrackableValue(), res.Latencies.HighestTrackableValue(), int(res.Latencies.SignificantFigures()))
	for _, s := range res.Timeline {
		successes += s.Successes
		errs += s.Errors()
		sent += s.Sent
		if s.Histogram != nil {
			h, err := hdrhistogram.Decode(s.Histogram)
			if err != nil {
				t.Fatalf("second %d: %v", s.Index, err)
			}
			merged.Merge(h)
		}
	}
	if successes != res.Successes || errs != res.Errors || sent != res.Requests {
		t.Errorf("timeline: %d successes, %d errors, %d sent; result: %d, %d, %d", successes, errs, sent, res.Successes, res.Errors, res.Requests)
	}
	if !merged.Equals(res.Latencies) {
		t.Errorf("the seconds' histograms merged (%d values, p99 %d µs) differ from the phase's (%d, %d µs)",
			merged.TotalCount(), merged.ValueAtQuantile(99), res.Latencies.TotalCount(), res.Latencies.ValueAtQuantile(99))
	}
	if got := time.Duration(res.Latencies.ValueAtQuantile(99)) * time.Microsecond; got != res.Latency.P99 {
		t.Errorf("histogram p99 %v, summary p99 %v", got, res.Latency.P99)
	}
}

// TestTimelineAddsUpWithErrorsAndWarmup: failures and a warm-up, each phase its own timeline.
func TestTimelineAddsUpWithErrorsAndWarmup(t *testing.T) {
	cases := []struct {
		name  string
		model Model
	}{
		{"open loop", Model{Rate: 300, ExpectedLatency: 5 * time.Millisecond}},
		{"closed loop", Model{Connections: 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := serve(t, &stub{delay: 2 * time.Millisecond, failEvery: 7})
			cfg := config(url, c.model, 2*time.Second)
			cfg.Warmup = time.Second
			var phases []timeline.Phase
			cfg.Progress = func(p Progress) {
				if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
					phases = append(phases, p.Phase)
				}
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors == 0 || len(res.WarmupTimeline) == 0 {
				t.Fatalf("%d errors, %d warm-up seconds: the test needs both", res.Errors, len(res.WarmupTimeline))
			}
			checkTimelineAddsUp(t, res)
			var status int64
			for _, s := range res.Timeline {
				status += s.Status
			}
			if status != res.Codes[500] {
				t.Errorf("timeline counts %d status errors, the result %d 500s", status, res.Codes[500])
			}
			if len(phases) != 2 || phases[0] != timeline.Warmup || phases[1] != timeline.Measure {
				t.Errorf("progress reported phases %v, want warmup then measure", phases)
			}
		})
	}
}

// BenchmarkTally is the engine's per-result bookkeeping, with and without the timeline: the
// ratio is the timeline's cost in the loop that reads results.
func BenchmarkTally(b *testing.B) {
	for _, withTimeline := range []bool{false, true} {
		name := "without-timeline"
		if withTimeline {
			name = "with-timeline"
		}
		b.Run(name, func(b *testing.B) {
			cfg := Config{Check: NewCheck(`"id"`), Model: Model{Rate: 10_000, ExpectedLatency: time.Millisecond}, Timeout: time.Second}
			began := time.Now()
			schedule := &pacer{rate: 10_000}
			tl := newTally(cfg, time.Minute, schedule, time.Now())
			tl.began = began
			if withTimeline {
				tl.seconds = timeline.NewRecorder(began, time.Minute, 2*time.Second+time.Minute)
			}
			r := &vegeta.Result{Code: 200, Body: []byte(`{"id":1}`), Latency: 2 * time.Millisecond}
			var seq uint64
			for b.Loop() {
				// 10,000 rps: the timeline closes a second every 10,000 results.
				r.Seq = seq
				r.Timestamp = began.Add(time.Duration(seq) * 100 * time.Microsecond)
				tl.add(r, began.Add(schedule.due(seq)), time.Time{}, 0)
				seq++
			}
		})
	}
}
