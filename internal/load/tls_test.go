package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/protocol"
)

// tlsServer is an in-process https server (TLS 1.3 and, when h2, HTTP/2 by ALPN) in front of h,
// counting the handshakes it saw and how many of them were resumed.
type tlsServer struct {
	URL                string
	roots              *x509.CertPool
	handshakes, resume atomic.Int64
	// handshakeDelay (ns) makes every handshake after it is set take that much longer at the
	// server: a slow TLS stack.
	handshakeDelay atomic.Int64
	mu             sync.Mutex
	protos         map[string]int // the protocol of each request answered
}

func serveTLS(t testing.TB, h http.Handler, h2 bool) *tlsServer {
	t.Helper()
	ts := &tlsServer{protos: map[string]int{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.protos[r.Proto]++
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = h2
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13, VerifyConnection: func(cs tls.ConnectionState) error {
		ts.handshakes.Add(1)
		if cs.DidResume {
			ts.resume.Add(1)
		}
		return nil
	}, GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		time.Sleep(time.Duration(ts.handshakeDelay.Load())) // before the server's answer to the hello
		return nil, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ts.URL = srv.URL
	ts.roots = x509.NewCertPool()
	ts.roots.AddCert(srv.Certificate())
	return ts
}

// On a shared test host, where other packages' tests keep the CPUs busy, a helper at the lowest
// priority waited seconds for a CPU, and every timing here meant nothing (a connect p50 of 96 ms for
// 50 ms handshakes, requests timed out). The helpers' priority is hostinfo's test; here they run
// at normal priority.
func init() { helperPriority = func() {} }

func tlsConfig(ts *tlsServer, m Model, d time.Duration, resume bool) Config {
	cfg := config(ts.URL, m, d)
	cfg.Request.Protocol, cfg.Request.TLS, cfg.Request.Resume = protocol.HTTPS, &tls.Config{RootCAs: ts.roots}, resume
	return cfg
}

func TestHTTPSOpenLoopMeasuresServiceTime(t *testing.T) {
	s := &stub{delay: 20 * time.Millisecond}
	ts := serveTLS(t, s, false)
	cfg := tlsConfig(ts, Model{Rate: 200, ExpectedLatency: 20 * time.Millisecond}, 2*time.Second, true)
	cfg.Warmup = 500 * time.Millisecond // the connections' handshakes, slow under -race
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 400 || res.Successes != res.Requests {
		t.Errorf("%d requests, %d successes; want 400 of each (peak %d of %d in flight, %d connections opened in %v, lag %v)", res.Requests, res.Successes, res.PeakInFlight, res.InFlightLimit, res.Connections.Opened, res.Connections.Connect, res.SendLag)
	}
	if res.Latency.P50 < 20*time.Millisecond || res.Latency.P50 > 60*time.Millisecond {
		t.Errorf("p50 %v, want the server's 20 ms plus a little", res.Latency.P50)
	}
	if res.OwnDelay.Count != res.Requests || res.OwnDelay.P50 > 10*time.Millisecond {
		t.Errorf("own delay: %d recorded, p50 %v; want one per request, far below the server's 20 ms", res.OwnDelay.Count, res.OwnDelay.P50)
	}
	if res.FirstByte.Count != res.Requests || res.FirstByte.P50 < 20*time.Millisecond || res.FirstByte.P50 > res.Latency.P99 {
		t.Errorf("first byte: %d recorded, p50 %v; want one per request, within the latency", res.FirstByte.Count, res.FirstByte.P50)
	}
	c := res.Connections
	if c.TLSVersion != "TLS 1.3" || !strings.HasPrefix(c.TLSCipher, "TLS_") {
		t.Errorf("negotiated %q %q, want TLS 1.3 and a cipher", c.TLSVersion, c.TLSCipher)
	}
	if c.Connect.Count != c.Opened || c.Opened > 20 {
		t.Errorf("%d connections opened, %d connect times; want a time for each, and few: the warm-up's serve the phase", c.Opened, c.Connect.Count)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.protos["HTTP/1.1"] != int(s.hits.Load()) {
		t.Errorf("the server saw %v, want HTTP/1.1 only", ts.protos)
	}
}

func TestHTTPSClosedLoopKeepsConnections(t *testing.T) {
	ts := serveTLS(t, &stub{}, false)
	cfg := tlsConfig(ts, Model{Connections: 4}, 500*time.Millisecond, false)
	cfg.Warmup = 500 * time.Millisecond // the handshakes, slow under -race on a busy machine
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 20 || res.Successes != res.Requests {
		t.Errorf("%d requests, %d successes; want many, all answered", res.Requests, res.Successes)
	}
	// The warm-up's connections serve the measured phase.
	if got := ts.handshakes.Load(); got != 4 || res.Connections.Opened != 0 {
		t.Errorf("%d handshakes at the server, %d connections opened in the phase; want 4 in the warm-up, none after", got, res.Connections.Opened)
	}
}

// A new connection per request: a handshake each, resumed when resumption is on, full when off.
// Closed loop, so that each connection's handshake follows the last one's answer, which carried
// its session ticket.
func TestNewConnectionPerRequestHandshakes(t *testing.T) {
	for _, resume := range []bool{true, false} {
		ts := serveTLS(t, &stub{}, false)
		cfg := tlsConfig(ts, Model{Connections: 2}, 500*time.Millisecond, resume)
		cfg.Request.NewConnection = true
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Connections
		if res.Requests < 4 || res.Successes != res.Requests {
			t.Fatalf("resume %v: %d requests, %d successes; want a few, all answered (errors %v)", resume, res.Requests, res.Successes, res.ErrorKinds)
		}
		if c.Opened != res.Requests || ts.handshakes.Load() != res.Requests || c.Connect.Count != res.Requests {
			t.Errorf("resume %v: %d connections opened, %d connect times, %d handshakes at the server; want one per request (%d)", resume, c.Opened, c.Connect.Count, ts.handshakes.Load(), res.Requests)
		}
		// The first handshake of each connection has no ticket to resume yet.
		if resume && (ts.resume.Load() < res.Requests-2 || c.Resumed != ts.resume.Load()) {
			t.Errorf("resumption on: %d resumed at the server, %d counted, of %d; want all but the first two, the same", ts.resume.Load(), c.Resumed, res.Requests)
		}
		if !resume && (ts.resume.Load() != 0 || c.Resumed != 0) {
			t.Errorf("resumption off: %d resumed at the server, %d counted; want none", ts.resume.Load(), c.Resumed)
		}
		if res.OwnDelay.Count != res.Requests {
			t.Errorf("resume %v: %d own delays for %d requests", resume, res.OwnDelay.Count, res.Requests)
		}
	}
}

// More handshakes at once than helpers: the rest wait in the queue, and every one is made. The
// wait for a helper is the generator's own delay, not the connection's time: a server whose
// handshakes take 50 ms shows a connect time of about 50 ms, however many wait behind them.
func TestHandshakesBeyondTheHelpersWaitForOne(t *testing.T) {
	ts := serveTLS(t, &stub{delay: 2 * time.Millisecond}, false)
	const handshake = 200 * time.Millisecond // long beside a busy host's delays, which add to each
	ts.handshakeDelay.Store(int64(handshake))
	conns := 3 * hostinfo.BackgroundSlots
	cfg := tlsConfig(ts, Model{Connections: conns}, time.Second, false)
	cfg.Request.NewConnection = true
	var most atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // how many helpers there are, every few milliseconds
		defer close(sampled)
		buf := make([]byte, 1<<20)
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			n := int64(strings.Count(string(buf[:runtime.Stack(buf, true)]), "load.(*tlsState).help("))
			most.Store(max(most.Load(), n))
		}
	}()
	res, err := Run(context.Background(), cfg)
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < int64(conns) || res.Successes != res.Requests {
		t.Fatalf("%d requests, %d successes; want at least %d, all answered (errors %v)", res.Requests, res.Successes, conns, res.ErrorKinds)
	}
	if ts.handshakes.Load() != res.Requests {
		t.Errorf("%d handshakes for %d requests, want one each", ts.handshakes.Load(), res.Requests)
	}
	if n := most.Load(); n == 0 || n > hostinfo.BackgroundSlots {
		t.Errorf("at most %d helpers seen at once, want 1 to %d", n, hostinfo.BackgroundSlots)
	}
	// Three connections to a helper: the median request waits a whole handshake for one, which
	// the connect time must not hold (it would be about two handshakes) and the own delay must.
	if c := res.Connections.Connect; c.P50 < handshake || c.P50 > handshake*3/2 {
		t.Errorf("connect p50 %v, want the server's %v handshake and little more", c.P50, handshake)
	}
	if res.OwnDelay.P99 < handshake/2 {
		t.Errorf("own delay p99 %v, want the wait for a helper in it (handshakes of %v, three connections a helper)", res.OwnDelay.P99, handshake)
	}
}

func TestHTTPSTimeouts(t *testing.T) {
	ts := serveTLS(t, &stub{delay: 300 * time.Millisecond}, false)
	cfg := tlsConfig(ts, Model{Rate: 20, ExpectedLatency: time.Millisecond}, 500*time.Millisecond, true)
	cfg.Timeout = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Timeouts != res.Requests || res.Valid {
		t.Errorf("%d requests, %d timeouts, valid %v; want every one timed out, invalid (errors %v)", res.Requests, res.Timeouts, res.Valid, res.ErrorKinds)
	}
}

// A server whose certificate the run's CA did not sign fails every request with a reason.
func TestHTTPSUntrustedServer(t *testing.T) {
	ts := serveTLS(t, &stub{}, false)
	cfg := tlsConfig(ts, Model{Rate: 20, ExpectedLatency: time.Millisecond}, 250*time.Millisecond, false)
	cfg.Request.TLS = &tls.Config{RootCAs: x509.NewCertPool()}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Successes != 0 || res.Errors != res.Requests || res.Requests == 0 {
		t.Fatalf("%d requests, %d successes; want every one failed", res.Requests, res.Successes)
	}
	for kind := range res.ErrorKinds {
		if !strings.Contains(kind, "certificate is not trusted") {
			t.Errorf("error %q, want it to say the certificate is not trusted", kind)
		}
	}
}

func TestHTTPSNeedsItsConfiguration(t *testing.T) {
	ts := serveTLS(t, &stub{}, false)
	cfg := config(ts.URL, Model{Rate: 10}, time.Second)
	cfg.Request.Protocol = protocol.HTTPS
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "https needs the run's CA") {
		t.Errorf("https without a TLS configuration: %v", err)
	}
}

