package load

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
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

// stopAfter is a pacer that releases n requests as fast as the connections take them, then stops.
type stopAfter uint64

func (n stopAfter) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, hits >= uint64(n)
}
func (n stopAfter) Rate(time.Duration) float64 { return 0 }

func newTestAttacker(t *testing.T, timeout time.Duration) *attacker {
	t.Helper()
	a, err := newAttacker(timeout, maxBody, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.close)
	return a
}

// sendN sends n requests to target through a, at most conns at a time, and returns their
// results in the order they ended, bodies copied.
func sendN(t *testing.T, a *attacker, target vegeta.Target, n, conns int, own *ownDelay, each func(*vegeta.Result)) []vegeta.Result {
	t.Helper()
	var out []vegeta.Result
	err := a.attack(context.Background(), func(tg *vegeta.Target) error { *tg = target; return nil },
		stopAfter(n), time.Now(), conns, hooks{own: own, each: func(r *vegeta.Result, _, _ time.Time, _ int) {
			c := *r
			c.Body = bytes.Clone(r.Body)
			out = append(out, c)
			if each != nil {
				each(r)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != n {
		t.Fatalf("%d results for %d requests", len(out), n)
	}
	return out
}

func TestAttackerKeepsConnectionsAlive(t *testing.T) {
	big := strings.Repeat("x", 100_000) // larger than the attacker's read buffer
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
			a := newTestAttacker(t, 5*time.Second)
			for i, r := range sendN(t, a, vegeta.Target{Method: http.MethodPost, URL: srv.URL, Body: []byte(`{"n":1}`)}, 20, 1, nil, nil) {
				if r.Error != "" || r.Code != 200 || string(r.Body) != c.wantBody {
					t.Fatalf("request %d: %d, %d bytes, %q", i, r.Code, len(r.Body), r.Error)
				}
			}
			if got := conns.Load(); got != c.wantConns {
				t.Errorf("20 sequential requests used %d connections, want %d", got, c.wantConns)
			}
		})
	}
}

func TestAttackerSendsTheRequest(t *testing.T) {
	var got atomic.Value
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Content-Type") + " " + r.UserAgent() + " " + string(b))
	}, 0)
	a := newTestAttacker(t, 5*time.Second)
	tgt := vegeta.Target{Method: http.MethodPut, URL: srv.URL + "/ingest?x=1", Body: []byte(`{"a":2}`), Header: http.Header{"Content-Type": {"application/json"}}}
	if r := sendN(t, a, tgt, 1, 1, nil, nil)[0]; r.Code != 200 || r.Error != "" {
		t.Fatalf("%d %q", r.Code, r.Error)
	}
	if want := `PUT /ingest?x=1 application/json iotbench {"a":2}`; got.Load() != want {
		t.Errorf("server saw %q, want %q", got.Load(), want)
	}
}

// TestAttackerSurvivesServerClosingIdleConnections: a server's keep-alive timeout closes a
// connection while it is idle; the next request must not fail for it.
func TestAttackerSurvivesServerClosingIdleConnections(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 50*time.Millisecond)
			a := newTestAttacker(t, 5*time.Second)
			tgt := vegeta.Target{Method: method, URL: srv.URL}
			sendN(t, a, tgt, 1, 1, nil, nil)
			time.Sleep(300 * time.Millisecond) // the server closes the idle connection
			if r := sendN(t, a, tgt, 1, 1, nil, nil)[0]; r.Code != 200 || string(r.Body) != "ok" {
				t.Fatalf("after the server closed the idle connection: %d %q %q", r.Code, r.Body, r.Error)
			}
			if got := conns.Load(); got != 2 {
				t.Errorf("%d connections, want 2 (the closed one replaced)", got)
			}
		})
	}
}

// closingOnSecond is a server that answers the first request of each connection and closes the
// connection when the second arrives, without answering: the race of a keep-alive timeout with
// a request already sent.
func closingOnSecond(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 4096)
				if _, err := c.Read(buf); err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				c.Read(buf) // the second request: closed on, unanswered
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/", &conns
}

