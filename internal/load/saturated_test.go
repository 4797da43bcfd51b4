package load

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// saturatedServer is a target at its limit: it serves one connection at a time, each answer
// taking hold, and accepts no more connections than its queue of one holds, so that the
// kernel drops the SYNs of the rest (their dials hang, as against a server too busy to accept).
// After its first answer it takes the connection waiting in its queue too. It counts answers.
func saturatedServer(t *testing.T, hold time.Duration) (string, *atomic.Int64) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil { // an accept queue of one
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "saturated")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var answered atomic.Int64
	serve := func(c net.Conn, first chan<- struct{}) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			req.Body.Close()
			time.Sleep(hold)
			answered.Add(1) // before the answer, which the test may read before the next line ran
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{\"id\":1}")); err != nil {
				return
			}
			if first != nil {
				close(first)
				first = nil
			}
		}
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		first := make(chan struct{})
		go serve(c, first)
		<-first
		if c, err := ln.Accept(); err == nil { // the one queued; the SYNs after it were dropped
			go serve(c, nil)
		}
	}()
	return "http://" + ln.Addr().String() + "/", &answered
}

// A request that finds no idle connection against a saturated target waits for one: for an
// answer on a busy connection, since new connections cannot open (the target does not accept
// them). That wait is the target's backpressure, not the generator's: the generator's own delay
// stays what it took to write and read, while the latency holds the wait. (Before, the own delay
// counted it: bun-native at 25,187 rps with 2,252 in flight was called generator-limited for it.)
func TestOwnDelayLeavesTheWaitForABusyTargetsConnectionsOut(t *testing.T) {
	const hold = 30 * time.Millisecond
	url, answered := saturatedServer(t, hold)
	a := newTestAttacker(t, 10*time.Second)
	own := newOwnDelay(time.Now(), nil, time.Minute)
	began := time.Now()
	results := sendN(t, a, vegeta.Target{Method: http.MethodGet, URL: url}, 6, 6, own, nil)
	took := time.Since(began)
	for _, r := range results {
		if r.Code != http.StatusOK {
			t.Fatalf("answer %d %q", r.Code, r.Error)
		}
	}
	// Six requests released at once, on the two connections the target took, one answer at a
	// time on each: three holds at least, the later requests waiting a hold or more for one.
	if answered.Load() != 6 || took < 3*hold {
		t.Fatalf("%d answers in %v; want 6, in %v or more", answered.Load(), took, 3*hold)
	}
	if s := own.summary(); s.Count != 6 || s.Max > hold/2 {
		t.Errorf("%d own delays, max %v; want 6, each below %v: the wait for a connection is the target's", s.Count, s.Max, hold/2)
	}
}
