package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// attacker is the engine below vegeta's seam: it takes each request from a vegeta.Targeter when a
// vegeta.Pacer says it is due, sends it over a keep-alive connection of its own, and hands its
// outcome over as a vegeta.Result. Everything happens on the goroutine that calls attack, locked
// to its thread: one epoll set holds every connection (non-blocking sockets); a request is one
// write of bytes prepared once per target; an answer is read with recvmsg, which also gives the
// time the kernel received it, and parsed as it arrives. The goroutine blocks only in epoll,
// with a timeout to the nanosecond set for the next request due.
//
// vegeta's own attacker runs a goroutine per request in flight, handed its request and its
// answer over channels, each waiting for Go's scheduler to poll the network: on the generator's
// one core that bookkeeping, not the kernel's work, capped the open loop near 10,000 rps, with
// answers left unread for milliseconds (docs/generator.md has the profiles and the figures).
type attacker struct {
	timeout time.Duration // each request's: from when it was released until its answer is read
	keep    int           // body bytes kept for the check
	// received counts the bytes read from every connection (heads and bodies, failed answers
	// too), as wrk's Transfer/sec does; the engine reads it across a measured phase.
	received atomic.Int64

	ep     int // the epoll set
	wake   int // an eventfd, written when the attack's context ends
	events []unix.EpollEvent
	pwait2 bool // epoll_pwait2 (timeouts in ns) works; else epoll_wait (in ms)

	// Connections, by id (the epoll event's data); ids are reused, gen tells a connection's
	// events from those of an earlier one with the same id.
	conns       []*conn
	freeIDs     []int32
	idle        []*conn // most recently used last: a busy set of connections stays warm
	open        int     // connections open or being opened
	connGen     int32   // the last connection's generation
	dialing     int
	dials       []*conn // the connections being opened
	mostDialing int     // the most opened at once, ever (what the tests check of maxDialing)
	maxConns    int     // this attack's in-flight limit: at most one connection per request in flight

	addr   string // host:port of the connections
	sa     unix.Sockaddr
	family int

	// Requests in flight, by slot; each has an entry in deadlines (in the order they were
	// released, which is the order their deadlines fall in) and, while it waits for a
	// connection, one in waiting. An entry whose gen differs from its slot's is of a request
	// that has ended.
	slots     []request
	freeSlots []int32
	waiting   queue[ticket]
	deadlines queue[ticket]

	wire     *wireRequest
	target   vegeta.Target
	own      *ownDelay
	res      vegeta.Result
	errs     map[errKey]string
	statuses map[int]string

	// recvmsg's arguments, allocated once.
	rbuf, oob []byte
	iov       unix.Iovec
	msg       unix.Msghdr

	started, completed, peak int64
}

// maxDialing bounds the connections being opened at once. A request that finds no idle
// connection waits for whichever comes first, a connection handed back or one newly opened, as
// net/http's Transport does. Dialing one connection per waiting request instead turned every
// hiccup of a few milliseconds at 10,000 rps into a storm of handshakes (docs/generator.md).
const maxDialing = 4

type connState uint8

const (
	dialing connState = iota
	idle
	busy
)

type conn struct {
	id, gen int32
	fd      int
	state   connState
	slot    int32  // the request it carries, when busy
	reused  bool   // it carried a request before this one
	out     []byte // what is left to write of its request
	resp    response
	// arrival is when the kernel received the last bytes read (SO_TIMESTAMPNS); zero when not known.
	arrival      time.Time
	dialDeadline time.Time
	wantOut      bool // EPOLLOUT is asked for: connecting, or a request only partly written
}

type request struct {
	gen     int32
	seq     uint64
	start   time.Time // when the engine became responsible for it: due (open loop), else released
	taken   time.Time // when the pacer released it
	written time.Time // when its last byte was written; zero before
	c       *conn     // nil while it waits for a connection
	retried bool
	wire    *wireRequest
}

type ticket struct {
	slot, gen int32
	deadline  time.Time
}

// errKey is an error as the results count it: an operation, and an errno or one of this
// package's errors (comparable, so that its text is made once).
type errKey struct {
	op  string
	err error
}