// A request the server closed a reused connection on, unanswered, is sent again on a new one
// when it may be sent twice (net/http's rule), and fails otherwise.
func TestAttackerSendsAgainOnlyWhatMayBeSentTwice(t *testing.T) {
	cases := []struct {
		method string
		header http.Header
		again  bool
	}{
		{http.MethodGet, nil, true},
		{http.MethodPost, nil, false},
		{http.MethodPost, http.Header{"Idempotency-Key": {"k"}}, true},
	}
	for _, c := range cases {
		t.Run(c.method+" "+strconv.Itoa(len(c.header)), func(t *testing.T) {
			url, conns := closingOnSecond(t)
			a := newTestAttacker(t, 5*time.Second)
			rs := sendN(t, a, vegeta.Target{Method: c.method, URL: url, Header: c.header}, 2, 1, nil, nil)
			if rs[0].Code != 200 {
				t.Fatalf("first request: %d %q", rs[0].Code, rs[0].Error)
			}
			second := rs[1]
			if got := second.Code == 200; got != c.again {
				t.Errorf("second request: %d %q; sent again and answered: %v, want %v", second.Code, second.Error, got, c.again)
			}
			if !c.again && !strings.Contains(second.Error, "closed the connection") {
				t.Errorf("second request's error %q, want the server closing the connection", second.Error)
			}
			if want := map[bool]int64{true: 2, false: 1}[c.again]; conns.Load() != want {
				t.Errorf("%d connections, want %d", conns.Load(), want)
			}
		})
	}
}

func TestAttackerTimeoutIsOneErrorKind(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "late")
	}, 0)
	a := newTestAttacker(t, 50*time.Millisecond)
	kinds := map[string]int{}
	for range 3 {
		r := sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: srv.URL}, 1, 1, nil, nil)[0]
		if r.Error == "" {
			t.Fatal("a 300 ms answer within a 50 ms timeout")
		}
		if r.Latency > 250*time.Millisecond {
			t.Errorf("timed out after %v, want about 50 ms", r.Latency)
		}
		if !isTimeout(r.Error) {
			t.Errorf("error %q is not counted as a timeout", r.Error)
		}
		kinds[errorKind(r.Error)]++
	}
	if len(kinds) != 1 {
		t.Errorf("timeouts on 3 connections counted as %d kinds, want 1: %v", len(kinds), kinds)
	}
}

func TestAttackerRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/"
	l.Close() // nothing listens there now
	a := newTestAttacker(t, time.Second)
	for _, r := range sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: url}, 3, 1, nil, nil) {
		if want := "dial: connect: connection refused"; r.Error != want {
			t.Errorf("error %q, want %q", r.Error, want)
		}
	}
}

// Requests released all at once open at most maxDialing connections at a time, and no more
// than one per request beyond that bound: dialing one per waiting request turned hiccups into
// storms of handshakes.
func TestAttackerBoundsDialsInProgress(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 0)
	a := newTestAttacker(t, 5*time.Second)
	const requests = 3 * maxDialing
	most := 0
	var dialed int64
	for _, r := range sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: srv.URL}, requests, requests, nil, func(*vegeta.Result) {
		most = max(most, a.dialing)
	}) {
		if r.Code != 200 {
			t.Fatalf("%d %q", r.Code, r.Error)
		}
	}
	dialed = int64(a.connGen)
	if most > maxDialing || a.mostDialing != maxDialing {
		t.Errorf("%d dials in progress at once (%d seen between answers), want at most and at least %d", a.mostDialing, most, maxDialing)
	}
	if dialed > requests || conns.Load() > requests {
		t.Errorf("%d dials, %d connections for %d requests", dialed, conns.Load(), requests)
	}
}

