package load

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
