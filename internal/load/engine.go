// Package load drives one HTTP endpoint with vegeta's engine API (a targeter, a pacer, results)
// over an event loop of its own, and measures it honestly.
//
// Open loop (the default) sends at a constant rate whatever the server does, and measures each
// latency from the moment the request was due, not the moment it left: a server that stalls is
// charged for the requests that waited behind the stall (no coordinated omission). The engine checks
// itself: it reports how late it sent and how much of the requested rate it achieved, and marks the
// measurement invalid when it fell behind, instead of passing its own lag off as the server's.
//
// Closed loop keeps N connections busy back to back, as wrk, autocannon and k6 do; its latencies are
// service times, not what a user at a given arrival rate would see.
//
// The engine knows nothing of Docker, scenarios or CSV: it takes a request, a check and a load
// model, and returns a Result.
package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/sampling"
	"github.com/iotbench/iotbench/internal/timeline"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Validity thresholds. They are part of what a result means, so they are constants, documented in
// docs/results.md, not knobs.
const (
	// MinSuccessRatio is the share of requests that must succeed for a measurement to be valid.
	MinSuccessRatio = 0.99
	// MinAchievedRatio is the share of the requested rate the generator must actually send.
	MinAchievedRatio = 0.99
	// MaxLagShare is how much delay of its own, relative to the latency (see LagAllowed), the
	// generator may add at p99: beyond it, that delay is a visible part of the latency it reports.
	MaxLagShare = 0.10
	// LagFloor is the delay always tolerated: timer and scheduler granularity of the generator.
	LagFloor = time.Millisecond
)

// LagAllowed is the generator's own p99 delay tolerated for a measured p99 latency and the scenario's expected
// latency (when known): 10% of the smaller, at least LagFloor. Not of p99 alone: a generator short of CPU
// inflates the p99 it measures, and would raise its own bar (seen: 20,000 rps, p50 199 ms, valid).
func LagAllowed(p99, expected time.Duration) time.Duration {
	if expected > 0 {
		p99 = min(p99, expected)
	}
	return max(LagFloor, time.Duration(MaxLagShare*float64(p99)))
}

// maxBody bounds how much of each answer is kept for the check; contract answers are a few KB.
const maxBody = 1 << 20

// Request is the HTTP request the engine sends on every hit.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Remote is the one address besides loopback the request may go to: the host of the remote
	// Docker engine the run's targets are on (docs/scale.md); empty: loopback only. It travels
	// with the request, never as process state, so that no run can widen another's.
	Remote string
	// Protocol is what the engine speaks (empty: HTTP1); the URL's scheme is its Scheme.
	Protocol protocol.Protocol `json:",omitempty"`
	// TLS carries the run's CA (RootCAs) for a protocol over TLS; the engine sets the rest (TLS
	// 1.3, ALPN, the session cache). Not serialised: each process makes its own from the run's CA.
	TLS *tls.Config `json:"-"`
	// Resume keeps TLS session tickets, so that a new connection's handshake resumes a session;
	// off, every handshake is full.
	Resume bool `json:",omitempty"`
	// Streams is how many requests an HTTP/2 connection carries at once (0: 1).
	Streams int `json:",omitempty"`
	// NewConnection sends every request on a new connection, closed after its answer: over TLS,
	// a handshake per request.
	NewConnection bool `json:",omitempty"`
}

// Model is the load model: open loop at Rate requests per second, or closed loop over Connections.
type Model struct {
	Rate        int
	Connections int
	// ExpectedLatency sizes the open loop's in-flight limit (see InFlightLimit).
	ExpectedLatency time.Duration
	// Arrival is the open loop's arrival process; empty: Uniform.
	Arrival arrival.Process
	// Seed picks a random arrival process's draws: the same seed, the same arrivals.
	Seed uint64
	// Stages, when set, are the open loop's rates over the measured phase, which lasts as long
	// as they do; Rate is then their mean (what the phase is judged by), and the warm-up runs at
	// the first stage's starting rate.
	Stages []Stage
	// Share is a shard's place in a split uniform schedule (shard.Split): it sends every
	// Count-th request of the cell's stages, or of the cell's constant rate (Rate is then the
	// shard's, the cell's divided by Count), and of each stream of its own of a mix.
	Share Share
	// Think is the closed loop's pause between an answer and the connection's next request;
	// zero: none (back to back).
	Think Think
}

