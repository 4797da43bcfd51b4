package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// countingServer counts the connections it accepts.
func countingServer(t *testing.T, h http.HandlerFunc, idleTimeout time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.IdleTimeout = idleTimeout
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// get sends one request through c and returns the status and the body read to its end.
func send(t *testing.T, c *http.Client, method, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestTransportKeepsConnectionsAlive(t *testing.T) {
	big := strings.Repeat("x", 100_000) // larger than the connection's read buffer
	cases := []struct {
		name      string
		handler   http.HandlerFunc
		wantBody  string
		wantConns int64
	}{
		{"small body", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"id":1}`) }, `{"id":1}`, 1},
		{"chunked body", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"id":`)
			w.(http.Flusher).Flush() // no Content-Length: chunked
			io.WriteString(w, `1}`)
		}, `{"id":1}`, 1},
		{"large body", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }, big, 1},
		{"server closes after each answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, `{"id":1}`)
		}, `{"id":1}`, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, conns := countingServer(t, c.handler, 0)
			client := newClient(5 * time.Second)
			defer client.CloseIdleConnections()
			for i := range 20 {
				code, body, err := send(t, client, http.MethodPost, srv.URL, `{"n":1}`)
				if err != nil || code != 200 || body != c.wantBody {
					t.Fatalf("request %d: %d, %d bytes, %v", i, code, len(body), err)
				}
			}
			if got := conns.Load(); got != c.wantConns {
				t.Errorf("20 sequential requests used %d connections, want %d", got, c.wantConns)
			}
		})
	}
}

func TestTransportSendsTheRequest(t *testing.T) {
	var got atomic.Value
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Content-Type") + " " + string(b))
	}, 0)
	client := newClient(5 * time.Second)
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/ingest?x=1", bytes.NewReader([]byte(`{"a":2}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `PUT /ingest?x=1 application/json {"a":2}`; got.Load() != want {
		t.Errorf("server saw %q, want %q", got.Load(), want)
	}
}

// TestTransportSurvivesServerClosingIdleConnections: a server's keep-alive timeout closes a
// connection while it waits in the pool; the next request must not fail for it.
func TestTransportSurvivesServerClosingIdleConnections(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		checkIdle time.Duration
	}{
		// Not replayable: the connection must be found closed before the request is written.
		{"POST, idle connection checked", http.MethodPost, 10 * time.Millisecond},
		// Replayable: sent again on a new connection when the old one turns out closed.
		{"GET, not checked, sent again", http.MethodGet, time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 50*time.Millisecond)
			tr := newTransport(5 * time.Second)
			tr.checkIdle = c.checkIdle
			client := &http.Client{Transport: tr}
			defer client.CloseIdleConnections()
			if _, _, err := send(t, client, c.method, srv.URL, "a"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // the server closes the idle connection
			code, body, err := send(t, client, c.method, srv.URL, "b")
			if err != nil || code != 200 || body != "ok" {
				t.Fatalf("after the server closed the idle connection: %d %q %v", code, body, err)
			}
			if got := conns.Load(); got != 2 {
				t.Errorf("%d connections, want 2 (the closed one replaced)", got)
			}
		})
	}
}

func TestTransportTimeoutIsOneErrorKind(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "late")
	}, 0)
	client := newClient(50 * time.Millisecond)
	kinds := map[string]int{}
	for range 3 {
		begin := time.Now()
		_, _, err := send(t, client, http.MethodGet, srv.URL, "")
		if err == nil {
			t.Fatal("a 300 ms answer within a 50 ms timeout")
		}
		if took := time.Since(begin); took > 250*time.Millisecond {
			t.Errorf("timed out after %v, want about 50 ms", took)
		}
		if !isTimeout(err.Error()) {
			t.Errorf("error %q is not counted as a timeout", err)
		}
		kinds[errorKind(err.Error())]++
	}
	if len(kinds) != 1 {
		t.Errorf("timeouts on 3 connections counted as %d kinds, want 1: %v", len(kinds), kinds)
	}
}

func TestTransportRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/"
	l.Close() // nothing listens there now
	_, _, err = send(t, newClient(time.Second), http.MethodGet, url, "")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v, want connection refused", err)
	}
}

// heldDials lets a test decide when each dial of a transport completes.
type heldDials struct {
	release chan struct{}
	dialing atomic.Int64 // dials in progress
	most    atomic.Int64 // most dials in progress at once
	total   atomic.Int64
}

func holdDials(tr *transport) *heldDials {
	h := &heldDials{release: make(chan struct{})}
	dial := tr.dial
	tr.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.total.Add(1)
		n := h.dialing.Add(1)
		defer h.dialing.Add(-1)
		for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
		}
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return dial(ctx, network, addr)
	}
	return h
}

func get(t *testing.T, tr *transport, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr.RoundTrip(req)
}

// pooled counts tr's idle connections and the requests waiting for one.
func pooled(tr *transport) (idle, waiting int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.idle), len(tr.waiting)
}

