package load

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/fault"

	"github.com/iotbench/iotbench/internal/protocol"
)

// stub is an in-process server with a fixed service time that fails every failEvery-th request
// (0: never) with a 500, or answers a body without the check's marker when badBody is set.
type stub struct {
	delay     time.Duration
	failEvery int64
	badBody   bool
	hits      atomic.Int64
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.hits.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	time.Sleep(s.delay)
	if s.failEvery > 0 && n%s.failEvery == 0 {
		http.Error(w, `{"error":"injected"}`, http.StatusInternalServerError)
		return
	}
	if s.badBody {
		_, _ = io.WriteString(w, `{"nope":1}`)
		return
	}
	_, _ = io.WriteString(w, `{"id":1}`)
}

func serve(t testing.TB, s *stub) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func config(url string, m Model, d time.Duration) Config {
	return Config{
		Request:  Request{Method: http.MethodPost, URL: url, Body: []byte(`{"x":1}`)},
		Check:    NewCheck(`"id"`),
		Model:    m,
		Duration: d,
		Timeout:  5 * time.Second,
	}
}

func TestOpenLoopKeepsRateAndMeasuresServiceTime(t *testing.T) {
	url := serve(t, &stub{delay: 50 * time.Millisecond})
	res, err := Run(context.Background(), config(url, Model{Rate: 300, ExpectedLatency: 50 * time.Millisecond}, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.AchievedRate(); got < 0.99*300 || got > 1.01*300 {
		t.Errorf("achieved %.1f rps, want 300 ±1%%", got)
	}
	// The service time is a floor; how far above it depends on the machine, checked by make acceptance.
	if res.Latency.P50 < 50*time.Millisecond || res.Latency.P50 > 100*time.Millisecond {
		t.Errorf("p50 = %v, want 50 ms plus a little", res.Latency.P50)
	}
	if res.SuccessRatio() != 1 || res.Latency.Count != res.Requests || res.SendLag.Count != res.Requests || res.OwnDelay.Count != res.Requests {
		t.Errorf("success %v, %d latencies, %d lags and %d own delays for %d requests", res.SuccessRatio(), res.Latency.Count, res.SendLag.Count, res.OwnDelay.Count, res.Requests)
	}
	// The generator's own share excludes the server's 50 ms.
	if res.OwnDelay.P50 > 10*time.Millisecond {
		t.Errorf("own delay p50 %v: the server's time counted as the generator's", res.OwnDelay.P50)
	}
	if res.Mode != Open || res.RequestedRate != 300 || res.Scheduled != 900 {
		t.Errorf("mode %s rate %d, %d scheduled; want open at 300, 900 scheduled in 3 s", res.Mode, res.RequestedRate, res.Scheduled)
	}
	// The arrival check's counts: windows of about ten requests over the phase, holding every
	// answered request sent within the windows counted (how they are spread is the machine's).
	if w := res.Sends.Windows; w < 80 || w > 90 || res.Sends.Mean*float64(w) > float64(res.Successes) || res.Sends.Mean*float64(w) < 0.9*float64(res.Successes) {
		t.Errorf("sends counted in %d windows of %.2f; want 3 s in windows of 10 requests at 300 rps, holding the %d answered", w, res.Sends.Mean, res.Successes)
	}
}

// Poisson arrivals measured end to end: every request released reaches the server, each charged
// from its due time, and the result names the process. The process itself is pinned on the
// schedule (pacer_test.go): the times a server records carry the machine's jitter (under -race,
// a coefficient of variation of 4 at 1,000 rps), which would make a bound on them a timing test.
func TestPoissonArrivalsAreMeasured(t *testing.T) {
	s := &stub{}
	url := serve(t, s)
	res, err := Run(context.Background(), config(url, Model{Rate: 1000, ExpectedLatency: time.Millisecond, Arrival: arrival.Poisson, Seed: 1}, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrival != arrival.Poisson || res.Mode != Open || res.RequestedRate != 1000 {
		t.Errorf("arrival %q, mode %s, rate %d; want poisson, open, 1000", res.Arrival, res.Mode, res.RequestedRate)
	}
	if res.Requests == 0 || res.Requests > res.Scheduled || res.Requests != s.hits.Load() || res.SendLag.Count != res.Requests {
		t.Errorf("%d requests, %d seen by the server, %d send lags; want as many, and some", res.Requests, s.hits.Load(), res.SendLag.Count)
	}
	uniform, err := Run(context.Background(), config(url, Model{Rate: 100, ExpectedLatency: time.Millisecond}, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if uniform.Arrival != arrival.Uniform {
		t.Errorf("the default arrival process is %q, want uniform", uniform.Arrival)
	}
}

func TestErrorsAreNeverThroughput(t *testing.T) {
	cases := []struct {
		name        string
		server      *stub
		wantRatio   float64
		wantReason  string // "" when the errors alone do not invalidate
		wantCode500 bool
	}{
		{"no failures", &stub{delay: 50 * time.Millisecond}, 1, "", false},
		{"every 10th fails", &stub{delay: 50 * time.Millisecond, failEvery: 10}, 0.9, "success ratio", true},
		{"2xx without the expected body", &stub{delay: 50 * time.Millisecond, badBody: true}, 0, "success ratio", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), config(serve(t, c.server), Model{Rate: 200, ExpectedLatency: 50 * time.Millisecond}, 2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if diff := res.SuccessRatio() - c.wantRatio; diff < -0.01 || diff > 0.01 {
				t.Errorf("success ratio %.3f, want %.2f", res.SuccessRatio(), c.wantRatio)
			}
			if res.Requests != res.Successes+res.Errors {
				t.Errorf("requests %d != successes %d + errors %d", res.Requests, res.Successes, res.Errors)
			}
			// 200 rps whose answers take 50 ms: what the phase receives of them, less the
			// failures (slack for a loaded machine's late sends, none for a failure counted).
			if got, most := res.Throughput(), 200*c.wantRatio; got > most*1.01 || got < most*0.85 {
				t.Errorf("throughput %.1f rps, want %.0f at most (%.0f%% of 200 rps succeed) and near it", got, most, 100*c.wantRatio)
			}
			if got := strings.Contains(res.InvalidReason, "success ratio"); got != (c.wantReason != "") {
				t.Errorf("reason %q: invalid for errors = %v, want %v", res.InvalidReason, got, c.wantReason != "")
			}
			if got := res.Codes[500] > 0; got != c.wantCode500 {
				t.Errorf("codes %v: 500 counted=%v, want %v", res.Codes, got, c.wantCode500)
			}
		})
	}
}

func TestThirtyPercentFailingServerIsNeverValid(t *testing.T) {
	// 3 of every 10 requests fail: n%10 is 1, 4 or 7.
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 10 {
		case 1, 4, 7:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = io.WriteString(w, `{"id":1}`)
		}
	}))
	t.Cleanup(srv.Close)
	res, err := Run(context.Background(), config(srv.URL, Model{Rate: 500, ExpectedLatency: time.Millisecond}, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := res.SuccessRatio(); r < 0.69 || r > 0.71 {
		t.Errorf("success ratio %.3f, want ≈0.70", r)
	}
	if res.Valid {
		t.Error("a server failing 30% of requests was reported valid")
	}
	if res.Codes[503] == 0 {
		t.Errorf("codes %v: the 503s were not counted", res.Codes)
	}
}

func TestTimeoutsAreCountedAsErrors(t *testing.T) {
	url := serve(t, &stub{delay: 400 * time.Millisecond})
	cfg := config(url, Model{Rate: 50, ExpectedLatency: 400 * time.Millisecond}, time.Second)
	cfg.Timeout = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Timeouts == 0 || res.Timeouts != res.Errors || res.Successes != 0 {
		t.Errorf("timeouts %d errors %d successes %d, want every request timed out", res.Timeouts, res.Errors, res.Successes)
	}
	if res.Valid {
		t.Error("all-timeout run reported valid")
	}
}

func TestGeneratorThatFallsBehindIsInvalid(t *testing.T) {
	cases := []struct {
		name       string
		server     *stub
		model      Model
		wantReason string
	}{
		{
			// The target needs ~250 requests in flight; the expected latency allows ~200.
			name:       "in-flight limit reached",
			server:     &stub{delay: 500 * time.Millisecond},
			model:      Model{Rate: 500, ExpectedLatency: time.Millisecond},
			wantReason: "in-flight slots were busy",
		},
		{
			// No generator on this machine sends a million requests a second.
			name:       "rate beyond the generator",
			server:     &stub{},
			model:      Model{Rate: 1_000_000, ExpectedLatency: time.Millisecond},
			wantReason: "generator sent",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), config(serve(t, c.server), c.model, 2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid || !strings.Contains(res.InvalidReason, c.wantReason) {
				t.Errorf("valid=%v reason=%q, want invalid with %q", res.Valid, res.InvalidReason, c.wantReason)
			}
			if res.PeakInFlight > int64(res.InFlightLimit) {
				t.Errorf("peak in flight %d above the limit %d", res.PeakInFlight, res.InFlightLimit)
			}
		})
	}
}

func TestLatencyCountsFromWhenTheRequestWasDue(t *testing.T) {
	// A server that stalls every request for 300 ms during the first half second: in an open loop,
	// requests due during the stall wait behind it, and their latency must include that wait.
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < 500*time.Millisecond {
			time.Sleep(300 * time.Millisecond)
		}
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	t.Cleanup(srv.Close)
	// Expected latency 1 ms: the in-flight limit (≈40) is far below what the stall needs (≈60).
	res, err := Run(context.Background(), config(srv.URL, Model{Rate: 200, ExpectedLatency: time.Millisecond}, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res.SendLag.Max < 50*time.Millisecond {
		t.Errorf("max send lag %v: the requests held back by the stall were not seen as late", res.SendLag.Max)
	}
	if res.Latency.Max < res.SendLag.Max {
		t.Errorf("max latency %v below max send lag %v: latency ignores time spent waiting to be sent", res.Latency.Max, res.SendLag.Max)
	}
}

func TestClosedLoopKeepsConnectionsBusy(t *testing.T) {
	s := &stub{delay: 10 * time.Millisecond}
	res, err := Run(context.Background(), config(serve(t, s), Model{Connections: 8}, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// 8 connections × 100 requests/s each at most; a loaded machine gets less, never more.
	if got := res.Throughput(); got < 300 || got > 820 {
		t.Errorf("throughput %.0f rps, want at most 800 with 8 connections at 10 ms", got)
	}
	if res.PeakInFlight > 8 || res.InFlightLimit != 8 {
		t.Errorf("peak in flight %d (limit %d), want at most 8", res.PeakInFlight, res.InFlightLimit)
	}
	// Validity depends on this machine's timing here (server and generator share the test's CPUs;
	// TestJudge pins the rules): the generator's own delay must have been measured for every answer.
	if res.Mode != Closed || res.SendLag.Count != 0 || res.OwnDelay.Count != res.Successes || res.Successes == 0 {
		t.Errorf("mode %s, %d lags, %d own delays for %d answers: want closed loop, no schedule, every answer's delay", res.Mode, res.SendLag.Count, res.OwnDelay.Count, res.Successes)
	}
}

// A closed loop's throughput is what its phase received (wrk's count): its own requests answered
// after it count in its latencies, not its throughput. Without a warm-up, 4 connections at 250 ms
// send at 0, 0.25, 0.5 and 0.75 s, and the phase of 1 s receives 12 answers, not 16: counted over
// the phase, the last 4 added connections/duration (seed 002's fan-out read 40 rps from an
// executor that serves 20).
func TestClosedLoopThroughputCountsNoAnswerAfterThePhase(t *testing.T) {
	s := &stub{delay: 250 * time.Millisecond}
	res, err := Run(context.Background(), config(serve(t, s), Model{Connections: 4}, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got, most := res.Throughput(), 4/0.25; got > most*1.001 || res.Answered < 4 {
		t.Errorf("throughput %.2f rps from %d answers over %v, want at most %.2f", got, res.Answered, res.Duration, most)
	}
	if res.Answered >= res.Successes {
		t.Errorf("%d answers received within the phase of its %d successes: want fewer, its last were answered after it", res.Answered, res.Successes)
	}
}

// After a warm-up, a closed loop's phase begins with the warm-up's requests in flight and ends
// with its own: counting its own successes over the time to their last answer read 10 s answers
// at 8.5 rps over 30 s where 10 are sustained. 10 connections at 400 ms, warmed up for 200 ms,
// answer in waves at 0.4, 0.8, 1.2 and 1.6 s, all within the phase of 1.6 s from 0.2 s: 25 rps,
// connections / answer time, where the span would give 40 / 1.8 s = 22 (each wave holds with up to
// 50 ms of delay a request).
func TestClosedLoopThroughputIsWhatThePhaseReceived(t *testing.T) {
	s := &stub{delay: 400 * time.Millisecond}
	cfg := config(serve(t, s), Model{Connections: 10}, 1600*time.Millisecond)
	cfg.Warmup = 200 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Throughput(), 10/0.4; got > want*1.001 || got < want*0.95 {
		t.Errorf("throughput %.2f rps (%d answers received, %d successes of the phase's requests), want %.0f", got, res.Answered, res.Successes, want)
	}
	if res.WarmupInFlight != 10 {
		t.Errorf("%d of the warm-up's requests in flight at the boundary, want the 10 connections'", res.WarmupInFlight)
	}
}

func TestWarmupIsDiscarded(t *testing.T) {
	s := &stub{delay: time.Millisecond}
	cfg := config(serve(t, s), Model{Rate: 200, ExpectedLatency: time.Millisecond}, time.Second)
	cfg.Warmup = time.Second
	var hitsAtMeasuring int64 = -1
	cfg.Measuring = func() { hitsAtMeasuring = s.hits.Load() }
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The load goes on across the boundary: the warm-up's requests in flight may not have
	// reached the server yet.
	if warm := s.hits.Load() - res.Requests; hitsAtMeasuring > warm || hitsAtMeasuring < warm-res.WarmupInFlight {
		t.Errorf("Measuring saw %d hits, want the %d of the warm-up but its %d in flight at most: it must run at the boundary", hitsAtMeasuring, warm, res.WarmupInFlight)
	}
	if hits := s.hits.Load(); hits < 380 {
		t.Errorf("server saw %d requests, want ≈400 (warm-up and measurement)", hits)
	}
	if res.Requests < 195 || res.Requests > 205 {
		t.Errorf("result counts %d requests, want ≈200: the warm-up leaked into the measurement", res.Requests)
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	url := serve(t, &stub{delay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := Run(ctx, config(url, Model{Rate: 100, ExpectedLatency: time.Millisecond}, time.Minute))
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if took := time.Since(begin); took > 3*time.Second {
		t.Errorf("cancelled run took %v to return", took)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Config)
		want string
	}{
		{"both models", func(c *Config) { c.Model.Connections = 4 }, "not both"},
		{"no model", func(c *Config) { c.Model.Rate = 0 }, "set a rate"},
		{"no duration", func(c *Config) { c.Duration = 0 }, "duration"},
		{"remote host", func(c *Config) { c.Request.URL = "http://10.0.0.1:8080/" }, "loopback only"},
		{"https without the run's CA", func(c *Config) { c.Request.URL, c.Request.Protocol = "https://127.0.0.1/", protocol.HTTPS }, "https needs the run's CA"},
		{"an https URL for http1", func(c *Config) { c.Request.URL = "https://127.0.0.1/" }, "protocol http1 speaks to http:// URLs"},
		{"TLS for http1", func(c *Config) { c.Request.TLS = &tls.Config{} }, "plaintext: no TLS settings"},
		{"h3", func(c *Config) { c.Request.Protocol = "h3" }, `protocol "h3": HTTP/3 is not supported; use http1, https, h2 or h2c`},
		{"streams for http1", func(c *Config) { c.Request.Streams = 4 }, "streams per connection are HTTP/2's"},
		{"too many streams in flight", func(c *Config) {
			c.Model.Rate, c.Model.Connections, c.Request.Protocol, c.Request.Streams = 0, 100, protocol.H2C, 101
		}, "100 connections × 101 streams: 10100 requests in flight, over the 10000"},
		{"other scheme", func(c *Config) { c.Request.URL = "ftp://127.0.0.1/" }, "only http:// and https://"},
		{"remote https", func(c *Config) { c.Request.URL = "https://10.0.0.1:8443/" }, "loopback only"},
		{"unknown arrival", func(c *Config) { c.Model.Arrival = "bursty" }, `unknown arrival process "bursty"`},
		{"arrival of a closed loop", func(c *Config) { c.Model.Rate, c.Model.Connections, c.Model.Arrival = 0, 4, arrival.Poisson }, "paces an open loop"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config("http://127.0.0.1:1/", Model{Rate: 10}, time.Second)
			c.mut(&cfg)
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestRequireLoopback(t *testing.T) {
	cases := []struct {
		url, remote string
		ok          bool
	}{
		{"http://127.0.0.1:8080/ingest", "", true},
		{"http://localhost:8080/", "", true},
		{"http://[::1]:8080/", "", true},
		{"http://127.0.0.2:8080/", "", true},
		{"http://192.168.1.1/", "", false},
		{"http://example.org/", "", false},
		// the remote engine's host, and no other
		{"http://10.77.1.2:8080/", "10.77.1.2", true},
		{"http://10.77.1.3:8080/", "10.77.1.2", false},
		{"http://127.0.0.1:8080/", "10.77.1.2", true},
	}
	for _, c := range cases {
		if err := RequireLoopback(c.url, c.remote); (err == nil) != c.ok {
			t.Errorf("RequireLoopback(%q, %q) = %v, want ok=%v", c.url, c.remote, err, c.ok)
		}
	}
	// Nothing is left behind for the next run: a config without Remote is loopback only.
	if err := (Config{Request: Request{URL: "http://10.77.1.2:8080/"}, Model: Model{Rate: 1}, Duration: time.Second, Timeout: time.Second}).validate(); err == nil {
		t.Error("a config without Remote accepted another host")
	}
}

// TestJudge pins the validity rules on measured results, independent of this machine's timing.
func TestJudge(t *testing.T) {
	ms := time.Millisecond
	open := func(mut func(*Result)) Result {
		r := Result{Mode: Open, RequestedRate: 1000, ExpectedLatency: 100 * ms, InFlightLimit: 300, PeakInFlight: 60, Duration: 10 * time.Second,
			Requests: 10000, Successes: 10000, Codes: map[int]int64{200: 10000}}
		r.Latency.P99 = 60 * ms
		r.SendLag.P99 = ms / 2
		r.OwnDelay.Count, r.OwnDelay.P99 = 10000, ms
		if mut != nil {
			mut(&r)
		}
		return r
	}
	closed := func(mut func(*Result)) Result {
		r := Result{Mode: Closed, InFlightLimit: 64, PeakInFlight: 64, Duration: time.Second, Requests: 5000, Successes: 5000}
		r.Latency.P99 = 20 * ms
		r.OwnDelay.Count, r.OwnDelay.P99 = 5000, ms
		if mut != nil {
			mut(&r)
		}
		return r
	}
	cases := []struct {
		name   string
		r      Result
		kind   fault.Kind
		reason string // "" for valid
	}{
		{"clean", open(nil), fault.None, ""},
		{"target saturated the in-flight bound", open(func(r *Result) { r.Requests, r.Successes, r.PeakInFlight = 9000, 9000, 300 }), fault.InFlightFull, "all 300 in-flight slots were busy"},
		{"generator short of CPU", open(func(r *Result) { r.Requests, r.Successes = 9800, 9800 }), fault.GeneratorBehind, "generator sent 980 rps of 1000 requested (98.0%)"},
		{"exactly 99% of the rate", open(func(r *Result) { r.Requests, r.Successes = 9900, 9900 }), fault.None, ""},
		{"poisson: all its draws sent, fewer than rate × duration", open(func(r *Result) { r.Requests, r.Successes, r.Scheduled = 9700, 9700, 9700 }), fault.None, ""},
		{"think time: Little's law holds", closed(func(r *Result) {
			r.Think, r.Duration, r.InFlightLimit, r.Requests, r.Successes = Think{Mean: 80 * ms}, 10*time.Second, 10, 990, 990
			r.Latency.Mean = 20 * ms
		}), fault.None, ""},
		{"think time: the users held back", closed(func(r *Result) {
			r.Think, r.Duration, r.InFlightLimit, r.Requests, r.Successes = Think{Mean: 80 * ms}, 10*time.Second, 10, 700, 700
			r.Latency.Mean = 20 * ms
		}), fault.GeneratorBehind, "700 requests, where 10 users thinking 80ms with a mean latency of 20ms make 990 (Little's law)"},
		{"poisson: short of its draws", open(func(r *Result) { r.Requests, r.Successes, r.Scheduled = 10000, 10000, 10200 }), fault.GeneratorBehind, "of 1000 requested (98.0%)"},
		{"errors", open(func(r *Result) { r.Successes, r.Errors = 9800, 200 }), fault.Errors, "success ratio 0.9800"},
		{"own delay above 10% of p99", open(func(r *Result) { r.SendLag.P99, r.OwnDelay.P99 = 2*ms, 7*ms }), fault.GeneratorDelayed, "latencies would carry its delay: its own p99 delay 7ms exceeds 6ms (send lag p99 2ms)"},
		{"sent on time, read late", open(func(r *Result) { r.SendLag.P99, r.OwnDelay.P99 = 0, 7*ms }), fault.GeneratorDelayed, "own p99 delay 7ms exceeds 6ms"},
		{"slots full, the own delay over its bound: the generator's", open(func(r *Result) { r.OwnDelay.P99, r.PeakInFlight = 7*ms, 300 }), fault.GeneratorDelayed, "own p99 delay 7ms exceeds 6ms"},
		{"short of the rate, slots full of the generator's own delay", open(func(r *Result) {
			r.RequestedRate, r.Requests, r.Successes, r.PeakInFlight, r.OwnDelay.Mean, r.OwnDelay.P99 = 10000, 90000, 90000, 300, 20*ms, 41*ms
		}), fault.GeneratorBehind, "all 300 in-flight slots were busy, 180 of them held by its own delay (p99 41ms; Little's law)"},
		{"short of the rate, slots full, the own delay over its bound and holding a third of them: the target's", open(func(r *Result) {
			r.RequestedRate, r.Requests, r.Successes, r.PeakInFlight, r.OwnDelay.Mean, r.OwnDelay.P99 = 10000, 90000, 90000, 300, 11*ms, 41*ms
		}), fault.InFlightFull, "the target answered far slower than the expected latency (the generator's own p99 delay, 41ms, held 99.0 of them by Little's law)"},
		{"the same, the target answering in a sliver of the slots' time: the generator's", open(func(r *Result) {
			r.RequestedRate, r.Requests, r.Successes, r.PeakInFlight, r.OwnDelay.Mean, r.OwnDelay.P99, r.ServiceMean = 10000, 90000, 90000, 300, 11*ms, 41*ms, 100*time.Microsecond
		}), fault.GeneratorBehind, "all 300 in-flight slots were busy, 99 of them held by its own delay (p99 41ms; Little's law), 0.9 by the target (its mean answer 100µs)"},
		{"the same, the target answering in most of the slots' time: the target's", open(func(r *Result) {
			r.RequestedRate, r.Requests, r.Successes, r.PeakInFlight, r.OwnDelay.Mean, r.OwnDelay.P99, r.ServiceMean = 10000, 90000, 90000, 300, 11*ms, 41*ms, 30*ms
		}), fault.InFlightFull, "the target answered far slower than the expected latency"},
		{"a JVM still compiling, as CI saw it: slots full at 82% of the rate, own delay over its bound, a fraction of a slot its own", open(func(r *Result) {
			r.RequestedRate, r.ExpectedLatency, r.InFlightLimit, r.PeakInFlight, r.Duration = 200, 50*ms, 60, 60, 4*time.Second
			r.Requests, r.Successes, r.Latency.P99, r.OwnDelay.Mean, r.OwnDelay.P99 = 660, 660, 900*ms, 2*ms, 6295*time.Microsecond
		}), fault.InFlightFull, "all 60 in-flight slots were busy, the target answered far slower"},
		{"short of the rate, slots full, the own delay within bounds: the target's", open(func(r *Result) { r.Requests, r.Successes, r.PeakInFlight, r.OwnDelay.P99 = 9000, 9000, 300, 6*ms }), fault.InFlightFull, "the target answered far slower"},
		{"p99 inflated by a saturated generator does not raise the bar", open(func(r *Result) { r.Latency.P99, r.OwnDelay.P99 = 200*ms, 15*ms }), fault.GeneratorDelayed, "own p99 delay 15ms exceeds 10ms"},
		{"within the 1 ms floor", open(func(r *Result) { r.Latency.P99, r.OwnDelay.P99 = 2*ms, ms }), fault.None, ""},
		{"own delay unknown", open(func(r *Result) { r.OwnDelay.Count, r.OwnDelay.P99 = 0, 0 }), fault.OwnDelayUnmeasured, "not measured"},
		{"nothing completed", open(func(r *Result) { r.RequestedRate, r.Requests, r.Successes = 0, 0, 0 }), fault.NoRequests, "no request completed"},
		{"closed loop, generator with time to spare", closed(nil), fault.None, ""},
		{"closed loop bound by the generator", closed(func(r *Result) { r.OwnDelay.P99 = 3 * ms }), fault.GeneratorDelayed, "own p99 delay 3ms exceeds 2ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind, reason := judge(c.r)
			if kind != c.kind || !strings.Contains(reason, c.reason) {
				t.Errorf("judge = %q %q, want %q with reason %q", kind, reason, c.kind, c.reason)
			}
			// What the generator did, not why: its CPU is measured, and the cause added, above.
			if (kind == fault.GeneratorBehind || kind == fault.GeneratorDelayed) && strings.Contains(reason, "CPU") {
				t.Errorf("judge's reason %q names a cause the engine did not measure", reason)
			}
		})
	}
}

// TestRedirectsAreNotFollowed: a 302 to a page answering 200 is an error of the endpoint loaded,
// and the page redirected to gets no load.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var landed atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { landed.Add(1); io.WriteString(w, `{"id":1}`) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := Run(context.Background(), config(srv.URL+"/moved", Model{Connections: 2}, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Successes != 0 || res.Codes[http.StatusFound] != res.Requests {
		t.Errorf("%d requests, %d successes, codes %v: want every request counted as its 302", res.Requests, res.Successes, res.Codes)
	}
	if landed.Load() != 0 {
		t.Errorf("the page redirected to got %d requests", landed.Load())
	}
}

// BytesReceived is what wrk's Transfer/sec divides: every byte of the answers received within the
// measured phase, heads and bodies.
func TestBytesReceivedCountsTheMeasuredAnswers(t *testing.T) {
	body := strings.Repeat("x", 1000) + `"id"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	cfg := config(srv.URL, Model{Rate: 200, ExpectedLatency: time.Millisecond}, time.Second)
	cfg.Warmup = time.Second
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A head of net/http's server is 100–200 bytes (status line, Date, Content-Length, Content-Type).
	lo, hi := res.Answered*int64(len(body)+100), res.Answered*int64(len(body)+250)
	if res.BytesReceived < lo || res.BytesReceived > hi || res.Answered < 190 {
		t.Errorf("%d bytes received for %d answers of %d bytes, want %d to %d, and about 200 answers", res.BytesReceived, res.Answered, len(body), lo, hi)
	}
}

// Thousands in flight against an in-process server whose answers take a second: every answer is
// counted once, each latency from its due time holds the server's whole second, the generator's
// own share leaves that second out, and the slots in flight are the rate times the answer time.
// No bound here depends on this machine's speed: the floors are the server's, the ceilings far
// above what a generator behind by seconds would show.
func TestThousandsInFlight(t *testing.T) {
	const rate, delay = 2500, time.Second
	s := &stub{delay: delay}
	url := serve(t, s)
	c := config(url, Model{Rate: rate, ExpectedLatency: delay}, 2*time.Second)
	c.Warmup = time.Second
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Successes+res.Errors != res.Requests || res.Latency.Count != res.Successes || res.OwnDelay.Count != res.Requests {
		t.Fatalf("%d requests = %d successes + %d errors? %d latencies, %d own delays", res.Requests, res.Successes, res.Errors, res.Latency.Count, res.OwnDelay.Count)
	}
	// The server saw every request of the warm-up and the phase, and no other.
	if hits := s.hits.Load(); hits < res.Requests || hits > int64(rate)*3+int64(rate)/10 {
		t.Errorf("the server answered %d, the phase sent %d of at most %d in 3 s", hits, res.Requests, rate*3)
	}
	// The histogram keeps 3 significant digits: a millisecond under the second is the second.
	if res.Latency.P50 < delay-time.Millisecond || res.Latency.P50 > 10*delay {
		t.Errorf("latency p50 %v: each answer takes the server's %v, counted from its due time", res.Latency.P50, delay)
	}
	// Each latency holds its own delay and the server's second: so do their medians, whatever
	// the machine (the histogram's 3 digits aside).
	if res.OwnDelay.P50+delay > res.Latency.P50+res.Latency.P50/1000+time.Millisecond {
		t.Errorf("own delay p50 %v + the server's %v > latency p50 %v: the server's time counted as the generator's", res.OwnDelay.P50, delay, res.Latency.P50)
	}
	// Little's law: at the rate sent, a second each, about rate × 1 s in flight at the peak.
	if float64(res.PeakInFlight) < 0.8*res.AchievedRate() {
		t.Errorf("peak in flight %d at %.0f rps of 1 s answers: fewer than the answers outstanding", res.PeakInFlight, res.AchievedRate())
	}
}