// peakRate is the highest rate the model sends at.
func (m Model) peakRate() int { return max(m.Rate, StagesPeak(m.Stages)/max(m.Share.Count, 1)) }

// ArrivalProcess is the open loop's arrival process, the default named; empty in closed loop.
func (m Model) ArrivalProcess() arrival.Process {
	switch {
	case m.Mode() == Closed:
		return ""
	case m.Arrival == "":
		return arrival.Uniform
	}
	return m.Arrival
}

// Mode names a load model in results.
type Mode string

const (
	Open   Mode = "open"
	Closed Mode = "closed"
)

// Mode reports which loop the model runs.
func (m Model) Mode() Mode {
	if m.Connections > 0 {
		return Closed
	}
	return Open
}

// MaxInFlight bounds the requests outstanding at once, each a socket and a worker of this process:
// the open loop's in-flight limit, and the most connections a closed loop may have.
const MaxInFlight = 10000

// InFlightLimit is how many requests may be outstanding at once: the worker and connection bound.
// Open loop: twice the in-flight count Little's law predicts (rate × latency), with 100 ms of slack
// for pauses, so the bound is reached only when the server falls well behind its expected latency.
// Unbounded workers collapse the generator itself under a slow server. Stages are bounded at
// their peak; while they climb, Config.InFlightLimitAt is the bound.
func (m Model) InFlightLimit() int {
	if m.Mode() == Closed {
		return m.Connections
	}
	return m.inFlightBound(m.peakRate())
}

func (m Model) inFlightBound(rate int) int {
	n := math.Ceil(float64(rate) * (m.ExpectedLatency + 100*time.Millisecond).Seconds() * 2)
	return int(min(max(n, 16), MaxInFlight))
}

// Progress is reported about once a second during the warm-up and the measured phase.
type Progress struct {
	Phase               timeline.Phase
	Elapsed, Duration   time.Duration // of the phase
	Completed, Failures int64         // in the phase so far
	// Last is the phase's last complete second (zero before the first has closed).
	Last timeline.Second
}

// Config is one measurement.
type Config struct {
	Request Request
	Check   Check
	// Kinds, when set, are the requests of a mix, each with its check, sent instead of Request
	// and Check (kinds.go).
	Kinds []Kind
	Model Model
	// Warmup is the load at the same model, before the measured phase, whose results are
	// discarded; with WarmupAuto, the most it may last.
	Warmup time.Duration
	// WarmupAuto ends the warm-up as soon as its per-second figures are steady (SteadyWarmup).
	WarmupAuto bool
	// Settled, when set, is asked once a second with WarmupAuto, once the figures are steady:
	// false holds the warm-up (to its maximum at most) for what the figures do not show yet, a
	// JIT still compiling. Keep it short: the load waits for it. Shards in other processes
	// judge their own figures alone.
	Settled  func() bool `json:"-"`
	Duration time.Duration
	Timeout  time.Duration // per request
	// Compat counts requests as another tool does, besides the engine's own figures.
	Compat   Compat
	Progress func(Progress) `json:"-"`
	// Measuring, when set, is called once as the measured phase begins, from the engine's loop
	// (requests of the warm-up may be in flight; the measured phase begins when it returns):
	// what is observed over the measured phase alone starts there. Keep it short: the load
	// waits for it.
	Measuring func() `json:"-"`
	// EndEarly, when set, is asked about once a second during an open loop's measured phase,
	// with the seconds closed so far: true ends the phase at the end of the second under way,
	// as if that were its length (what is in flight is still answered). A ramp past the
	// target's capacity need not go on overloading it. Keep it short: the load waits for it.
	EndEarly func(seconds []timeline.Second) bool `json:"-"`
}

// Compat names a tool whose semantics a run reproduces; empty: iotbench's own.
type Compat string

