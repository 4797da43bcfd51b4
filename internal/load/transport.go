package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// transport is the HTTP/1.1 client the engine hands to vegeta: keep-alive connections, each
// carrying one request at a time, written and read by the goroutine that sends the request.
//
// net/http's Transport runs a reader and a writer goroutine per connection and passes every
// request and answer between them and the caller over channels; on the generator's one core that
// bookkeeping cost about a third of the CPU of each request (docs/generator.md). The framing here
// is still net/http's own (Request.Write, ReadResponse, their body readers): only the connection
// handling is ours, and the number of connections is bounded by vegeta's workers, one per worker
// at most.
type transport struct {
	timeout time.Duration // whole request: connect, write, answer and body
	// checkIdle: a connection idle longer than this is checked before reuse, since the server
	// may have closed it meanwhile (keep-alive timeouts are seconds, not less).
	checkIdle time.Duration

	// dial opens a connection; a field so that tests can hold dials back.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// own is set for a measured phase: each answered request records how long the generator
	// itself held it. Set before the phase's workers start and cleared after they end.
	own *ownDelay
	// received counts the bytes read from every connection (heads and bodies, errors too), as
	// wrk's Transfer/sec does; the engine reads it across a measured phase.
	received atomic.Int64

	mu      sync.Mutex
	idle    []*conn // most recently used last: a busy set of connections stays warm
	waiting []chan handoff
	dialing int
	closed  bool
}

// maxDialing bounds the connections being opened at once. A request that finds no idle
// connection waits for whichever comes first, a connection handed back or one newly opened, as
// net/http's Transport does. Dialing one connection per waiting request instead turned every
// hiccup of a few milliseconds at 10,000 rps into a storm: the requests due meanwhile opened a
// connection each (about 2,000), each costing the generator's core a TCP handshake, which put it
// further behind, for 100 to 200 ms (docs/generator.md).
const maxDialing = 4

// handoff is a connection given to a waiting request, or the error its dial met.
type handoff struct {
	c      *conn
	reused bool
	err    error
}

type conn struct {
	nc       net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	lastUsed time.Time
	// body is the answer being read: one at a time, so one per connection rather than one
	// allocated per request. Its reader closes it once (vegeta does), then it is the next one's.
	body connBody

	// The generator's own share of the request being served: from start (when it was due, or
	// handed to the transport) to written, and from arrival (the kernel's receive time of the
	// last data read, SO_TIMESTAMPNS) to the end of the answer. Zero arrival: not known.
	start, written, arrival time.Time

	// Reads go through recvmsg to get arrival; the state of one read lives here so that a
	// read allocates nothing.
	raw   syscall.RawConn // nil when timestamps could not be enabled: plain reads
	recv  func(fd uintptr) bool
	readP []byte
	readN int
	oob   []byte // allocated, so aligned for the control message headers read from it
	oobN  int
	err   error

	received *atomic.Int64 // the transport's count of bytes read; nil: not counted
}

// errTimeout replaces the network's own timeout errors, which name the connection's ports and so
// would count the same cause once per connection.
var errTimeout = errors.New("timeout: no complete answer within the request timeout")

func newTransport(timeout time.Duration) *transport {
	keepStamping()
	d := net.Dialer{KeepAlive: 30 * time.Second}
	return &transport{timeout: timeout, checkIdle: time.Second, dial: d.DialContext}
}

// RoundTrip sends req on an idle connection or a new one and reads the answer's head; the body is
// read by the caller, and closing it hands the connection back.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	deadline := now.Add(t.timeout)
	start := now
	if t.own != nil {
		start = t.own.start(req, now)
	}
	for {
		c, reused, err := t.get(req, now, deadline)
		if err != nil {
			return nil, plainError(err)
		}
		c.start = start
		resp, err := c.roundTrip(req, deadline)
		if err == nil {
			c.body = connBody{rc: resp.Body, c: c, t: t, reuse: !resp.Close}
			resp.Body = &c.body
			return resp, nil
		}
		c.nc.Close()
		// A reused connection the server closed while it was idle fails before any answer:
		// as net/http does, send again on a new one when that cannot do the work twice.
		var closed peerClosed
		if reused && errors.As(err, &closed) && replayable(req) {
			if req, err = rewind(req); err == nil {
				continue
			}
		}
		return nil, plainError(err)
	}
}

// peerClosed is a connection found closed by the server before any byte of an answer.
type peerClosed struct{ err error }

func (e peerClosed) Error() string { return e.err.Error() }
func (e peerClosed) Unwrap() error { return e.err }

// closedOr marks err as the peer having closed the connection, when it says so.
func closedOr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return peerClosed{err}
	}
	return err
}

func (c *conn) roundTrip(req *http.Request, deadline time.Time) (*http.Response, error) {
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if err := req.Write(c.bw); err != nil {
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, closedOr(err)
	}
	c.written, c.arrival = time.Now(), time.Time{}
	if _, err := c.br.Peek(1); err != nil {
		return nil, closedOr(err)
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		// An interim answer (103 Early Hints) precedes the real one.
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		return resp, nil
	}
}