// rawTLSServer is rawServer over TLS 1.3: crypto/tls on both sides, and nothing else that
// allocates per request.
func rawTLSServer(t testing.TB) (string, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil) // for its certificate only
	cert := srv.TLS
	if cert == nil {
		srv.StartTLS()
		cert = srv.TLS
		srv.Close()
	}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	plain := rawServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conf := &tls.Config{Certificates: cert.Certificates, MinVersion: tls.VersionTLS13}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Each TLS connection is relayed, decrypted, to a plaintext one of rawServer.
			go func() {
				tc := tls.Server(c, conf)
				defer tc.Close()
				p, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(plain, "http://"), "/"))
				if err != nil {
					return
				}
				defer p.Close()
				go func() { _, _ = io.Copy(tc, p) }()
				_, _ = io.Copy(p, tc)
			}()
		}
	}()
	return "https://" + ln.Addr().String() + "/", roots
}

// The record layer in the loop allocates next to nothing per request: crypto/tls's own 24 bytes
// per record read (an atLeastReader that escapes), on the engine's side and the relay's. Two
// closed-loop phases over kept connections, of 1 s and 3 s; what the longer allocated more, per
// request more, is the cost per request.
func TestHTTPSAllocatesLittlePerRequest(t *testing.T) {
	if raceDetector {
		t.Skip("under -race sync.Pool drops crypto/tls's buffers at random: run without -race")
	}
	url, roots := rawTLSServer(t)
	allocated := func(du time.Duration) (float64, int64) {
		cfg := config(url, Model{Connections: 4}, du)
		cfg.Request.Protocol, cfg.Request.TLS = protocol.HTTPS, &tls.Config{RootCAs: roots}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if res.Successes != res.Requests || res.Requests == 0 {
			t.Fatalf("%d requests, %d successes (errors %v)", res.Requests, res.Successes, res.ErrorKinds)
		}
		return float64(after.TotalAlloc - before.TotalAlloc), res.Requests
	}
	short, n1 := allocated(time.Second)
	long, n2 := allocated(3 * time.Second)
	if n2-n1 < 1000 {
		t.Skipf("the longer phase sent %d requests, the shorter %d: too busy a machine to tell", n2, n1)
	}
	perRequest := (long - short) / float64(n2-n1)
	t.Logf("%.0f and %.0f bytes for %d and %d requests: %.1f bytes per request more", short, long, n1, n2, perRequest)
	if perRequest > 64 {
		t.Errorf("%.1f bytes allocated per request over TLS, want crypto/tls's 24 or so per record read", perRequest)
	}
}