// Wrk counts a request past its timeout as wrk does: a timeout, its connection kept for the
// answer, which wrk still counts in its Requests/sec (Result.Wrk).
const Wrk Compat = "wrk"

// CheckCompat refuses a name that is no compat mode; empty is iotbench's own.
func CheckCompat(c Compat) error {
	if c == "" || c == Wrk {
		return nil
	}
	return fmt.Errorf("unknown compat mode %q: use wrk, or leave it out for iotbench's own semantics", c)
}

func (c Config) validate() error {
	switch {
	case c.Model.Rate < 0 || c.Model.Connections < 0:
		return errors.New("rate and connections must not be negative")
	case c.Model.Rate > 0 && c.Model.Connections > 0:
		return errors.New("set a rate (open loop) or connections (closed loop), not both")
	case c.Model.Rate == 0 && c.Model.Connections == 0:
		return errors.New("set a rate (open loop) or connections (closed loop)")
	case c.Duration <= 0:
		return errors.New("duration must be positive")
	case c.Timeout <= 0:
		return errors.New("timeout must be positive")
	case c.Model.Arrival != "" && c.Model.Connections > 0:
		return errors.New("an arrival process paces an open loop: set a rate, not connections")
	case c.Model.Think.Mean < 0 || c.Model.Think.Mean > 0 && c.Model.Mode() == Open:
		return errors.New("a think time paces a closed loop: set connections, not a rate")
	case len(c.Model.Stages) > 0 && c.Model.Connections > 0:
		return errors.New("stages pace an open loop: set a rate, not connections")
	case c.EndEarly != nil && c.Model.Connections > 0:
		return errors.New("an early end is asked of an open loop's seconds: set a rate, not connections")
	case len(c.Model.Stages) > 0 && StagesDuration(c.Model.Stages) != c.Duration:
		return fmt.Errorf("the stages last %v, the measured phase %v: they must be equal", StagesDuration(c.Model.Stages), c.Duration)
	}
	if len(c.Model.Stages) > 0 {
		if err := CheckStages(c.Model.Stages); err != nil {
			return err
		}
	}
	if err := arrival.Check(c.Model.Arrival); err != nil {
		return err
	}
	if err := CheckKinds(c.Kinds, c.Model); err != nil {
		return err
	}
	for _, k := range c.Kinds {
		if err := RequireLoopback(k.Request.URL, k.Request.Remote); err != nil {
			return fmt.Errorf("request %s: %w", k.Name, err)
		}
	}
	if len(c.Kinds) > 0 && c.Request.Protocol.HTTP2() {
		return fmt.Errorf("a mix of requests speaks HTTP/1.1 (protocol http1 or https), not %s", c.Request.Protocol)
	}
	if len(c.Kinds) == 0 {
		if err := RequireLoopback(c.Request.URL, c.Request.Remote); err != nil {
			return err
		}
	}
	for _, u := range c.urls() {
		r := c.Request
		r.URL = u
		if err := checkRequest(r); err != nil {
			return err
		}
	}
	if err := CheckCompat(c.Compat); err != nil {
		return err
	}
	if c.Compat == Wrk && c.Request.Protocol.HTTP2() {
		return fmt.Errorf("compat wrk counts as wrk does over HTTP/1.1 (protocol http1 or https), not %s", c.Request.Protocol)
	}
	if c.WarmupAuto && c.Warmup <= 0 {
		return errors.New("warm-up until steady needs a maximum above 0")
	}
	if n := c.Model.Connections * max(c.Request.Streams, 1); n > MaxInFlight {
		return fmt.Errorf("%d connections × %d streams: %d requests in flight, over the %d the engine keeps", c.Model.Connections, c.Request.Streams, n, MaxInFlight)
	}
	return nil
}

// RequireLoopback refuses a URL whose host is not a loopback address, nor remote (the remote
// engine's host, when the run's targets are there; empty: none): iotbench sends load to services
// on this machine, or on the host of the engine the user gave, only.
func RequireLoopback(raw, remote string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q: only http:// and https:// are supported", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "localhost" || host != "" && host == remote {
		return nil
	}
	return fmt.Errorf("URL %q: iotbench sends load to loopback only; use 127.0.0.1", raw)
}