// get pops the most recently used idle connection that is still open or, when there is none,
// waits for one: handed back by another request, or opened for it.
func (t *transport) get(req *http.Request, now, deadline time.Time) (*conn, bool, error) {
	t.mu.Lock()
	for n := len(t.idle); n > 0; n = len(t.idle) {
		c := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if now.Sub(c.lastUsed) < t.checkIdle || c.open() {
			c.lastUsed = now
			return c, true, nil
		}
		c.nc.Close()
		t.mu.Lock()
	}
	wait := make(chan handoff, 1)
	t.waiting = append(t.waiting, wait)
	if t.dialing < maxDialing {
		t.dialing++
		go t.connect(canonicalAddr(req), deadline)
	}
	t.mu.Unlock()

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case h := <-wait:
		return h.c, h.reused, h.err
	case <-timer.C:
	case <-req.Context().Done():
	}
	t.mu.Lock()
	if i := slices.Index(t.waiting, wait); i >= 0 {
		t.waiting = slices.Delete(t.waiting, i, i+1)
	}
	t.mu.Unlock()
	// Handed over between the timer and the lock: not this request's any more.
	select {
	case h := <-wait:
		if h.c != nil {
			t.put(h.c)
		}
	default:
	}
	if err := req.Context().Err(); err != nil {
		return nil, false, err
	}
	return nil, false, errTimeout
}

// connect dials a connection for the oldest waiting request, and goes on while requests wait.
func (t *transport) connect(addr string, deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	nc, err := t.dial(ctx, "tcp", addr)
	cancel()
	var c *conn
	if err == nil {
		c = newConn(nc)
		c.received = &t.received
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dialing--
	switch {
	case len(t.waiting) > 0:
		t.waiting[0] <- handoff{c: c, err: err}
		t.waiting = slices.Delete(t.waiting, 0, 1)
		if len(t.waiting) > 0 && t.dialing < maxDialing {
			t.dialing++
			go t.connect(addr, time.Now().Add(t.timeout))
		}
	case err != nil:
	case t.closed:
		c.nc.Close()
	default:
		t.idle = append(t.idle, c)
	}
}

// keepStamping keeps the kernel stamping the packets it receives for the life of the process.
// Linux switches that on when a first socket asks for receive timestamps and off when the last
// one closes, each time a while later, from a work queue: one measurement's connections closing
// and the next one's opening left whole steps of benchgen without a timestamp (1 run in 3, with
// the client's CPU busy). A socket that asks and stays open keeps it on.
var keepStamping = sync.OnceFunc(func() {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) != nil {
		syscall.Close(fd)
	}
})

func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, bw: bufio.NewWriter(nc), lastUsed: time.Now(), oob: make([]byte, 64)}
	c.br = bufio.NewReader(c)
	c.recv = c.recvmsg
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			var serr error
			if err := raw.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
			}); err == nil && serr == nil {
				c.raw = raw
			}
		}
	}
	return c
}

// Read reads from the connection and notes when the kernel received what it read.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.read(p)
	if c.received != nil && n > 0 {
		c.received.Add(int64(n))
	}
	return n, err
}

func (c *conn) read(p []byte) (int, error) {
	if c.raw == nil || len(p) == 0 {
		return c.nc.Read(p)
	}
	c.readP, c.readN, c.oobN, c.err = p, 0, 0, nil
	if err := c.raw.Read(c.recv); err != nil {
		return 0, err // the deadline, or the connection closed
	}
	c.readP = nil
	switch {
	case c.err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvmsg", c.err)}
	case c.readN == 0:
		return 0, io.EOF
	}
	if at, ok := receivedAt(c.oob[:c.oobN]); ok {
		c.arrival = at
	}
	return c.readN, nil
}

func (c *conn) recvmsg(fd uintptr) bool {
	c.readN, c.oobN, _, _, c.err = syscall.Recvmsg(int(fd), c.readP, c.oob, 0)
	if c.err == syscall.EAGAIN {
		c.err = nil
		return false // wait until readable
	}
	return true
}

// receivedAt finds the SCM_TIMESTAMPNS control message (a struct timespec) in oob.
func receivedAt(oob []byte) (time.Time, bool) {
	for len(oob) >= unix.CmsgLen(0) {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return time.Time{}, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
			return time.Unix(ts.Unix()), true
		}
		oob = rest
	}
	return time.Time{}, false
}

// open tells whether the peer has not closed an idle connection: a read that would block means
// nothing arrived, neither data nor the end of the stream.
func (c *conn) open() bool {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, err := syscall.Read(int(fd), buf[:])
		alive = n < 0 && errors.Is(err, syscall.EAGAIN)
		return true // never wait: this is a check
	})
	return err == nil && alive
}

// put hands a connection back: to the oldest waiting request, else to the idle ones.
func (t *transport) put(c *conn) {
	t.mu.Lock()
	switch {
	case t.closed:
	case len(t.waiting) > 0:
		c.lastUsed = time.Now()
		t.waiting[0] <- handoff{c: c, reused: true}
		t.waiting = slices.Delete(t.waiting, 0, 1)
		c = nil
	default:
		t.idle = append(t.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.nc.Close()
	}
}

// CloseIdleConnections closes the idle connections, and from then on every connection handed
// back: http.Client.CloseIdleConnections calls it when the measurement is over.
func (t *transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = nil, true
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// connBody hands the connection back once the answer's body is read and closed; net/http's body
// reader reads what is left of it on Close, so the next answer starts where it should.
type connBody struct {
	rc    io.ReadCloser
	c     *conn
	t     *transport
	reuse bool
	done  bool
}

func (b *connBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = plainError(err)
	}
	return n, err
}

func (b *connBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close()
	if b.t.own != nil && err == nil {
		b.t.own.record(b.c, time.Now())
	}
	if err == nil && b.reuse {
		b.t.put(b.c)
	} else {
		b.c.nc.Close()
	}
	return err
}

// replayable is net/http's rule: methods that do nothing twice, or a request that says so.
func replayable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return (key || xkey) && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
}

// rewind is req with its body from the start again.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

func canonicalAddr(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	return net.JoinHostPort(req.URL.Hostname(), "80")
}

// plainError drops what differs between connections (local ports) from a network error, so that
// errors of one cause count once in the results.
func plainError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return errTimeout
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return fmt.Errorf("%s: %w", op.Op, op.Err)
	}
	return err
}