// errTimeout is the error of a request without a complete answer within the request timeout;
// one message, so that a cause counts once in the results.
var errTimeout = errors.New("timeout: no complete answer within the request timeout")

// wakeID is the epoll data of the eventfd that ends an attack.
const wakeID = -1

func newAttacker(timeout time.Duration, keep int) (*attacker, error) {
	keepStamping()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("the load engine's epoll set: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("the load engine's eventfd: %w", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeID}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, fmt.Errorf("the load engine's epoll set: %w", err)
	}
	a := &attacker{
		timeout: timeout, keep: keep, ep: ep, wake: wake, pwait2: true,
		events: make([]unix.EpollEvent, 256),
		errs:   map[errKey]string{}, statuses: map[int]string{},
		rbuf: make([]byte, 64<<10),
		oob:  make([]byte, 64), // allocated, so aligned for the control message headers read from it
	}
	a.iov.Base = &a.rbuf[0]
	a.msg.Iov = &a.iov
	a.msg.Iovlen = 1
	a.msg.Control = &a.oob[0]
	return a, nil
}

// attack releases requests from tr as p paces them, for du from began, keeping at most limit in
// flight, and calls each with every request's outcome (the Result and its Body are valid during
// the call only). It returns when every request released has ended: answered, failed or timed
// out. own, when set, is given the generator's own share of each answer's latency. An error
// means the attack could not go on: its context ended, or a target could not be sent.
func (a *attacker) attack(ctx context.Context, tr vegeta.Targeter, p vegeta.Pacer, began time.Time, du time.Duration, limit int, own *ownDelay, each func(*vegeta.Result)) error {
	// Locked, so that the timer slack set here applies wherever the goroutine blocks: the
	// kernel may otherwise end an epoll wait up to 50 µs late, a request's worth at 20,000 rps.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // the thread's default again

	a.drainWake()
	stop := context.AfterFunc(ctx, func() {
		var one = [8]byte{1}
		_, _ = unix.Write(a.wake, one[:])
	})
	defer stop()

	a.own, a.maxConns = own, limit
	a.started, a.completed, a.peak = 0, 0, 0
	defer func() { a.own = nil }()

	var hits uint64
	stopped, promised := false, false
	// The first wait only polls: an idle connection the server closed since the last attack
	// is found closed before any request is sent on it.
	timeout := time.Duration(0)
	for {
		n, err := a.wait(timeout)
		if err != nil {
			a.abort()
			return err
		}
		for i := range n {
			ev := a.events[i]
			if ev.Fd == wakeID {
				a.abort()
				return ctx.Err()
			}
			c := a.conns[ev.Fd]
			if c == nil || c.gen != ev.Pad {
				continue // closed since, while handling this batch
			}
			a.handle(c, ev.Events, each)
		}

		now := time.Now()
		a.expire(now, each)
		// Release what is due.
		next := time.Duration(-1)
		for !stopped && a.started-a.completed < int64(limit) {
			// As vegeta's attacker: a request the pacer was asked about within du is sent,
			// when it is due, even after du (the last one of a phase is due at its end).
			elapsed := now.Sub(began)
			if !promised && elapsed > du {
				stopped = true
				break
			}
			wait, end := p.Pace(elapsed, hits)
			if end {
				stopped = true
				break
			}
			if wait > 0 {
				next, promised = wait, true
				break
			}
			if err := a.release(ctx, tr, hits, now, each); err != nil {
				a.abort()
				return err
			}
			hits++
			promised = false
		}
		if stopped && a.started == a.completed {
			a.endDials()
			return nil
		}
		timeout = a.untilDeadline(now)
		if next >= 0 && (timeout < 0 || next < timeout) {
			timeout = next
		}
	}
}