// Result is one measured phase. Requests = Successes + Errors; Timeouts are part of Errors.
type Result struct {
	Mode Mode
	// Kind names the request of a mix whose figures these are (Kinds); empty for a phase's whole.
	Kind string `json:",omitempty"`
	// Kinds are a mixed phase's figures by request, in Config.Kinds' order: each judged on its
	// own, with the phase's own delay and in-flight peak; the whole is invalid when one is. Each
	// has its measured phase's Timeline (no warm-up's; in flight 0, counted for the whole).
	Kinds []Result `json:",omitempty"`
	// Stages are a staged phase's figures by stage (StageResults), cut once by whoever reads them
	// (bench: for the stages' rows and their files); nil until then.
	Stages        []Result `json:"-"`
	RequestedRate int      // open loop
	// Arrival is the open loop's arrival process (empty in closed loop).
	Arrival arrival.Process `json:",omitempty"`
	// Think is the closed loop's think time (zero: none).
	Think Think `json:",omitempty"`
	// ExpectedLatency is the load model's (open loop): it bounds the generator's own delay tolerated.
	ExpectedLatency time.Duration
	InFlightLimit   int
	PeakInFlight    int64
	// InFlightFull: every in-flight slot was taken at some point of the measured phase. Under
	// stages the bound follows the rate reached (Config.InFlightLimitAt), so this can be true
	// with PeakInFlight under InFlightLimit, the bound at their top.
	InFlightFull bool `json:",omitempty"`
	Duration     time.Duration

	Requests, Successes, Errors, Timeouts int64
	// Scheduled is how many requests the open loop's schedule had due within the phase: what
	// Requests is judged against (a Poisson process's count varies around rate × duration).
	Scheduled int64 `json:",omitempty"`
	// Answered is how many successes were received within the phase, whichever phase sent them,
	// as wrk and k6 count: Throughput's count. Successes counts the phase's own requests, the
	// population its latencies and success ratio are of; at its edges the two differ. A closed
	// loop's phase begins with the warm-up's requests in flight and ends with its own: counting
	// its own successes would leave out answers it received and take in others after it, up to
	// a whole answer time of them (10 s answers read 8.5 rps over 30 s where 10 are sustained).
	Answered int64
	// BytesReceived is every byte of the answers received within the phase, as Answered
	// (heads and bodies, failed ones too): wrk's Transfer/sec is BytesReceived / Duration.
	BytesReceived int64
	Codes         map[int]int64    // status code → count; 0 for transport errors
	ErrorKinds    map[string]int64 // a few distinct error messages, counted

	// Latency of successful requests. Open loop: from the moment each request was due.
	Latency latency.Summary
	// Latencies holds every successful request's latency in microseconds: Latency's percentiles
	// are taken from it, and its Timeline seconds' histograms add up to it.
	Latencies *hdrhistogram.Histogram
	// Timeline is the phase second by second; WarmupTimeline the warm-up's, when there was one.
	Timeline, WarmupTimeline []timeline.Second
	// Warmed is how long the warm-up lasted (with WarmupAuto, until steady or its maximum).
	Warmed time.Duration `json:",omitempty"`
	// WarmupInFlight is how many requests of the warm-up were in flight as the measured phase
	// began: the load went on across the boundary. Their latencies are the warm-up's; their
	// answers, received within the phase, are in its Answered.
	WarmupInFlight int64 `json:",omitempty"`
	// Wrk is what wrk would have printed of the measured phase (Compat Wrk); nil otherwise.
	Wrk *WrkFigures `json:",omitempty"`
	// SendLag is how late each request left against the open loop's schedule.
	SendLag latency.Summary
	// OwnDelay is the generator's own delay in each answered request (ownDelay): due (or
	// started) until written, plus answer received by the kernel until read.
	OwnDelay latency.Summary
	// ServiceMean is the mean time from each answered request written until the kernel received
	// its answer: the target's (and the network's) share of an in-flight slot. Zero when not
	// measured (shards merged, no receive timestamps).
	ServiceMean time.Duration `json:",omitempty"`
	// Connections is how the phase's connections were opened (TLS: the handshakes);
	// FirstByte, the time from each answered request's start (as Latency's) until the kernel
	// received the first bytes of its answer.
	Connections Connections
	FirstByte   latency.Summary
	// Sends are the answered requests' send times counted in windows of about ten requests
	// (arrivals.go), for the arrival check; zero in closed loop, with stages, and when shards
	// measured the phase.
	Sends sampling.Dispersion `json:",omitzero"`

	Valid bool
	// Fault is why the phase is invalid (None when valid); InvalidReason says it in a sentence.
	Fault         fault.Kind
	InvalidReason string

	// Generators is how many generator shards measured the phase, merged (internal/shard); 0:
	// one, this process.
	Generators int
	// ClockOffset is the largest absolute offset of a shard's clock from this machine's,
	// measured before the phase; ClockMeasured says whether any shard ran on another host, the
	// only ones whose clocks are measured.
	ClockOffset   time.Duration
	ClockMeasured bool
	// RemoteGeneratorCPUs counts the CPUs the shards on other hosts could run on (each host's
	// once, however many of its shards share them): with this machine's generator CPUs, what the
	// generator's CPU time is a share of; RemoteGeneratorCPU is the time those shards used over
	// the phase, none of it on this machine's CPUs. Both 0 when every shard ran here.
	RemoteGeneratorCPUs int
	RemoteGeneratorCPU  time.Duration
	// ShardCPU is the CPU time the shards (processes or containers, here or elsewhere) used over
	// the measured phase: with this process's own, the generator's cost. 0 for one generator in
	// this process.
	ShardCPU time.Duration
}