// fetch sends a GET through tr and reads the answer to its end, which hands the connection back.
func fetch(t *testing.T, tr *transport, url string) error {
	resp, err := get(t, tr, url)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// A request that finds every connection busy takes the first one handed back rather than waiting
// for a connection of its own: dialing one per waiting request turned hiccups into storms.
func TestWaitingRequestTakesTheConnectionHandedBack(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 0)
	tr := newTransport(5 * time.Second)
	defer tr.CloseIdleConnections()
	dials := holdDials(tr)
	go func() { dials.release <- struct{}{} }() // the first request's dial only
	first, err := get(t, tr, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fetch(t, tr, srv.URL) }()
	for dials.dialing.Load() == 0 { // the second request waits, and a dial is under way for it
		time.Sleep(time.Millisecond)
	}
	io.Copy(io.Discard, first.Body)
	first.Body.Close() // hands the connection over
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request did not get the connection handed back")
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("the server saw %d connections before the second dial completed, want 1", got)
	}
	close(dials.release) // the held dial completes: its connection waits in the pool
	deadline := time.Now().Add(5 * time.Second)
	for dials.dialing.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if idle, _ := pooled(tr); idle != 2 {
		t.Errorf("%d idle connections after both answers and the late dial, want 2", idle)
	}
}

func TestTransportBoundsDialsInProgress(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 0)
	tr := newTransport(5 * time.Second)
	defer tr.CloseIdleConnections()
	dials := holdDials(tr)
	const requests = 3 * maxDialing
	errs := make(chan error, requests)
	for range requests {
		go func() { errs <- fetch(t, tr, srv.URL) }()
	}
	for dials.dialing.Load() < maxDialing {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // room for a dial beyond the bound, were there one
	close(dials.release)
	for range requests {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if most := dials.most.Load(); most != maxDialing {
		t.Errorf("%d dials in progress at once, want at most and at least %d", most, maxDialing)
	}
	// A dial starts only for a waiting request, which may yet take a connection handed back:
	// at most maxDialing dials beyond one per request.
	if total := dials.total.Load(); total > requests+maxDialing {
		t.Errorf("%d dials for %d requests", total, requests)
	}
}

func TestTransportWaitEndsAtTheRequestTimeout(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 0)
	tr := newTransport(50 * time.Millisecond)
	defer tr.CloseIdleConnections()
	holdDials(tr) // never released: the dial ends at its deadline
	began := time.Now()
	_, err := get(t, tr, srv.URL)
	if !errors.Is(err, errTimeout) {
		t.Fatalf("err = %v, want the timeout error", err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("gave up after %s, want about the 50ms timeout", took)
	}
	if _, waiting := pooled(tr); waiting != 0 {
		t.Errorf("%d requests still recorded as waiting", waiting)
	}
}

// The generator's own delay counts the time it held a request, not the server's: a server that
// takes 30 ms adds nothing to it, an answer left unread for 30 ms after it arrived adds 30 ms.
func TestOwnDelayCountsTheGeneratorsTimeOnly(t *testing.T) {
	const hold = 30 * time.Millisecond
	cases := []struct {
		name            string
		serverTakes     time.Duration
		readAfter       time.Duration
		atLeast, atMost time.Duration
	}{
		{"slow server, prompt reader", hold, 0, 0, hold / 2},
		{"fast server, late reader", 0, hold, hold, 10 * hold},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(tc.serverTakes)
				io.WriteString(w, `{"id":1}`)
			}, time.Minute)
			tr := newTransport(5 * time.Second)
			defer tr.CloseIdleConnections()
			own := newOwnDelay(time.Now(), nil, time.Minute)
			tr.own = own
			resp, err := get(t, tr, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.readAfter)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			s := own.summary()
			if s.Count != 1 {
				t.Fatalf("%d delays recorded, want 1 (receive timestamps unavailable?)", s.Count)
			}
			if s.Max < tc.atLeast || s.Max > tc.atMost {
				t.Errorf("own delay %v, want between %v and %v", s.Max, tc.atLeast, tc.atMost)
			}
		})
	}
}

// In open loop the generator is responsible for a request from its due time, found from the
// sequence number vegeta gives it.
func TestOwnDelayStartsAtTheDueTime(t *testing.T) {
	began := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	own := newOwnDelay(began, &pacer{rate: 1000}, time.Minute)
	now := began.Add(time.Second)
	cases := []struct {
		seq  string
		want time.Time
	}{
		{"0", began.Add(time.Millisecond)},
		{"499", began.Add(500 * time.Millisecond)},
		{"", now}, // no sequence: from when the transport got it
		{"not-a-number", now},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		if tc.seq != "" {
			req.Header.Set(seqHeader, tc.seq)
		}
		if got := own.start(req, now); !got.Equal(tc.want) {
			t.Errorf("seq %q: start %v, want %v", tc.seq, got.Sub(began), tc.want.Sub(began))
		}
	}
}

// receivedAt reads the receive timestamp among the control messages recvmsg returns, and nothing
// from a truncated or foreign one.
func TestReceivedAt(t *testing.T) {
	at := time.Date(2026, 11, 23, 2, 30, 0, 123456789, time.UTC)
	stamp := func() []byte {
		b := make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS
		h.SetLen(syscall.CmsgLen(int(unsafe.Sizeof(syscall.Timespec{}))))
		*(*syscall.Timespec)(unsafe.Pointer(&b[syscall.CmsgLen(0)])) = syscall.NsecToTimespec(at.UnixNano())
		return b
	}
	cases := []struct {
		name string
		oob  []byte
		ok   bool
	}{
		{"timestamp", stamp(), true},
		{"after another message", append(syscall.UnixRights(0), stamp()...), true},
		{"another message only", syscall.UnixRights(0), false},
		{"cut short", stamp()[:syscall.CmsgLen(4)], false},
		{"nothing", nil, false},
	}
	for _, c := range cases {
		got, ok := receivedAt(c.oob)
		if ok != c.ok || ok && !got.Equal(at) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, at, c.ok)
		}
	}
}
