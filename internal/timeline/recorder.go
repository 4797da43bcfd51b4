// Package timeline records a load phase second by second: what was due, sent and answered in each
// second, the errors by kind, the latency percentiles of that second's answers and the histogram
// they come from. Memory grows with the phase's seconds, never with its requests: one histogram is
// open at a time, and each closed second keeps its counters and its histogram, encoded.
//
// The load engine feeds a Recorder from its one result-reading goroutine; the target's resources
// are filled in afterwards by whoever sampled them. File (file.go) writes a run's timelines as
// CSV, documented in docs/timeline.md.
package timeline

import (
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/latency"
)

// Phase names the part of a cell a second belongs to.
type Phase string

const (
	Warmup  Phase = "warmup"
	Measure Phase = "measure"
)

// Outcome is how a request ended.
type Outcome uint8

const (
	Success   Outcome = iota
	Timeout           // no answer within the request timeout
	Transport         // another error before an answer: refused, reset, closed
	Status            // an answer, but not 2xx
	Check             // a 2xx answer whose body failed the scenario's check
)

// Second is one second of a phase. Requests count in the second they were due, sent, or answered
// (their outcome known), each from the phase's start.
type Second struct {
	Index int // from the phase's start: [Index, Index+1) s

	Due       int64 // open loop: requests due in this second
	Sent      int64
	Successes int64
	// Errors by kind, answered in this second; their sum is Errors().
	Timeouts, Transport, Status, Check int64
	// InFlight is the most requests outstanding during the second (Recorder.InFlight).
	InFlight int64
	// Full: every in-flight slot the generator had was taken at some point of the second (not
	// in the file: the load engine's verdicts on parts of a phase read it).
	Full bool

	// Latency of this second's successes (open loop: from when each was due).
	P50, P99, Max time.Duration
	// OwnDelayP99 is the generator's own delay at p99 over the answers it read in this second.
	OwnDelayP99 time.Duration

	// The target's CPU (mean cores busy) and memory (bytes) over this second; zero when not sampled.
	CPUCores    float64
	MemoryBytes int64

	// Histogram holds this second's successes in microseconds (HdrHistogram's compressed V2
	// encoding): the second's part of the phase's histogram, for interval logs. Nil when empty.
	Histogram []byte
}

// Errors is the number of requests of the second that failed, whatever the kind.
func (s Second) Errors() int64 { return s.Timeouts + s.Transport + s.Status + s.Check }

// Recorder builds a phase's seconds from its results. Add, Last and Finish are for one goroutine;
// the work of closing a second (its percentiles, its encoded histogram: a few hundred µs) is done
// on another, so that the loop reading results never waits for it.
type Recorder struct {
	began   time.Time
	ceiling time.Duration
	seconds []Second
	// open is the second whose histogram is being filled; answers arriving for a second already
	// closed (read late) count in it, so that each second's counts and histogram agree.
	open int
	hist *latency.Interval
	// InFlight, when set, is read as each second closes: the most in flight since the last close,
	// and whether every slot was taken meanwhile.
	InFlight func() (most int64, full bool)

	closer *closer
	taken  int // seconds from the first whose percentiles are known taken (Taken)
}

// NewRecorder starts a phase at began, expected to last about du (which sizes the first
// allocation only); latencies above ceiling are recorded as the ceiling, as the phase's own
// histogram does (latency.NewRecorder).
func NewRecorder(began time.Time, du, ceiling time.Duration) *Recorder {
	n := int(du/time.Second) + 2
	return &Recorder{
		began:   began,
		ceiling: ceiling,
		seconds: make([]Second, 1, n),
		hist:    latency.NewInterval(ceiling),
	}
}

// second is the index of the second t falls in, never before the phase's first.
func (r *Recorder) second(t time.Time) int {
	d := t.Sub(r.began)
	if d < 0 {
		return 0
	}
	return int(d / time.Second)
}

// Add records one request: when it was due (zero in closed loop), sent and answered, how it
// ended and, for a success, its latency. It allocates nothing except when a second closes.
func (r *Recorder) Add(due, sent, done time.Time, o Outcome, took time.Duration) {
	if i := r.second(done); i > r.open {
		r.closeUntil(i)
	}
	s := &r.seconds[r.open]
	switch o {
	case Success:
		s.Successes++
		r.hist.Record(took)
	case Timeout:
		s.Timeouts++
	case Transport:
		s.Transport++
	case Status:
		s.Status++
	case Check:
		s.Check++
	}
	// Sent and due before done: their seconds are open or closed already.
	r.seconds[min(r.second(sent), r.open)].Sent++
	if !due.IsZero() {
		r.seconds[min(r.second(due), r.open)].Due++
	}
}

// Due counts a request the schedule had due at d from the phase's start that was never sent
// (the phase ended first): a second's due is the schedule's, whatever the generator got out.
// After the phase's last Add.
func (r *Recorder) Due(d time.Duration) {
	i := int(max(d, 0) / time.Second)
	if i > r.open {
		r.closeUntil(i)
	}
	r.seconds[i].Due++
}

// closeUntil closes the open second and any empty ones after it, up to second i, which opens.
func (r *Recorder) closeUntil(i int) {
	r.close()
	for r.open < i {
		r.open++
		r.seconds = append(r.seconds, Second{Index: r.open})
		if r.open < i {
			r.close()
		}
	}
}