// release takes request seq from the targeter and sends it, or queues it for a connection.
func (a *attacker) release(ctx context.Context, tr vegeta.Targeter, seq uint64, now time.Time, each func(*vegeta.Result)) error {
	if err := tr(&a.target); err != nil {
		return fmt.Errorf("the targeter: %w", err)
	}
	if a.wire == nil || !a.wire.sameTarget(&a.target) {
		w, err := encodeRequest(&a.target)
		if err != nil {
			return err
		}
		if w.addr != a.addr {
			if err := a.connectTo(ctx, w.addr); err != nil {
				return err
			}
		}
		a.wire = w
	}
	slot := a.takeSlot()
	r := &a.slots[slot]
	r.seq, r.taken, r.start, r.written, r.c, r.retried, r.wire = seq, now, now, time.Time{}, nil, false, a.wire
	if a.own != nil {
		r.start = a.own.start(seq, now)
	}
	a.deadlines.push(ticket{slot, r.gen, now.Add(a.timeout)})
	a.started++
	a.peak = max(a.peak, a.started-a.completed)
	if n := len(a.idle); n > 0 {
		c := a.idle[n-1]
		a.idle = a.idle[:n-1]
		a.send(c, slot, each)
		return nil
	}
	a.waiting.push(ticket{slot: slot, gen: r.gen})
	a.dialMore(now, each)
	return nil
}

// connectTo makes addr the address connections are opened to. One address at a time: the
// engine loads one endpoint per measurement.
func (a *attacker) connectTo(ctx context.Context, addr string) error {
	if a.started > a.completed {
		return fmt.Errorf("target %s: the load engine sends to one address per measurement, already %s", addr, a.addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("target address %q: %v", addr, err)
	}
	portN, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("target address %q: port %q", addr, port)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("target host %q: %v", host, err)
	}
	ip := ips[0]
	for _, cand := range ips { // IPv4 first, as net.Dial tries it first
		if cand.Is4() {
			ip = cand
			break
		}
	}
	a.closeConns()
	if ip.Is4() {
		a.sa, a.family = &unix.SockaddrInet4{Port: portN, Addr: ip.As4()}, unix.AF_INET
	} else {
		a.sa, a.family = &unix.SockaddrInet6{Port: portN, Addr: ip.As16()}, unix.AF_INET6
	}
	a.addr = addr
	return nil
}

func (a *attacker) takeSlot() int32 {
	if n := len(a.freeSlots); n > 0 {
		s := a.freeSlots[n-1]
		a.freeSlots = a.freeSlots[:n-1]
		return s
	}
	a.slots = append(a.slots, request{})
	return int32(len(a.slots) - 1)
}

// end closes slot's request: its tickets become stale.
func (a *attacker) end(slot int32) {
	r := &a.slots[slot]
	r.gen++
	r.c, r.wire = nil, nil
	a.freeSlots = append(a.freeSlots, slot)
	a.completed++
}

// dialMore opens connections for the requests waiting, a few at a time.
func (a *attacker) dialMore(now time.Time, each func(*vegeta.Result)) {
	for a.dialing < maxDialing && a.dialing < a.waiting.len() && a.open < a.maxConns {
		if op, err := a.dial(now); err != nil {
			// The oldest request waiting takes the error, as with net/http's Transport.
			if slot, ok := a.nextWaiting(); ok {
				a.fail(slot, a.errText(op, err), now, each)
			}
		}
	}
}

// dial starts opening a connection; epoll says when it is open. It returns the operation that
// failed, and its error.
func (a *attacker) dial(now time.Time) (string, error) {
	fd, err := unix.Socket(a.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "dial: socket", err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	// The kernel's receive time of every answer, for the generator's own delay.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	if err := unix.Connect(fd, a.sa); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return "dial: connect", err
	}
	a.connGen++
	c := &conn{fd: fd, gen: a.connGen, state: dialing, dialDeadline: now.Add(a.timeout), wantOut: true}
	c.resp.keep = a.keep
	if n := len(a.freeIDs); n > 0 {
		c.id = a.freeIDs[n-1]
		a.freeIDs = a.freeIDs[:n-1]
		a.conns[c.id] = c
	} else {
		c.id = int32(len(a.conns))
		a.conns = append(a.conns, c)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: c.id, Pad: c.gen}
	if err := unix.EpollCtl(a.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		a.conns[c.id] = nil
		a.freeIDs = append(a.freeIDs, c.id)
		unix.Close(fd)
		return "dial: epoll_ctl", err
	}
	a.open++
	a.dialing++
	a.mostDialing = max(a.mostDialing, a.dialing)
	a.dials = append(a.dials, c)
	return "", nil
}

