package timeline

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/latency"
)

// request is one request of a test phase, in milliseconds from its start.
type request struct {
	due, sent, done int // ms; due -1: closed loop; sent -1: never sent (after those sent)
	o               Outcome
}

func record(reqs []request) []Second {
	began := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return began.Add(time.Duration(ms) * time.Millisecond) }
	r := NewRecorder(began, 3*time.Second, time.Minute)
	for _, q := range reqs {
		if q.sent < 0 {
			r.Due(time.Duration(q.due) * time.Millisecond)
			continue
		}
		var due time.Time
		from := q.sent
		if q.due >= 0 {
			due, from = at(q.due), q.due
		}
		r.Add(due, at(q.sent), at(q.done), q.o, time.Duration(q.done-from)*time.Millisecond)
	}
	return r.Finish([]time.Duration{time.Millisecond, 2 * time.Millisecond})
}

func TestSecondsCountWhereTheyHappened(t *testing.T) {
	cases := []struct {
		name string
		reqs []request
		want []Second // Histogram, P50, P99, Max not compared
	}{
		{"one each second", []request{{0, 0, 10, Success}, {1000, 1000, 1010, Success}},
			[]Second{{Index: 0, Due: 1, Sent: 1, Successes: 1}, {Index: 1, Due: 1, Sent: 1, Successes: 1}}},
		{"a stall: due and sent in 0, answered in 2", []request{{500, 500, 2500, Success}, {900, 900, 2600, Timeout}},
			[]Second{{Index: 0, Due: 2, Sent: 2}, {Index: 1}, {Index: 2, Successes: 1, Timeouts: 1}}},
		{"errors by kind", []request{{0, 1, 2, Timeout}, {0, 1, 2, Transport}, {0, 1, 2, Status}, {0, 1, 2, Check}},
			[]Second{{Index: 0, Due: 4, Sent: 4, Timeouts: 1, Transport: 1, Status: 1, Check: 1}}},
		{"an answer read late counts in the open second", []request{{0, 0, 1500, Success}, {0, 0, 900, Success}},
			[]Second{{Index: 0, Due: 2, Sent: 2}, {Index: 1, Successes: 2}}},
		{"closed loop has nothing due", []request{{-1, 10, 20, Success}},
			[]Second{{Index: 0, Sent: 1, Successes: 1}}},
		{"sent late, in the next second", []request{{900, 1100, 1200, Success}},
			[]Second{{Index: 0, Due: 1}, {Index: 1, Sent: 1, Successes: 1}}},
		{"due but never sent, in the second it was due", []request{{0, 0, 10, Success}, {500, -1, -1, Success}, {2500, -1, -1, Success}},
			[]Second{{Index: 0, Due: 2, Sent: 1, Successes: 1}, {Index: 1}, {Index: 2, Due: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := record(c.reqs)
			if len(got) != len(c.want) {
				t.Fatalf("%d seconds, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				counts := func(s Second) [8]int64 {
					return [8]int64{int64(s.Index), s.Due, s.Sent, s.Successes, s.Timeouts, s.Transport, s.Status, s.Check}
				}
				if counts(g) != counts(w) {
					t.Errorf("second %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestSecondsAddUpToThePhase(t *testing.T) {
	began := time.Unix(1_700_000_000, 0)
	whole := hdrhistogram.New(1, time.Minute.Microseconds(), 3)
	r := NewRecorder(began, 10*time.Second, time.Minute)
	var successes, errs int64
	// 10 s at 1,000 rps with a latency that varies, an error every 37th request, and a 1.5 s stall.
	for i := range 10_000 {
		due := began.Add(time.Duration(i) * time.Millisecond)
		took := time.Duration(1+i%50) * time.Millisecond
		if i >= 4000 && i < 5500 {
			took = began.Add(5500 * time.Millisecond).Sub(due)
		}
		o := Success
		if i%37 == 0 {
			o = Status
			errs++
		} else {
			successes++
			_ = whole.RecordValue(took.Microseconds())
		}
		r.Add(due, due, due.Add(took), o, took)
	}
	seconds := r.Finish(nil)
	merged := hdrhistogram.New(1, time.Minute.Microseconds(), 3)
	var gotS, gotE, sent int64
	for _, s := range seconds {
		gotS += s.Successes
		gotE += s.Errors()
		sent += s.Sent
		if s.Histogram == nil {
			if s.Successes != 0 {
				t.Errorf("second %d has %d successes and no histogram", s.Index, s.Successes)
			}
			continue
		}
		h, err := hdrhistogram.Decode(s.Histogram)
		if err != nil {
			t.Fatalf("second %d: %v", s.Index, err)
		}
		if h.TotalCount() != s.Successes {
			t.Errorf("second %d: histogram of %d values, %d successes", s.Index, h.TotalCount(), s.Successes)
		}
		merged.Merge(h)
	}
	if gotS != successes || gotE != errs || sent != successes+errs {
		t.Errorf("seconds hold %d successes, %d errors, %d sent; want %d, %d, %d", gotS, gotE, sent, successes, errs, successes+errs)
	}
	if !merged.Equals(whole) {
		t.Errorf("the seconds' histograms merged differ from the phase's: p99 %d vs %d µs, count %d vs %d",
			merged.ValueAtQuantile(99), whole.ValueAtQuantile(99), merged.TotalCount(), whole.TotalCount())
	}
	// The stall: second 4 answers only what was sent in the last 50 ms of second 3, its own
	// requests are answered at 5.5 s.
	if seconds[4].Successes > 50 || seconds[5].P99 < time.Second || seconds[3].P99 > 100*time.Millisecond {
		t.Errorf("stall not where it was: s3 p99 %v, s4 %d successes, s5 p99 %v", seconds[3].P99, seconds[4].Successes, seconds[5].P99)
	}
}

func TestPerSecondP99(t *testing.T) {
	began := time.Unix(1_700_000_000, 0)
	p := NewPerSecond(began, time.Minute)
	for i := range 100 {
		p.Add(began.Add(10*time.Millisecond), time.Duration(i+1)*time.Millisecond)
	}
	p.Add(began.Add(2500*time.Millisecond), 7*time.Millisecond)
	p.Add(began.Add(100*time.Millisecond), 3*time.Millisecond) // late: counts in second 2
	got := p.Finish()
	want := []time.Duration{99 * time.Millisecond, 0, 7 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		// 3 significant digits: a value is reported as the top of its bucket, within 0.1%.
		if d := got[i] - want[i]; d < 0 || float64(d) > 0.001*float64(want[i]) {
			t.Errorf("second %d p99 %v, want %v", i, got[i], want[i])
		}
	}
}

// BenchmarkRecorderAdd is a result's cost in the engine's reading loop, to be put beside the
// rest of that loop's work (BenchmarkTally in internal/load).
func BenchmarkRecorderAdd(b *testing.B) {
	began := time.Now()
	r := NewRecorder(began, time.Duration(b.N)*time.Microsecond, time.Minute)
	for i := 0; b.Loop(); i++ {
		at := began.Add(time.Duration(i) * 100 * time.Microsecond) // 10,000 rps
		r.Add(at, at, at.Add(2*time.Millisecond), Success, 2*time.Millisecond)
	}
}

// BenchmarkClose is the closer's work on one second of 10,000 answers spread over 1–50 ms,
// done once a second beside the engine's reading loop.
func BenchmarkClose(b *testing.B) {
	c := newCloser(time.Minute)
	h := latency.NewInterval(time.Minute)
	for b.Loop() {
		b.StopTimer()
		for i := range 10_000 {
			h.Record(time.Duration(1+i%50) * time.Millisecond)
		}
		b.StartTimer()
		h = c.swap(0, h)
	}
	c.stop()
}

// A second is taken (readable whole) once it has closed and its percentiles are taken: one
// without successes at once, one with them when the closer has done it; never one still open.
func TestTakenSecondsHaveTheirPercentiles(t *testing.T) {
	began := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return began.Add(time.Duration(ms) * time.Millisecond) }
	r := NewRecorder(began, 4*time.Second, time.Minute)
	add := func(ms int, o Outcome) { r.Add(at(ms), at(ms), at(ms), o, 40*time.Millisecond) }
	add(100, Success)
	add(900, Success)
	if r.Taken() != 0 {
		t.Fatalf("taken %d while second 0 is open", r.Taken())
	}
	add(1200, Timeout) // second 1: an error only
	add(2100, Success) // closes seconds 0 and 1
	add(3100, Success) // closes second 2; second 3 is open
	// The closer works on its own goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for r.Taken() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if r.Taken() != 3 {
		t.Fatalf("taken %d, want the 3 closed seconds", r.Taken())
	}
	for i := range r.Taken() {
		if s := r.Second(i); s.Successes > 0 && s.P99 < 40*time.Millisecond {
			t.Errorf("second %d taken without its percentiles: %+v", i, s)
		}
	}
}