// AchievedRate is the rate at which requests were sent.
func (r Result) AchievedRate() float64 { return float64(r.Requests) / r.Duration.Seconds() }

// Throughput is the successes received per second of the phase (Answered): an error is never
// throughput.
func (r Result) Throughput() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Answered) / r.Duration.Seconds()
}

// SuccessRatio is Successes / Requests, 0 when nothing was sent.
func (r Result) SuccessRatio() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Successes) / float64(r.Requests)
}

// Run warms up, then measures, as one continuous load (runner). It returns an error only when the
// measurement could not run at all (bad config, cancelled); a measurement that ran but cannot be
// trusted is a Result with Valid false.
func Run(ctx context.Context, cfg Config) (Result, error) {
	s := NewSession()
	defer s.Close()
	return s.Run(ctx, cfg)
}

// urls are the URLs the phase sends to: the request's, or each of a mix's (one connection pool,
// one protocol: Request's settings apply to every one).
func (c Config) urls() []string {
	if len(c.Kinds) == 0 {
		return []string{c.Request.URL}
	}
	out := make([]string, len(c.Kinds))
	for i, k := range c.Kinds {
		out[i] = k.Request.URL
	}
	return out
}

// NoRedirects is the CheckRedirect of every client that judges a target: a redirect is the answer,
// never followed. A target that redirects its endpoint to a page answering 200 has not answered
// 200 itself, and following would send load or checks somewhere else than the target's endpoint.
// The load engine itself never follows one.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// warmup is the warm-up's configuration: the measured phase's, at the first stage's starting
// rate when there are stages (none when that is 0).
func warmup(cfg Config) Config {
	if st := cfg.Model.Stages; len(st) > 0 {
		cfg.Model.Stages, cfg.Model.Rate = nil, st[0].From/max(cfg.Model.Share.Count, 1)
		if cfg.Model.Rate == 0 {
			cfg.Warmup = 0
		}
	}
	return cfg
}

// scheduled is how many requests s has due within du, of which the first released were
// released: the schedule is asked on from there, in order (schedule.due's rule); unsent is told
// when each of the others was due.
func scheduled(s schedule, released int64, du time.Duration, unsent func(at time.Duration)) int64 {
	n := uint64(released)
	for at := s.due(n); at <= du; at = s.due(n) {
		unsent(at)
		n++
	}
	return int64(n)
}

// warmupSeed sets the warm-up's draws apart from the measured phase's.
const warmupSeed = 0x5741524d

