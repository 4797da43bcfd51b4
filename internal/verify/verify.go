// Package verify cases a running target against docs/contract.md, endpoint by endpoint, with the
// exact values the contract fixes. A target that passes does the same work as the others.
package verify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/tlscert"
)

// Case is one request and what its answer must be.
type Case struct {
	Name   string
	Method string
	Path   string
	Body   []byte
	Status int
	// Expect inspects a successful answer; took is the request's duration. Nil: the status alone.
	Expect func(a answer) error
	// Together > 1 sends the request that many times at once, each answer checked by Expect, and
	// requires the last of them to come no sooner than LastAfter: how a check sees that work queues
	// on a bounded executor instead of running all at once.
	Together  int
	LastAfter time.Duration
}

type answer struct {
	body  []byte
	json  map[string]any
	ctype string
	took  time.Duration
}

// Result is the outcome of one check.
type Result struct {
	Case string
	Err  error
}

// Contract returns the contract's cases, in order; payload is the standard reading document.
// The cases that store readings are counted, and the last check expects /stats to have grown by
// exactly that many rows.
func Contract(payload []byte) []Case {
	var doc map[string]any
	_ = json.Unmarshal(payload, &doc)
	missingKey := without(doc, "metric66")
	mean, minV, maxV, stddev := enrich(doc)
	var rowsBefore float64
	const inserts = 4 // /ingest, /ingest/fast, /ingest/realistic, /enterprise

	post := func(name, path string, body []byte, status int, expect func(answer) error) Case {
		return Case{Name: name, Method: http.MethodPost, Path: path, Body: body, Status: status, Expect: expect}
	}
	get := func(name, path string, status int, expect func(answer) error) Case {
		return Case{Name: name, Method: http.MethodGet, Path: path, Status: status, Expect: expect}
	}
	return []Case{
		get("health", "/health", 200, fields(map[string]any{"status": "UP"}, "runtime", "framework", "threadModel", "availableProcessors")),
		get("stats before", "/stats", 200, func(a answer) error {
			n, ok := a.json["rows"].(float64)
			if !ok || n < 50 {
				return fmt.Errorf("rows = %v, want at least the 50 seed readings", a.json["rows"])
			}
			rowsBefore = n
			return nil
		}),
		// The client's clock proves the 50 ms wait; the target's own processingMs may read up to 1 ms
		// short, because Node's timers count whole milliseconds of loop time (seen: 49.81).
		post("ingest", "/ingest", payload, 200, all(fields(nil, "id"), atLeast("processingMs", 49), tookAtLeast(50*time.Millisecond))),
		post("ingest rejects 69 fields", "/ingest", missingKey, 400, fields(nil, "error")),
		post("ingest rejects non-JSON", "/ingest", []byte("not json"), 400, fields(nil, "error")),
		post("ingest/fast", "/ingest/fast", payload, 200, fields(nil, "id")),
		post("ingest/realistic", "/ingest/realistic", payload, 200, all(fields(map[string]any{"pi": 3.1396}, "id", "processingMs"),
			near("mean", mean), near("min", minV), near("max", maxV), near("stddev", stddev))),
		get("cpu", "/cpu", 200, fields(map[string]any{"pi": 3.141124, "trace": 50545.0, "primes": 9592.0})),
		get("blocking 100 ms", "/blocking?ms=100", 200, all(fields(map[string]any{"waitedMs": 100.0}), tookAtLeast(100*time.Millisecond))),
		get("blocking rejects -1", "/blocking?ms=-1", 400, fields(nil, "error")),
		get("page", "/page", 200, func(a answer) error {
			if !strings.HasPrefix(a.ctype, "text/html") {
				return fmt.Errorf("Content-Type %q, want text/html", a.ctype)
			}
			if n := len(a.body); n < 5000 || n > 8500 {
				return fmt.Errorf("%d bytes, want 5–8 KB", n)
			}
			if n := bytes.Count(a.body, []byte(`<tr class="reading">`)); n != 50 {
				return fmt.Errorf(`%d <tr class="reading"> rows, want 50`, n)
			}
			return nil
		}),
		post("process-data fib(25)", "/process-data", []byte(`{"n":25}`), 200, fields(map[string]any{"n": 25.0, "result": 75025.0})),
		post("process-data rejects 41", "/process-data", []byte(`{"n":41}`), 400, fields(nil, "error")),
		get("enterprise", "/enterprise", 200, all(fields(map[string]any{"rows": 10.0, "bytes": 4096.0, "downstream": true}, "id", "cacheHit"), tookAtLeast(20*time.Millisecond))),
		get("fanout", "/fanout", 200, all(fields(map[string]any{"tasks": 10.0, "waitedMs": 500.0}), tookAtLeast(50*time.Millisecond))),
		// 3 requests × 10 sub-tasks on the default 10 workers: three rounds of 50 ms at least.
		together(get("fanout ×3 at once", "/fanout", 200, fields(map[string]any{"tasks": 10.0})), 3, 150*time.Millisecond),
		get("downstream", "/downstream", 200, all(fields(map[string]any{"ok": true}), tookAtLeast(20*time.Millisecond))),
		get("stats after", "/stats", 200, func(a answer) error {
			if n, _ := a.json["rows"].(float64); n != rowsBefore+inserts {
				return fmt.Errorf("rows = %v, want %v (+%d stored by the cases above)", a.json["rows"], rowsBefore+inserts, inserts)
			}
			return nil
		}),
	}
}