// handle is what epoll reported of c.
func (a *attacker) handle(c *conn, events uint32, each func(*vegeta.Result)) {
	switch c.state {
	case dialing:
		a.connected(c, each)
	case idle:
		// Nothing was asked of an idle connection: what arrives is its end (the server's
		// keep-alive timeout) or bytes no request asked for. Either way it is done with.
		a.closeConn(c)
	case busy:
		if events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
			if a.flush(c, each); c.state != busy {
				return
			}
		}
		if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			a.read(c, each)
		}
	}
}

// connected ends c's dial: it serves the oldest request waiting, or the first to come.
func (a *attacker) connected(c *conn, each func(*vegeta.Result)) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err != nil {
		a.closeConn(c)
		now := time.Now()
		if slot, ok := a.nextWaiting(); ok {
			a.fail(slot, a.errText("dial: connect", err), now, each)
		}
		a.dialMore(now, each)
		return
	}
	a.dialing--
	a.dials = deleteConn(a.dials, c)
	a.setOut(c, false)
	c.state = idle
	a.handBack(c, each)
}

// handBack gives c to the oldest request waiting, else keeps it idle.
func (a *attacker) handBack(c *conn, each func(*vegeta.Result)) {
	if slot, ok := a.nextWaiting(); ok {
		a.send(c, slot, each)
		return
	}
	c.state = idle
	a.idle = append(a.idle, c)
}

// nextWaiting pops the oldest request still waiting for a connection.
func (a *attacker) nextWaiting() (int32, bool) {
	for a.waiting.len() > 0 {
		t := a.waiting.pop()
		if a.slots[t.slot].gen == t.gen {
			return t.slot, true
		}
	}
	return 0, false
}

// send writes slot's request on c.
func (a *attacker) send(c *conn, slot int32, each func(*vegeta.Result)) {
	r := &a.slots[slot]
	r.c = c
	c.state, c.slot = busy, slot
	c.resp.reset(r.wire.head)
	c.arrival = time.Time{}
	c.out = r.wire.bytes
	a.flush(c, each)
}

// flush writes what is left of c's request; epoll says when the rest can be written.
func (a *attacker) flush(c *conn, each func(*vegeta.Result)) {
	for len(c.out) > 0 {
		n, err := unix.Write(c.fd, c.out)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			a.setOut(c, true)
			return
		case err != nil:
			a.broken(c, "write", err, each)
			return
		}
		c.out = c.out[n:]
	}
	a.setOut(c, false)
	a.slots[c.slot].written = time.Now()
}

// setOut asks epoll to report c writable, or stops asking.
func (a *attacker) setOut(c *conn, want bool) {
	if c.wantOut == want {
		return
	}
	c.wantOut = want
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if want {
		events |= unix.EPOLLOUT
	}
	_ = unix.EpollCtl(a.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: c.id, Pad: c.gen})
}

// read reads what arrived on c and parses it; a complete answer ends its request.
func (a *attacker) read(c *conn, each func(*vegeta.Result)) {
	for {
		n, at, err := a.recv(c.fd)
		switch {
		case err == unix.EAGAIN:
			return
		case err == unix.EINTR:
			continue
		case err != nil:
			a.broken(c, "read", err, each)
			return
		}
		if !at.IsZero() {
			c.arrival = at
		}
		a.received.Add(int64(n))
		if n == 0 {
			if err := c.resp.eof(); err != nil {
				a.broken(c, "", err, each)
				return
			}
			c.resp.close = true
			a.finish(c, each)
			return
		}
		used, err := c.resp.feed(a.rbuf[:n])
		if err != nil {
			a.broken(c, "", err, each)
			return
		}
		if c.resp.complete() {
			// Bytes no request asked for, or an answer before the whole request was written:
			// the connection cannot carry another request.
			if used < n || len(c.out) > 0 {
				c.resp.close = true
			}
			a.finish(c, each)
			return
		}
		if n < len(a.rbuf) {
			return // all there is for now: epoll says when more arrives
		}
	}
}