// tally counts results as they arrive. add allocates nothing for a success or for an error already
// seen, so that the generator's own bookkeeping makes no garbage per request.
type tally struct {
	res Result
	// checks are each kind's Contains (one, but in a mix), kinds each kind's own tally (nil but
	// in a mix).
	checks   []contains
	kinds    []*tally
	lat, lag *latency.Recorder
	began    time.Time
	open     bool // requests are charged from when they were due
	seconds  *timeline.Recorder
}

func newTally(cfg Config, du time.Duration, schedule schedule, began time.Time) *tally {
	ceiling := 2*cfg.Timeout + du
	t := &tally{
		began: began,
		res: Result{
			Mode: cfg.Model.Mode(), InFlightLimit: cfg.InFlightLimit(), Duration: du,
			Codes: map[int]int64{}, ErrorKinds: map[string]int64{},
		},
		checks: []contains{containsOf(cfg.Check.Contains)},
		lat:    latency.NewRecorder(ceiling), lag: latency.NewRecorder(ceiling),
		open: schedule != nil,
	}
	if len(cfg.Kinds) > 0 {
		t.checks = t.checks[:0]
		for _, k := range cfg.Kinds {
			one := cfg
			one.Kinds, one.Check = nil, k.Check
			t.checks = append(t.checks, containsOf(k.Check.Contains))
			t.kinds = append(t.kinds, newTally(one, du, schedule, began))
		}
	}
	if schedule != nil {
		t.res.RequestedRate, t.res.ExpectedLatency = cfg.RequestedRate(), cfg.Model.ExpectedLatency
		t.res.Arrival = cfg.Model.ArrivalProcess()
	} else {
		t.res.Think = cfg.Model.Think
	}
	return t
}

// add counts r, a request of kind (0 but in a mix) the engine was responsible for from start:
// when it was due in open loop (its latency counts from there), when it was released in closed
// loop. Its latency ends when its answer's last bytes reached the kernel (received, when known:
// between its sending and its reading), else when it was read: a loop that reads late (it
// sleeps between turns) adds nothing to it, that wait being the generator's own delay, measured
// and bounded apart (ownDelay). It says whether r is a success.
func (t *tally) add(r *vegeta.Result, start, received time.Time, kind int) bool {
	if t.kinds != nil {
		t.kinds[kind].add(r, start, received, 0)
	}
	res := &t.res
	res.Requests++
	answered := r.Timestamp.Add(r.Latency)
	end := answered
	if received.After(r.Timestamp) && received.Before(answered) {
		end = received
	}
	took := end.Sub(r.Timestamp)
	var due time.Time
	if t.open {
		due = start
		t.lag.Record(max(r.Timestamp.Sub(due), 0))
		took = end.Sub(due)
	}
	res.Codes[int(r.Code)]++
	outcome := timeline.Success
	switch {
	case r.Error != "":
		res.Errors++
		kind := errorKind(r.Error)
		switch {
		case r.Code != 0:
			outcome = timeline.Status
		case isTimeout(r.Error):
			res.Timeouts++
			outcome = timeline.Timeout
		default:
			outcome = timeline.Transport
		}
		if _, seen := res.ErrorKinds[kind]; seen || len(res.ErrorKinds) < 10 {
			res.ErrorKinds[kind]++
		}
	case r.Code < 200 || r.Code > 299:
		res.Errors++
		outcome = timeline.Status
	case !t.checks[kind].pass(r.Body):
		res.Errors++
		outcome = timeline.Check
	default:
		res.Successes++
		t.lat.Record(took)
	}
	if t.seconds != nil {
		t.seconds.Add(due, r.Timestamp, answered, outcome, took)
	}
	return outcome == timeline.Success
}

// received counts r's answer, a success or not, as one received within the phase (Answered,
// BytesReceived), a mix's kind's too.
func (t *tally) received(r *vegeta.Result, success bool, kind int) {
	if t.kinds != nil {
		t.kinds[kind].received(r, success, 0)
	}
	t.res.BytesReceived += int64(r.BytesIn)
	if success {
		t.res.Answered++
	}
}