func together(c Case, n int, lastAfter time.Duration) Case {
	c.Together, c.LastAfter = n, lastAfter
	return c
}

// Run performs cases in order against baseURL in clear HTTP/1.1 and returns one Result per check.
func Run(ctx context.Context, baseURL string, cases []Case) []Result {
	res, _ := RunOver(ctx, baseURL, protocol.HTTP1, nil, cases) // http1 needs no certificates
	return res
}

// RunOver performs cases as Run does, speaking p (protocol.All) and nothing else: over
// TLS 1.3 trusting set's CA alone, HTTP/2 by ALPN or with prior knowledge. Every answer must have
// come in that protocol. It fails only on a protocol it cannot speak.
func RunOver(ctx context.Context, baseURL string, p protocol.Protocol, set *tlscert.Set, cases []Case) ([]Result, error) {
	t, err := tlscert.Transport(p, set)
	if err != nil {
		return nil, err
	}
	defer t.CloseIdleConnections()
	hc := newClient(30 * time.Second)
	hc.Transport = &expectProto{rt: t, protocol: p.Or()}
	return run1(ctx, hc, baseURL, cases), nil
}

// expectProto fails an answer that did not come in protocol: a client that speaks one protocol
// could only be answered in another by a mistake of its own, which this keeps from passing.
type expectProto struct {
	rt       http.RoundTripper
	protocol protocol.Protocol
}

func (e *expectProto) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := e.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	major := 1
	if e.protocol.HTTP2() {
		major = 2
	}
	switch {
	case res.ProtoMajor != major:
		err = fmt.Errorf("answered in %s, want HTTP/%d (%s)", res.Proto, major, e.protocol)
	case e.protocol.TLS() && (res.TLS == nil || res.TLS.Version != tls.VersionTLS13):
		err = fmt.Errorf("answered outside TLS 1.3 (%s)", e.protocol)
	case !e.protocol.TLS() && res.TLS != nil:
		err = fmt.Errorf("answered over TLS, want clear text (%s)", e.protocol)
	}
	if err != nil {
		res.Body.Close()
		return nil, err
	}
	return res, nil
}

func run1(ctx context.Context, hc *http.Client, baseURL string, cases []Case) []Result {
	out := make([]Result, len(cases))
	for i, c := range cases {
		var err error
		if c.Together > 1 {
			err = runTogether(ctx, hc, baseURL, c)
		} else {
			_, err = run(ctx, hc, baseURL, c, time.Now())
		}
		out[i] = Result{Case: c.Name, Err: err}
	}
	return out
}