// A server that accepts connections and never answers their handshake: each request fails as a
// timeout of its handshake, and the helpers end with the attack (closing the attacker waits for
// them, so a helper left behind would hang the test).
func TestHTTPSHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	cfg := config("https://"+ln.Addr().String()+"/", Model{Rate: 20, ExpectedLatency: time.Millisecond}, 250*time.Millisecond)
	cfg.Request.Protocol, cfg.Request.TLS = protocol.HTTPS, &tls.Config{RootCAs: x509.NewCertPool()}
	cfg.Timeout = 200 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Timeouts != res.Requests {
		t.Errorf("%d requests, %d timeouts (errors %v); want every one timed out", res.Requests, res.Timeouts, res.ErrorKinds)
	}
}

// A server that closes idle connections sooner than the next request comes: each closed
// connection is seen closed (its close_notify read while idle) or the request is sent again on
// a new one; none fails.
func TestHTTPSServerClosesIdleConnections(t *testing.T) {
	s := &stub{}
	srv := httptest.NewUnstartedServer(s)
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	cfg := config(srv.URL, Model{Rate: 10, ExpectedLatency: time.Millisecond}, time.Second)
	cfg.Request.Protocol, cfg.Request.TLS = protocol.HTTPS, &tls.Config{RootCAs: roots}
	cfg.Request.Method, cfg.Request.Body = http.MethodGet, nil // replayable
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 10 || res.Successes != 10 {
		t.Errorf("%d requests, %d successes (errors %v); want 10 of each", res.Requests, res.Successes, res.ErrorKinds)
	}
	if res.Connections.Opened < 5 {
		t.Errorf("%d connections opened; want about one per request, the server closing each while idle", res.Connections.Opened)
	}
}