// close ends the open second: its histogram goes to the closer, and an empty one takes its place.
func (r *Recorder) close() {
	s := &r.seconds[r.open]
	if r.InFlight != nil {
		s.InFlight, s.Full = r.InFlight()
	}
	if s.Successes == 0 {
		return
	}
	if r.closer == nil {
		r.closer = newCloser(r.ceiling)
	}
	r.hist = r.closer.swap(r.open, r.hist)
}

// Last is the last second closed, with its percentiles when they have been taken; zero while
// the first second is open.
func (r *Recorder) Last() Second {
	if r.open == 0 {
		return Second{}
	}
	s := r.seconds[r.open-1]
	if r.closer != nil {
		r.closer.fill(&s)
	}
	return s
}

// StartAt moves the phase's start to began, before anything was added: what takes time to
// make is made before the moment it starts.
func (r *Recorder) StartAt(began time.Time) { r.began = began }

// Taken is how many seconds from the first have closed with their percentiles taken: those a
// judge of the phase under way reads whole (Second), about a second sooner than waiting for the
// next to close as well.
func (r *Recorder) Taken() int {
	for r.taken < r.open && (r.seconds[r.taken].Successes == 0 || r.closer.has(r.taken)) {
		r.taken++
	}
	return r.taken
}

// Second is closed second i, with its percentiles when they have been taken.
func (r *Recorder) Second(i int) Second {
	s := r.seconds[i]
	if r.closer != nil {
		r.closer.fill(&s)
	}
	return s
}

// Finish closes the phase: it returns every second up to the last one something happened in,
// with the generator's own delay per second (ownDelayP99[i] for second i) where measured.
// The Recorder is done with: a second call returns nil.
func (r *Recorder) Finish(ownDelayP99 []time.Duration) []Second {
	if r.seconds == nil {
		return nil
	}
	r.close()
	out := r.seconds
	r.seconds = nil
	if r.closer != nil {
		r.closer.stop()
	}
	for i := range out {
		if r.closer != nil {
			r.closer.fill(&out[i])
		}
		if i < len(ownDelayP99) {
			out[i].OwnDelayP99 = ownDelayP99[i]
		}
	}
	return out
}

// closer takes the percentiles and the encoding of closed seconds' histograms on its own
// goroutine, and hands each histogram back emptied.
type closer struct {
	work  chan closing
	spare chan *latency.Interval
	done  chan struct{}

	ceiling time.Duration
	mu      sync.Mutex
	closed  map[int]Second // only P50, P99, Max and Histogram set
}

type closing struct {
	second int
	hist   *latency.Interval
}

func newCloser(ceiling time.Duration) *closer {
	c := &closer{
		// Room for a few seconds' backlog: a closer that falls that far behind makes the
		// reading loop wait rather than hold more histograms.
		work:    make(chan closing, 4),
		spare:   make(chan *latency.Interval, 2),
		done:    make(chan struct{}),
		ceiling: ceiling,
		closed:  map[int]Second{},
	}
	go c.run()
	return c
}

func (c *closer) run() {
	defer close(c.done)
	for w := range c.work {
		sum := w.hist.Summary()
		s := Second{P50: sum.P50, P99: sum.P99, Max: sum.Max}
		// Encoding fails only on a histogram it cannot hold, which this one is not.
		s.Histogram, _ = w.hist.Encode()
		w.hist.Reset()
		c.mu.Lock()
		c.closed[w.second] = s
		c.mu.Unlock()
		select {
		case c.spare <- w.hist:
		default:
		}
	}
}

// swap hands over second i's histogram and returns an empty one.
func (c *closer) swap(i int, full *latency.Interval) *latency.Interval {
	c.work <- closing{i, full}
	select {
	case h := <-c.spare:
		return h
	default:
		return latency.NewInterval(c.ceiling)
	}
}

// fill copies what was taken of s's histogram into s, when it has been.
func (c *closer) fill(s *Second) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if done, ok := c.closed[s.Index]; ok {
		s.P50, s.P99, s.Max, s.Histogram = done.P50, done.P99, done.Max, done.Histogram
	}
}

// has says second i's percentiles have been taken.
func (c *closer) has(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.closed[i]
	return ok
}

// stop waits for every second handed over to be done.
func (c *closer) stop() {
	close(c.work)
	<-c.done
}

// PerSecond keeps the p99 of a duration over each second of a phase with one histogram open at
// a time, for values recorded elsewhere than the Recorder (the generator's own delay, read on
// its transport's goroutines). It is not safe for concurrent use.
type PerSecond struct {
	began time.Time
	open  int
	hist  *latency.Recorder
	p99   []time.Duration
}

// NewPerSecond starts at began; values above ceiling count as the ceiling.
func NewPerSecond(began time.Time, ceiling time.Duration) *PerSecond {
	return &PerSecond{began: began, hist: latency.NewRecorder(ceiling)}
}

// StartAt moves the start to began, before anything was added.
func (p *PerSecond) StartAt(began time.Time) { p.began = began }

// Add records d in the second at falls in (a value arriving late counts in the open second).
func (p *PerSecond) Add(at time.Time, d time.Duration) {
	if i := int(max(at.Sub(p.began), 0) / time.Second); i > p.open {
		p.closeUntil(i)
	}
	p.hist.Record(d)
}

func (p *PerSecond) closeUntil(i int) {
	for p.open < i {
		p.closeOpen()
		p.open++
	}
}

func (p *PerSecond) closeOpen() {
	p.p99 = append(p.p99, p.hist.Summary().P99) // 0 when empty
	p.hist.Reset()
}

// Finish returns the p99 of each second, from the first to the last with a value.
func (p *PerSecond) Finish() []time.Duration {
	p.closeOpen()
	return p.p99
}