// runTogether sends c.Together requests at once, on as many connections, and cases the last
// answer's time from their common start.
func runTogether(ctx context.Context, hc *http.Client, baseURL string, c Case) error {
	begin := time.Now()
	took := make([]time.Duration, c.Together)
	errs := make([]error, c.Together)
	var wg sync.WaitGroup
	for i := range c.Together {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took[i], errs[i] = run(ctx, hc, baseURL, c, begin)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if last := slices.Max(took); last < c.LastAfter {
		return fmt.Errorf("%s %s ×%d at once: the last answered after %v, want ≥ %v (the work ran all at once: is the executor bounded?)",
			c.Method, c.Path, c.Together, last.Round(time.Millisecond), c.LastAfter)
	}
	return nil
}

// run sends c once and cases its answer; took counts from begin.
func run(ctx context.Context, hc *http.Client, baseURL string, c Case, begin time.Time) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, c.Method, baseURL+c.Path, bytes.NewReader(c.Body))
	if err != nil {
		return 0, err
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	a := answer{body: body, ctype: res.Header.Get("Content-Type"), took: time.Since(begin)}
	if res.StatusCode != c.Status {
		return a.took, fmt.Errorf("%s %s: status %d, want %d (body %s)", c.Method, c.Path, res.StatusCode, c.Status, excerpt(body))
	}
	if strings.HasPrefix(a.ctype, "application/json") {
		if err := json.Unmarshal(body, &a.json); err != nil {
			return a.took, fmt.Errorf("%s %s: body is not a JSON object: %v (%s)", c.Method, c.Path, err, excerpt(body))
		}
	} else if c.Path != "/page" {
		return a.took, fmt.Errorf("%s %s: Content-Type %q, want application/json", c.Method, c.Path, a.ctype)
	}
	if c.Expect == nil {
		return a.took, nil
	}
	if err := c.Expect(a); err != nil {
		return a.took, fmt.Errorf("%s %s: %w (body %s)", c.Method, c.Path, err, excerpt(body))
	}
	return a.took, nil
}

// fields requires each key of exact with that value, and each of present to exist.
func fields(exact map[string]any, present ...string) func(answer) error {
	return func(a answer) error {
		for _, k := range slices.Sorted(maps.Keys(exact)) {
			if got, ok := a.json[k]; !ok || got != exact[k] {
				return fmt.Errorf("%s = %v, want %v", k, got, exact[k])
			}
		}
		for _, k := range present {
			if _, ok := a.json[k]; !ok {
				return fmt.Errorf("no %q field", k)
			}
		}
		return nil
	}
}

func atLeast(key string, min float64) func(answer) error {
	return func(a answer) error {
		if v, ok := a.json[key].(float64); !ok || v < min {
			return fmt.Errorf("%s = %v, want a number ≥ %v", key, a.json[key], min)
		}
		return nil
	}
}

// near compares a float field with a relative tolerance: runtimes may round the last bits apart.
func near(key string, want float64) func(answer) error {
	return func(a answer) error {
		v, ok := a.json[key].(float64)
		if !ok || math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return fmt.Errorf("%s = %v, want %v", key, a.json[key], want)
		}
		return nil
	}
}

func tookAtLeast(d time.Duration) func(answer) error {
	return func(a answer) error {
		if a.took < d {
			return fmt.Errorf("answered in %v: the contract's %v wait was not done", a.took, d)
		}
		return nil
	}
}

func all(fs ...func(answer) error) func(answer) error {
	return func(a answer) error {
		for _, f := range fs {
			if err := f(a); err != nil {
				return err
			}
		}
		return nil
	}
}

// enrich computes what /ingest/realistic must answer: mean, min, max and population standard
// deviation of metric01…metric66.
func enrich(doc map[string]any) (mean, lo, hi, stddev float64) {
	var xs []float64
	for i := 1; i <= 66; i++ {
		if v, ok := doc[fmt.Sprintf("metric%02d", i)].(float64); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		mean += x
		lo, hi = min(lo, x), max(hi, x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		stddev += (x - mean) * (x - mean)
	}
	return mean, lo, hi, math.Sqrt(stddev / float64(len(xs)))
}

func without(doc map[string]any, key string) []byte {
	c := map[string]any{}
	for k, v := range doc {
		if k != key {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return b
}

// excerpt is the beginning of an answer, quoted in a reason that reports, logs and the results
// file carry: what the target sent is shown, its control codes are not obeyed.
func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 160 {
		return safetext.Terminal(string(b[:160])) + "…"
	}
	return safetext.Terminal(string(b))
}

// CloseIdleConnections closes the connections the transport keeps (http.Client's).
func (e *expectProto) CloseIdleConnections() {
	if c, ok := e.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
