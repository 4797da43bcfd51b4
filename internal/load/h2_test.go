package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"

	"github.com/iotbench/iotbench/internal/protocol"
)

// h2cServer serves h in plaintext HTTP/2 (prior knowledge), counting its connections and the
// most requests in flight at once.
type h2Counts struct {
	conns          atomic.Int64
	mu             sync.Mutex
	inFlight, most int
	protos         map[string]int
}

func (n *h2Counts) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.inFlight++
		n.most = max(n.most, n.inFlight)
		n.protos[r.Proto]++
		n.mu.Unlock()
		h.ServeHTTP(w, r)
		n.mu.Lock()
		n.inFlight--
		n.mu.Unlock()
	})
}

func serveH2C(t testing.TB, h http.Handler) (string, *h2Counts) {
	t.Helper()
	n := &h2Counts{protos: map[string]int{}}
	srv := httptest.NewUnstartedServer(h2c.NewHandler(n.wrap(h), &http2.Server{MaxConcurrentStreams: 100}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, n
}

func TestH2COpenLoopMeasuresServiceTime(t *testing.T) {
	s := &stub{delay: 20 * time.Millisecond}
	url, n := serveH2C(t, s)
	cfg := config(url, Model{Rate: 200, ExpectedLatency: 20 * time.Millisecond}, 2*time.Second)
	cfg.Request.Protocol, cfg.Request.Streams = protocol.H2C, 10
	cfg.Warmup = 300 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 400 || res.Successes != res.Requests {
		t.Fatalf("%d requests, %d successes (errors %v, codes %v); want 400 of each", res.Requests, res.Successes, res.ErrorKinds, res.Codes)
	}
	if res.Latency.P50 < 20*time.Millisecond || res.Latency.P50 > 60*time.Millisecond {
		t.Errorf("p50 %v, want the server's 20 ms plus a little", res.Latency.P50)
	}
	if res.OwnDelay.Count != res.Requests || res.OwnDelay.P50 > 10*time.Millisecond {
		t.Errorf("own delay: %d recorded, p50 %v; want one per request, far below the server's 20 ms", res.OwnDelay.Count, res.OwnDelay.P50)
	}
	if res.FirstByte.Count != res.Requests {
		t.Errorf("%d first bytes for %d requests", res.FirstByte.Count, res.Requests)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.protos["HTTP/2.0"] != int(s.hits.Load()) {
		t.Errorf("the server saw %v, want HTTP/2.0 only", n.protos)
	}
	// 200 rps × 20 ms: about 4 in flight, which 10 streams a connection carry on one or two.
	if got := n.conns.Load(); got > 4 {
		t.Errorf("%d connections for about 4 requests in flight on 10 streams each", got)
	}
}

// Closed loop: each connection keeps its streams busy; the server sees connections × streams in
// flight at once.
func TestH2CClosedLoopFillsStreams(t *testing.T) {
	s := &stub{delay: 10 * time.Millisecond}
	url, n := serveH2C(t, s)
	cfg := config(url, Model{Connections: 2}, time.Second)
	cfg.Request.Protocol, cfg.Request.Streams = protocol.H2C, 8
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 100 || res.Successes != res.Requests {
		t.Fatalf("%d requests, %d successes (errors %v); want many, all answered", res.Requests, res.Successes, res.ErrorKinds)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.most < 12 || n.most > 16 {
		t.Errorf("at most %d requests in flight at the server, want about 2 connections × 8 streams", n.most)
	}
	if got := n.conns.Load(); got > 6 {
		t.Errorf("%d connections, want about 2", got)
	}
}

func TestH2CTimeouts(t *testing.T) {
	url, _ := serveH2C(t, &stub{delay: 300 * time.Millisecond})
	cfg := config(url, Model{Rate: 20, ExpectedLatency: time.Millisecond}, 500*time.Millisecond)
	cfg.Request.Protocol, cfg.Request.Streams = protocol.H2C, 4
	cfg.Timeout = 100 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Timeouts != res.Requests {
		t.Errorf("%d requests, %d timeouts (errors %v); want every one timed out", res.Requests, res.Timeouts, res.ErrorKinds)
	}
}

func TestH2OverTLS(t *testing.T) {
	s := &stub{delay: 5 * time.Millisecond}
	ts := serveTLS(t, s, true)
	cfg := tlsConfig(ts, Model{Rate: 100, ExpectedLatency: 5 * time.Millisecond}, time.Second, true)
	cfg.Request.Protocol, cfg.Request.Streams = protocol.H2, 4
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 99 || res.Successes != res.Requests {
		t.Fatalf("%d requests, %d successes (errors %v); want 100 of each", res.Requests, res.Successes, res.ErrorKinds)
	}
	if res.Connections.TLSVersion != "TLS 1.3" || res.OwnDelay.Count != res.Requests {
		t.Errorf("version %q, %d own delays; want TLS 1.3, one per request", res.Connections.TLSVersion, res.OwnDelay.Count)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.protos["HTTP/2.0"] != int(res.Requests) {
		t.Errorf("the server saw %v, want HTTP/2.0 only", ts.protos)
	}
}

// A server that does not agree to h2 by ALPN fails each request with a reason.
func TestH2RefusedByALPN(t *testing.T) {
	ts := serveTLS(t, &stub{}, false)
	cfg := tlsConfig(ts, Model{Rate: 20, ExpectedLatency: time.Millisecond}, 250*time.Millisecond, false)
	cfg.Request.Protocol = protocol.H2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != res.Requests {
		t.Fatalf("%d requests, %d errors; want every one failed", res.Requests, res.Errors)
	}
	for kind := range res.ErrorKinds {
		if kind != "tls handshake: "+errNoH2.Error() {
			t.Errorf("error %q, want the ALPN refusal", kind)
		}
	}
}

// A new connection per request in HTTP/2: one stream each, whatever the streams asked for.
func TestH2CNewConnectionPerRequest(t *testing.T) {
	url, n := serveH2C(t, &stub{})
	// Arrivals closer than a dial takes leave requests waiting when a connection comes up: it
	// must still take one of them only.
	cfg := config(url, Model{Rate: 2000, ExpectedLatency: time.Millisecond}, 250*time.Millisecond)
	cfg.Request.Protocol, cfg.Request.Streams, cfg.Request.NewConnection = protocol.H2C, 4, true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 20 || res.Successes != res.Requests || res.Connections.Opened != res.Requests || n.conns.Load() != res.Requests {
		t.Errorf("%d requests, %d successes, %d connections opened, %d at the server; want one connection per request", res.Requests, res.Successes, res.Connections.Opened, n.conns.Load())
	}
}

// A request's header block decodes to its fields, the names HPACK's static table holds sent by
// their index (Tomcat resets a stream whose pseudo-headers come as new names).
func TestH2HeaderBlock(t *testing.T) {
	w := &wireRequest{target: vegeta.Target{Method: "POST", URL: "https://127.0.0.1:8082/ingest?x=1", Body: []byte("{}"),
		Header: http.Header{"Content-Type": {"application/json"}, "X-Device": {"d-1"}}}}
	if err := encodeH2(w, "https"); err != nil {
		t.Fatal(err)
	}
	if w.h2block[0] != 0x02 {
		t.Errorf("first byte %#x, want 0x02 (:method by its static index, not indexed itself)", w.h2block[0])
	}
	fields, err := hpack.NewDecoder(4096, nil).DecodeFull(w.h2block)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fields {
		got[f.Name] = f.Value
	}
	want := map[string]string{":method": "POST", ":scheme": "https", ":authority": "127.0.0.1:8082", ":path": "/ingest?x=1",
		"content-type": "application/json", "x-device": "d-1", "user-agent": userAgent, "content-length": "2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	for i, f := range fields[:4] {
		if !strings.HasPrefix(f.Name, ":") {
			t.Errorf("field %d is %s: pseudo-headers come first", i, f.Name)
		}
	}
}

// A server may open any header block with a dynamic table size update (Tomcat does): every answer
// decodes, not only the connection's first.
func TestH2CTableSizeUpdateOnEveryBlock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveSizeUpdates(c)
		}
	}()
	cfg := config("http://"+ln.Addr().String()+"/", Model{Connections: 1}, 300*time.Millisecond)
	cfg.Request.Protocol, cfg.Request.Streams = protocol.H2C, 1
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests < 3 || res.Successes != res.Requests {
		t.Errorf("%d requests, %d successes (errors %v); want several, every one answered", res.Requests, res.Successes, res.ErrorKinds)
	}
}

// serveSizeUpdates answers every stream of c 200 {"id":1} with a header block that starts with a
// table size update to 4096 (0x3f 0xe1 0x1f), then :status 200 from the static table (0x88) and
// x-a: b added to the dynamic table (0x40…): the decoder refuses an update out of place only once
// its table holds an entry.
func serveSizeUpdates(c net.Conn) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	answer := func(id uint32) error {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte{0x3f, 0xe1, 0x1f, 0x88, 0x40, 3, 'x', '-', 'a', 1, 'b'}, EndHeaders: true}); err != nil {
			return err
		}
		return fr.WriteData(id, true, []byte(`{"id":1}`))
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.HeadersFrame:
			if f.StreamEnded() && answer(f.StreamID) != nil {
				return
			}
		case *http2.DataFrame:
			if f.StreamEnded() && answer(f.StreamID) != nil {
				return
			}
		}
	}
}