// recv reads from fd into a.rbuf with the kernel's receive time of what it read, when it says.
func (a *attacker) recv(fd int) (int, time.Time, error) {
	a.iov.SetLen(len(a.rbuf))
	a.msg.SetControllen(len(a.oob))
	a.msg.Flags = 0
	n, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&a.msg)), 0)
	if e != 0 {
		return 0, time.Time{}, e
	}
	var at time.Time
	if a.msg.Controllen > 0 {
		at, _ = receivedAt(a.oob[:a.msg.Controllen])
	}
	return int(n), at, nil
}

// finish ends c's request with its answer, and hands c to the next request.
func (a *attacker) finish(c *conn, each func(*vegeta.Result)) {
	slot := c.slot
	r := &a.slots[slot]
	done := time.Now()
	sent := r.written
	if sent.IsZero() { // answered before it was all written
		sent = r.taken
	} else if a.own != nil && !c.arrival.IsZero() {
		a.own.record(r.start, r.written, c.arrival, done)
	}
	code := c.resp.code
	a.res = vegeta.Result{
		Seq: r.seq, Code: uint16(code), Timestamp: sent, Latency: done.Sub(sent),
		BytesOut: uint64(len(r.wire.bytes)), BytesIn: uint64(c.resp.received), Body: c.resp.body,
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	if code < 200 || code >= 400 { // as vegeta: an error, named by the status
		a.res.Error = a.statusText(code)
	}
	a.end(slot)
	// The result first: its body is the connection's until the next request.
	each(&a.res)
	if c.resp.close {
		a.closeConn(c)
		return
	}
	c.reused = true
	a.handBack(c, each)
}

// broken ends c's request with err, after closing c. A request the server closed a reused
// connection on before answering is sent again on another when it may be sent twice, as
// net/http does: the server's keep-alive timeout is not the request's failure.
func (a *attacker) broken(c *conn, op string, err error, each func(*vegeta.Result)) {
	slot := c.slot
	r := &a.slots[slot]
	closed := err == errCutShort || err == unix.ECONNRESET || err == unix.EPIPE
	retry := c.reused && !c.resp.started() && closed && r.wire.replayable && !r.retried
	a.closeConn(c)
	now := time.Now()
	if retry {
		r.retried, r.c, r.written = true, nil, time.Time{}
		a.waiting.pushFront(ticket{slot: slot, gen: r.gen})
		a.dialMore(now, each)
		return
	}
	a.fail(slot, a.errText(op, err), now, each)
}

// fail ends slot's request without an answer.
func (a *attacker) fail(slot int32, text string, now time.Time, each func(*vegeta.Result)) {
	r := &a.slots[slot]
	sent := r.written
	if sent.IsZero() {
		sent = r.taken
	}
	a.res = vegeta.Result{
		Seq: r.seq, Timestamp: sent, Latency: now.Sub(sent), Error: text,
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	a.end(slot)
	each(&a.res)
}

// expire ends the requests, and the dials, whose time is up.
func (a *attacker) expire(now time.Time, each func(*vegeta.Result)) {
	for a.deadlines.len() > 0 {
		t := a.deadlines.peek()
		r := &a.slots[t.slot]
		if r.gen != t.gen {
			a.deadlines.pop()
			continue
		}
		if now.Before(t.deadline) {
			break
		}
		a.deadlines.pop()
		if r.c != nil {
			a.closeConn(r.c) // its answer may still come: it cannot carry another request
		}
		a.fail(t.slot, errTimeout.Error(), now, each)
	}
	for i := 0; i < len(a.dials); {
		if c := a.dials[i]; now.After(c.dialDeadline) {
			a.closeConn(c)
			a.dialMore(now, each)
			continue
		}
		i++
	}
}

// endDials closes the connections still being opened when an attack ends: every request they
// were opened for has ended (which leaves only stale tickets waiting), and a dial that has not
// completed by then may never complete.
func (a *attacker) endDials() {
	for len(a.dials) > 0 {
		a.closeConn(a.dials[0])
	}
	a.waiting.clear()
}

// untilDeadline is the time left until the next deadline, -1 when there is none.
func (a *attacker) untilDeadline(now time.Time) time.Duration {
	next := time.Time{}
	if a.deadlines.len() > 0 {
		next = a.deadlines.peek().deadline
	}
	for _, c := range a.dials {
		if next.IsZero() || c.dialDeadline.Before(next) {
			next = c.dialDeadline
		}
	}
	if next.IsZero() {
		return -1
	}
	return max(next.Sub(now), 0)
}

// wait waits for epoll's events, at most timeout (none when negative).
func (a *attacker) wait(timeout time.Duration) (int, error) {
	for {
		var n uintptr
		var e unix.Errno
		switch {
		case !a.pwait2:
			ms := -1
			if timeout >= 0 {
				ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
			}
			k, err := unix.EpollWait(a.ep, a.events, ms)
			if err == unix.EINTR {
				return 0, nil
			}
			if err != nil {
				return 0, fmt.Errorf("the load engine's epoll_wait: %w", err)
			}
			return k, nil
		case timeout < 0:
			n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(a.ep), uintptr(unsafe.Pointer(&a.events[0])), uintptr(len(a.events)), 0, 0, 0)
		default:
			ts := unix.NsecToTimespec(int64(timeout))
			n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(a.ep), uintptr(unsafe.Pointer(&a.events[0])), uintptr(len(a.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			return 0, nil
		case unix.ENOSYS: // before Linux 5.11
			a.pwait2 = false
			continue
		}
		return 0, fmt.Errorf("the load engine's epoll_pwait2: %w", e)
	}
}

// closeConn closes c, whatever it was doing; its request, if any, is the caller's to end.
func (a *attacker) closeConn(c *conn) {
	if a.conns[c.id] != c {
		return // closed already
	}
	unix.Close(c.fd) // which takes it out of the epoll set
	a.conns[c.id] = nil
	a.freeIDs = append(a.freeIDs, c.id)
	a.open--
	switch c.state {
	case dialing:
		a.dialing--
		a.dials = deleteConn(a.dials, c)
	case idle:
		a.idle = deleteConn(a.idle, c)
	}
}

func deleteConn(cs []*conn, c *conn) []*conn {
	for i, o := range cs {
		if o == c {
			copy(cs[i:], cs[i+1:])
			cs[len(cs)-1] = nil
			return cs[:len(cs)-1]
		}
	}
	return cs
}

// closeConns closes every connection.
func (a *attacker) closeConns() {
	for _, c := range a.conns {
		if c != nil {
			a.closeConn(c)
		}
	}
}

// abort ends an attack that cannot go on: every connection is closed (one with a request in
// flight would hand its answer to the next attack) and every request forgotten.
func (a *attacker) abort() {
	a.closeConns()
	a.waiting.clear()
	a.deadlines.clear()
	a.slots, a.freeSlots = a.slots[:0], a.freeSlots[:0]
}

// close releases everything the attacker holds.
func (a *attacker) close() {
	a.abort()
	unix.Close(a.ep)
	unix.Close(a.wake)
}

// drainWake reads the eventfd back to zero, ready for the next attack.
func (a *attacker) drainWake() {
	var b [8]byte
	_, _ = unix.Read(a.wake, b[:])
}

// errText is the text of an error, made once for each operation and error.
func (a *attacker) errText(op string, err error) string {
	k := errKey{op, err}
	if s, ok := a.errs[k]; ok {
		return s
	}
	s := err.Error()
	if op != "" {
		s = op + ": " + s
	}
	a.errs[k] = s
	return s
}

// statusText names a status as net/http's Response.Status does: "503 Service Unavailable".
func (a *attacker) statusText(code int) string {
	if s, ok := a.statuses[code]; ok {
		return s
	}
	s := strings.TrimSpace(strconv.Itoa(code) + " " + http.StatusText(code))
	a.statuses[code] = s
	return s
}