// startAt puts the phase's start at at (its progress counts from there), a mix's kinds' too.
func (t *tally) startAt(at time.Time) {
	t.began = at
	for _, k := range t.kinds {
		k.began = at
	}
}

// shorten makes du the phase's length, when it ends before its planned end.
func (t *tally) shorten(du time.Duration) {
	t.res.Duration = du
	for _, k := range t.kinds {
		k.shorten(du)
	}
}

func (t *tally) result() Result {
	res := t.res
	res.Latency = t.lat.Summary()
	res.Latencies = t.lat.Histogram()
	if t.open {
		res.SendLag = t.lag.Summary()
	}
	return res
}

// FaultKind is why r is invalid: its Fault, or fault.Other for an invalid result that carries no
// kind (a shard of an older build); fault.None when valid.
func (r Result) FaultKind() fault.Kind {
	if !r.Valid && r.Fault == fault.None {
		return fault.Other
	}
	return r.Fault
}

// SetFault records a judgement of r: valid when it found no fault, invalid for k otherwise,
// saying why.
func (r *Result) SetFault(k fault.Kind, reason string) {
	r.Valid, r.Fault, r.InvalidReason = k == fault.None, k, reason
}

// SlotsFull says every in-flight slot was taken at some point of the measured phase.
func (r Result) SlotsFull() bool { return r.InFlightFull || r.PeakInFlight >= int64(r.InFlightLimit) }

// judge decides whether a measurement can be trusted, and says why not: the generator did not send
// what was asked; the target failed; the generator's own delay is a visible part of the latencies.
func judge(r Result) (fault.Kind, string) {
	if r.Mode == Open {
		achieved, share := r.AchievedRate(), r.AchievedRate()/float64(r.RequestedRate)
		if r.Scheduled > 0 {
			share = float64(r.Requests) / float64(r.Scheduled)
		}
		if share < MinAchievedRatio {
			reason := fmt.Sprintf("generator sent %.0f rps of %d requested (%.1f%%)",
				achieved, r.RequestedRate, 100*share)
			if r.SlotsFull() {
				// Its own delay holds a slot as long as an answer it has not read yet. By Little's
				// law it held rate × its mean of the slots: the slots were full of the
				// generator's slowness when that is half of them or more (seen: 100,000 rps
				// against nginx, the generator at 100% of its core, own p99 41 ms), of the
				// target's otherwise, however late the generator was besides (seen: a JVM still
				// compiling, 60 slots full at 165 rps, own p99 6.3 ms: it held 0.3 of them).
				held := achieved * r.OwnDelay.Mean.Seconds()
				// The target held achieved × its mean answer time of them: one whose answers held
				// fewer than the own delay did not fill them (seen: nginx at 60,000 rps, 10,000
				// slots full behind a generator at 97% of its core, its own delay holding 3,017 of
				// them, nginx's answers 750; the rest waited for connections it was too busy to
				// hand on). Means, not the bound: a climb's bound moves.
				targetHeld := achieved * r.ServiceMean.Seconds()
				half := float64(r.InFlightLimit) / 2
				if !r.ownDelayOver() || held < half && (r.ServiceMean == 0 || targetHeld >= held) {
					reason += fmt.Sprintf(": all %d in-flight slots were busy, the target answered far slower than the expected latency", r.InFlightLimit)
					if r.ownDelayOver() {
						reason += fmt.Sprintf(" (the generator's own p99 delay, %s, held %.1f of them by Little's law)", r.OwnDelay.P99.Round(time.Microsecond), held)
					}
					return fault.InFlightFull, reason + " (lower the rate or raise expected_latency)"
				}
				reason += fmt.Sprintf(": all %d in-flight slots were busy, %.0f of them held by its own delay (p99 %s; Little's law)", r.InFlightLimit, held, r.OwnDelay.P99.Round(time.Microsecond))
				if held < half {
					reason += fmt.Sprintf(", %.1f by the target (its mean answer %s)", targetHeld, r.ServiceMean.Round(time.Microsecond))
				}
			}
			return fault.GeneratorBehind, reason
		}
	}
	if r.Requests == 0 {
		return fault.NoRequests, "no request completed"
	}
	if r.Mode == Closed && r.Think.Mean > 0 {
		// Little's law: N users, each a response time R and a think time Z a cycle, complete
		// N·D/(R+Z) requests in D; one cycle each may be cut off at the phase's end.
		cycle := (r.Latency.Mean + r.Think.Mean).Seconds()
		if want := float64(r.InFlightLimit) * (r.Duration.Seconds()/cycle - 1); float64(r.Requests) < MinAchievedRatio*want {
			return fault.GeneratorBehind, fmt.Sprintf("generator sent %d requests, where %d users thinking %s with a mean latency of %s make %.0f (Little's law)",
				r.Requests, r.InFlightLimit, r.Think, r.Latency.Mean.Round(time.Microsecond), want)
		}
	}
	if ratio := r.SuccessRatio(); ratio < MinSuccessRatio {
		codes := "" // a stage's answers keep no codes
		if len(r.Codes) > 0 {
			codes = ", codes " + FormatCodes(r.Codes)
		}
		return fault.Errors, fmt.Sprintf("success ratio %.4f below %.2f (%d errors, %d timeouts%s)",
			ratio, MinSuccessRatio, r.Errors, r.Timeouts, codes)
	}
	if r.OwnDelay.Count == 0 {
		return fault.OwnDelayUnmeasured, "the generator's own delay was not measured (the kernel gave no receive timestamps)"
	}
	if r.ownDelayOver() {
		allowed := LagAllowed(r.Latency.P99, r.ExpectedLatency)
		reason := fmt.Sprintf("generator delayed requests, and latencies would carry its delay: its own p99 delay %s exceeds %s", r.OwnDelay.P99.Round(time.Microsecond), allowed.Round(time.Microsecond))
		if r.Mode == Open {
			reason += fmt.Sprintf(" (send lag p99 %s)", r.SendLag.P99.Round(time.Microsecond))
		}
		return fault.GeneratorDelayed, reason
	}
	return fault.None, ""
}