// A request waiting while a connection is being opened for it takes whichever connection is
// ready first: here one handed back by the request before it.
func TestWaitingRequestTakesTheConnectionHandedBack(t *testing.T) {
	a := newTestAttacker(t, 5*time.Second)
	w, err := encodeRequest(&vegeta.Target{Method: http.MethodGet, URL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	a.conns = append(a.conns, &conn{fd: fds[0], state: busy}) // the connection handed back
	slot := a.takeSlot()
	a.slots[slot].wire = w
	a.waiting.push(ticket{slot: slot, gen: a.slots[slot].gen})
	a.dialing = 1 // and a dial under way for it
	a.each = func(*vegeta.Result, time.Time, time.Time, int) { t.Error("a result, for a request that was sent") }
	a.handBack(a.conns[0])
	buf := make([]byte, 1024)
	n, _ := unix.Read(fds[1], buf)
	if !bytes.Equal(buf[:n], w.bytes) {
		t.Errorf("the connection handed back carried %q, want the waiting request", buf[:n])
	}
	if a.waiting.len() != 0 || len(a.idle) != 0 || a.slots[slot].c != a.conns[0] {
		t.Errorf("%d waiting, %d idle: the request should be on the connection handed back", a.waiting.len(), len(a.idle))
	}
	a.dialing = 0
}

// A request released with connections idle goes on the newest, but its own delay runs from when
// the oldest was free: it could have gone on that one, and the wait since is the generator's
// (seen: 45% of the own delays at 12,000 rps left out the wait for the loop's turn).
func TestReleasedRequestIsFreeFromTheLongestIdleConnection(t *testing.T) {
	a := newTestAttacker(t, 5*time.Second)
	target := vegeta.Target{Method: http.MethodGet, URL: "http://127.0.0.1:1/"}
	w, err := encodeRequest(&target)
	if err != nil {
		t.Fatal(err)
	}
	a.wire, a.addr = w, w.addr
	now := time.Now()
	var peers [2]int
	for i, idleFor := range []time.Duration{3 * time.Millisecond, 100 * time.Microsecond} {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		c := &conn{fd: fds[0], state: idle, reused: true, arrival: now.Add(-idleFor)}
		a.conns, a.idle, peers[i] = append(a.conns, c), append(a.idle, c), fds[1]
	}
	if err := a.release(context.Background(), func(tg *vegeta.Target) error { *tg = target; return nil }, 0, now); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	if n, _ := unix.Read(peers[1], buf); !bytes.Equal(buf[:max(n, 0)], w.bytes) {
		t.Errorf("the newest idle connection carried %q, want the request", buf[:max(n, 0)])
	}
	if r := a.slots[0]; r.c != a.conns[1] || !r.free.Equal(now.Add(-3*time.Millisecond)) {
		t.Errorf("the request free from %v before its release, on connection %p; want 3ms, on the newest %p", now.Sub(r.free), r.c, a.conns[1])
	}
}

// listenFull is a loopback address whose listener takes no more connections: a connect to it
// waits until it gives up.
func listenFull(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	// Fill the accept queue, never accepted.
	for range 2 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel accepts connections beyond a full backlog")
	}
	return "http://" + addr + "/"
}

func TestAttackerWaitEndsAtTheRequestTimeout(t *testing.T) {
	url := listenFull(t)
	a := newTestAttacker(t, 50*time.Millisecond)
	began := time.Now()
	r := sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: url}, 1, 1, nil, nil)[0]
	if r.Error != errTimeout.Error() {
		t.Fatalf("error %q, want the timeout", r.Error)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("gave up after %s, want about the 50ms timeout", took)
	}
	if a.waiting.len() != 0 || a.dialing != 0 || a.open != 0 {
		t.Errorf("%d requests waiting, %d dials, %d connections left", a.waiting.len(), a.dialing, a.open)
	}
}

// The generator's own delay counts the time it held a request, not the server's: a server that
// takes 30 ms adds nothing to it, an answer left unread for 30 ms after it arrived adds 30 ms.
func TestOwnDelayCountsTheGeneratorsTimeOnly(t *testing.T) {
	const hold = 30 * time.Millisecond
	t.Run("slow server, prompt reader", func(t *testing.T) {
		srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(hold)
			io.WriteString(w, `{"id":1}`)
		}, time.Minute)
		a := newTestAttacker(t, 5*time.Second)
		own := newOwnDelay(time.Now(), nil, time.Minute)
		sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: srv.URL}, 1, 1, own, nil)
		if s := own.summary(); s.Count != 1 || s.Max > hold/2 {
			t.Errorf("%d delays, max %v; want 1, below %v (receive timestamps unavailable?)", s.Count, s.Max, hold/2)
		}
	})
	t.Run("fast server, late reader", func(t *testing.T) {
		// The generator, busy with the first answer for longer than hold, reads the second late.
		srv := answersTogether(t)
		a := newTestAttacker(t, 5*time.Second)
		own := newOwnDelay(time.Now(), nil, time.Minute)
		first := true
		sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: srv.URL}, 2, 2, own, func(*vegeta.Result) {
			if first {
				first = false
				time.Sleep(hold + hold/5)
			}
		})
		if s := own.summary(); s.Count != 2 || s.Max < hold || s.Max > 10*hold {
			t.Errorf("%d delays, max %v; want 2, the later between %v and %v", s.Count, s.Max, hold, 10*hold)
		}
	})
}