// ownDelayOver says the generator's own p99 delay exceeds what the latencies tolerate
// (LagAllowed). The own delay leaves out each request's wait for a slot or a connection the
// target held, so a saturated target does not raise it: over its bound, it is the generator's
// whatever the target did.
func (r Result) ownDelayOver() bool {
	return r.OwnDelay.Count > 0 && r.OwnDelay.P99 > LagAllowed(r.Latency.P99, r.ExpectedLatency)
}

// ShortOfCPU is the share of its CPUs at and above which a generator that sent late
// (fault.GeneratorBehind, fault.GeneratorDelayed) is taken to have been short of CPU. Its own
// shortage shows at 80% and more (docs/generator.md); below a margin under that, it ran late in
// bursts or was paused, by other work on its CPUs or by the hypervisor taking its vCPU (which
// steal does not always show: on this project's 2-vCPU host a spinning thread on an idle CPU saw
// gaps of up to 6 ms with steal unchanged), and more CPU would not have helped.
const ShortOfCPU = 0.70

// WithGeneratorCause is reason, a fault of kind k, followed by why the generator sent late when k
// is a generator fault, by cpuShare, the share of its CPUs it used over the phase (0: not
// measured); reason as it is for another kind. The engine does not measure its CPU: a generator
// fault's reason says what happened, and whoever measured the CPU adds why.
func WithGeneratorCause(reason string, k fault.Kind, cpuShare float64) string {
	switch {
	case k != fault.GeneratorBehind && k != fault.GeneratorDelayed:
		return reason
	case cpuShare <= 0:
		return reason + ": the load generator was short of CPU, or held up by other work on its CPUs (its CPU was not measured)"
	case cpuShare >= ShortOfCPU:
		return reason + fmt.Sprintf(": the load generator was short of CPU (it used %.0f%% of its CPUs): give it more CPU or lower the rate", 100*cpuShare)
	}
	return reason + fmt.Sprintf(": the load generator was held up, not short of CPU (it used %.0f%% of its CPUs): other work on its CPUs, or the host pausing it (run again on a quiet host)", 100*cpuShare)
}