// answersTogether is a server that holds the first of two requests until the second has come,
// then answers both at once.
func answersTogether(t *testing.T) *httptest.Server {
	var arrived sync.WaitGroup
	arrived.Add(2)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		arrived.Wait()
		io.WriteString(w, `{"id":1}`)
	}, time.Minute)
	return srv
}

// An answer the generator reads late keeps the latency of its arrival in the kernel: the wait
// until it was read is the generator's own delay, not the server's (the loop reads in turns).
func TestLatencyEndsWhenTheAnswerArrived(t *testing.T) {
	const hold = 30 * time.Millisecond
	// The generator, busy with the first answer for longer than hold, reads the second late.
	srv := answersTogether(t)
	a := newTestAttacker(t, 5*time.Second)
	type answer struct{ sent, received, read time.Time }
	var answers []answer
	err := a.attack(context.Background(), func(tg *vegeta.Target) error { *tg = vegeta.Target{Method: http.MethodGet, URL: srv.URL}; return nil },
		stopAfter(2), time.Now(), 2, hooks{each: func(r *vegeta.Result, _, received time.Time, _ int) {
			answers = append(answers, answer{r.Timestamp, received, r.Timestamp.Add(r.Latency)})
			if len(answers) == 1 {
				time.Sleep(hold + hold/5)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 2 {
		t.Fatalf("%d answers, want 2", len(answers))
	}
	late := answers[1]
	if read := late.read.Sub(late.sent); read < hold {
		t.Fatalf("the second answer was read %v after it was sent, want at least %v (the generator was busy)", read, hold)
	}
	switch took := late.received.Sub(late.sent); {
	case late.received.IsZero():
		t.Errorf("no receive time for the second answer: its latency would carry the late read")
	case took > hold/2:
		t.Errorf("the second answer received %v after it was sent, want within %v: its latency would carry the late read", took, hold/2)
	}
}

// In open loop the generator is responsible for a request from its due time, found from its
// sequence number; in closed loop from when it was released.
func TestOwnDelayStartsAtTheDueTime(t *testing.T) {
	began := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	now := began.Add(time.Second)
	open := newOwnDelay(began, &pacer{rate: 1000}, time.Minute)
	closed := newOwnDelay(began, nil, time.Minute)
	cases := []struct {
		own  *ownDelay
		seq  uint64
		want time.Time
	}{
		{open, 0, began.Add(time.Millisecond)},
		{open, 499, began.Add(500 * time.Millisecond)},
		{closed, 499, now},
	}
	for _, tc := range cases {
		if got := tc.own.start(tc.seq, now); !got.Equal(tc.want) {
			t.Errorf("seq %d, schedule %v: start %v, want %v", tc.seq, tc.own.schedule != nil, got.Sub(began), tc.want.Sub(began))
		}
	}
}

// upTo paces the first n requests as its schedule does, then stops.
type upTo struct {
	*pacer
	n uint64
}

func (u upTo) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= u.n {
		return 0, true
	}
	return u.pacer.Pace(elapsed, hits)
}

// A turn gathers at most turnRequests requests due on average, and turns are never closer than
// a high rate needs.
func TestATurnGathersAFewRequests(t *testing.T) {
	for _, rate := range []int{0, 1, 1000, 10000, 20000, 20001, 50000, 200000} {
		turn := turnFor(rate)
		if turn <= 0 || turn > longestTurn {
			t.Errorf("rate %d: a turn every %v, want within (0, %v]", rate, turn, longestTurn)
		}
		if perTurn := turn.Seconds() * float64(rate); perTurn > turnRequests+1e-9 {
			t.Errorf("rate %d: a turn every %v gathers %.2f requests due, want at most %v", rate, turn, perTurn, turnRequests)
		}
		if rate > 0 && turn < longestTurn && turn.Seconds()*float64(rate) < turnRequests*0.99 {
			t.Errorf("rate %d: a turn every %v is closer than %v requests need", rate, turn, turnRequests)
		}
	}
}

// In open loop the attack turns about once per turnFor, however many answers and requests due
// fall between two turns: at 20,000 rps, answers and dues alone would wake it 40,000 times a
// second. (A turn that ends with answers waiting polls them rather than sleeping: that makes
// turns closer only when they are each short of the answers already in.) Every request is still
// sent and answered.
func TestTheOpenLoopTurnsInBatches(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"id":1}`) }, time.Minute)
	a := newTestAttacker(t, 5*time.Second)
	a.turnEvery = turnFor(20000)
	const n = 6000 // 300 ms at 20,000 rps
	turns, answered := 0, 0
	began := time.Now()
	err := a.attack(context.Background(), func(tg *vegeta.Target) error { *tg = vegeta.Target{Method: http.MethodGet, URL: srv.URL}; return nil },
		upTo{newPacer(20000, Share{}), n}, began, 1000, hooks{
			each: func(r *vegeta.Result, _, _ time.Time, _ int) {
				if r.Error == "" {
					answered++
				}
			},
			tick: func(now time.Time, _ uint64) (time.Time, time.Duration) { turns++; return now, -1 },
		})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	// A sleep a signal ended early makes a turn more: a fifth more than the bound is allowed.
	if most := int(took/a.turnEvery)*6/5 + 10; turns > most || answered != n {
		t.Errorf("%d turns in %v (want at most %d), %d of %d answered", turns, took.Round(time.Millisecond), most, answered, n)
	}
}

// slowAhead takes d of the loop's time the first time it says the next request is not yet due,
// as a turn's own work (its writes, its dials) may after the turn read the clock.
type slowAhead struct {
	upTo
	d    time.Duration
	done bool
}

func (s *slowAhead) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	wait, end := s.upTo.Pace(elapsed, hits)
	if wait > 0 && !s.done {
		s.done = true
		time.Sleep(s.d)
	}
	return wait, end
}

// The wait for the next request due leaves out what the turn spent since it read the clock: a
// wait of the whole time the pacer named released the request late by the turn's work (here
// 300 ms of a 400 ms wait, with nothing in flight to wake the loop sooner).
func TestTheWaitForTheNextRequestLeavesOutTheTurnsWork(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"id":1}`) }, time.Minute)
	a := newTestAttacker(t, 5*time.Second)
	const rate, work = 2, 300 * time.Millisecond // the one request due 500 ms in
	a.turnEvery = turnFor(rate)
	var latency time.Duration
	answered := 0
	began, p := time.Now(), newPacer(rate, Share{})
	slow := &slowAhead{upTo: upTo{p, 1}, d: work}
	err := a.attack(context.Background(), func(tg *vegeta.Target) error { *tg = vegeta.Target{Method: http.MethodGet, URL: srv.URL}; return nil },
		slow, began, 1, hooks{
			own: newOwnDelay(began, p, time.Minute), // the latency from the due time
			each: func(r *vegeta.Result, start, received time.Time, _ int) {
				if r.Error == "" {
					answered++
					latency = received.Sub(start)
				}
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	// On time, its latency is a dial and an answer on loopback; released late, the turn's
	// 300 ms and more. Half of that is left to a busy machine.
	if !slow.done || answered != 1 || latency >= work/2 {
		t.Errorf("turn's work done %v, %d of 1 answered, latency %v from its due time; want under %v", slow.done, answered, latency, work/2)
	}
}

// A stall of the loop (its core taken from it) makes the requests due meanwhile late, and their
// lateness is the generator's own delay whatever they waited for after: released at once, they
// find the connections busy with each other, and that wait must not hide the stall (it did: an
// own-delay p99 of 3 ms beside a latency p99 of 19 ms that stalls alone made).
func TestAStallOfTheLoopIsItsOwnDelay(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"id":1}`) }, time.Minute)
	a := newTestAttacker(t, 5*time.Second)
	const rate, n, stall = 2000, 1000, 40 * time.Millisecond // 80 of the 1,000 due in the stall
	a.turnEvery = turnFor(rate)
	began := time.Now()
	p := newPacer(rate, Share{})
	own := newOwnDelay(began, p, time.Minute)
	stalled, answered := false, 0
	err := a.attack(context.Background(), func(tg *vegeta.Target) error { *tg = vegeta.Target{Method: http.MethodGet, URL: srv.URL}; return nil },
		upTo{p, n}, began, n, hooks{
			own: own,
			each: func(r *vegeta.Result, _, _ time.Time, _ int) {
				if r.Error == "" {
					answered++
				}
			},
			tick: func(now time.Time, hits uint64) (time.Time, time.Duration) {
				if !stalled && hits >= n/2 {
					stalled = true
					time.Sleep(stall)
					return time.Now(), -1
				}
				return now, -1
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	// 60 of them (6%) were at least a quarter of the stall late; a busy machine adds to that.
	if s := own.summary(); answered != n || s.Count != n || s.P99 < stall/4 {
		t.Errorf("%d of %d answered, %d own delays, p99 %v; want every one, and the stall's lateness (%v and more for 6%%) in the p99", answered, n, s.Count, s.P99, stall/4)
	}
}

// A turn that begins behind its pace holds the requests it finds no idle connection for: it opens
// none for them (the connections are busy only because the requests came at once), and their
// wait is the generator's. The first turn on time queues them and opens connections.
func TestTurnBehindHoldsWhatItCannotServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	target := vegeta.Target{Method: http.MethodGet, URL: "http://" + ln.Addr().String() + "/"}
	tr := func(tg *vegeta.Target) error { *tg = target; return nil }
	a := newTestAttacker(t, 5*time.Second)
	a.maxConns = 10
	now := time.Now()
	for _, tc := range []struct {
		late      time.Duration
		wantDials int
	}{
		{late: 2 * behindAfter, wantDials: 0},
		{late: behindAfter / 2, wantDials: 2}, // the one held and this turn's
	} {
		a.turnLate = tc.late
		if err := a.release(context.Background(), tr, uint64(a.started), now); err != nil {
			t.Fatal(err)
		}
		a.dialForWaiting(now)
		if a.dialing != tc.wantDials {
			t.Errorf("a turn %v late: %d connections being opened, want %d", tc.late, a.dialing, tc.wantDials)
		}
		now = now.Add(time.Millisecond)
	}
	held, onTime := a.slots[0], a.slots[1]
	if want := held.taken.Add(time.Millisecond); !held.queued.Equal(want) || !onTime.queued.Equal(onTime.taken) {
		t.Errorf("queued %v and %v after their release; want 1ms (held, queued by the next turn) and 0",
			held.queued.Sub(held.taken), onTime.queued.Sub(onTime.taken))
	}
}

// A request's own delay runs from its due time through its lateness until it was queued; from
// there a wait for a connection is the target's. A request sent while held waited on the loop:
// all of it is the generator's.
func TestWaitForAConnectionAfterLateness(t *testing.T) {
	a := newTestAttacker(t, 5*time.Second)
	target := vegeta.Target{Method: http.MethodGet, URL: "http://127.0.0.1:1/"}
	w, err := encodeRequest(&target)
	if err != nil {
		t.Fatal(err)
	}
	due := time.Now()
	ms := time.Millisecond
	for _, tc := range []struct {
		name               string
		queued, free, want time.Time
	}{
		{"released on time, a connection free later", due, due.Add(3 * ms), due.Add(3 * ms)},
		{"released 2ms late, a connection free 1ms later", due.Add(2 * ms), due.Add(3 * ms), due.Add(ms)},
		{"released late, the one idle the longest free before it was due", due.Add(2 * ms), due.Add(-ms), due.Add(-ms)},
		{"held", time.Time{}, due.Add(3 * ms), time.Time{}},
	} {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := &conn{fd: fds[0], state: idle}
		a.conns = append(a.conns, c)
		slot := a.takeSlot()
		a.slots[slot] = request{start: due, taken: due.Add(2 * ms), queued: tc.queued, wire: w}
		a.send(c, slot, tc.free)
		if got := a.slots[slot].free; !got.Equal(tc.want) {
			t.Errorf("%s: own delay runs from %v after due, want %v", tc.name, got.Sub(due), tc.want.Sub(due))
		}
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
}
