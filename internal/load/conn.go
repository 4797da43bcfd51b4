package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// maxDialing bounds the connections being opened at once. A request that finds no idle
// connection waits for whichever comes first, a connection handed back or one newly opened, as
// net/http's Transport does. Dialing one connection per waiting request instead turned every
// hiccup of a few milliseconds at 10,000 rps into a storm of handshakes (docs/generator.md).
const maxDialing = 4

// maxPredialing bounds the connections opened at once before a closed loop starts: enough that
// thousands open in a blink, few enough not to overflow a server's accept queue (a JVM's
// default backlog is 50 to 100), whose dropped handshakes would wait a second to be tried again.
const maxPredialing = 64

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
	wantOut      bool      // EPOLLOUT is asked for: connecting, or a request only partly written
	dialed       time.Time // when its dial began
	first        time.Time // when the first bytes of its request's answer arrived; zero before

	// Over TLS (tls.go): its connection and the pipe under it; whether a helper is making its
	// handshake, since when, and when the handshake was done.
	h2             *h2conn // HTTP/2 (h2.go): its streams; nil for HTTP/1.1
	tls            *tls.Conn
	wire           *tlsWire
	handshaking    bool
	hsBegan, ready time.Time
	// helperWait is how long its handshake waited for a helper (hostinfo.BackgroundSlots at
	// once): the generator's delay, not the connection's cost.
	helperWait time.Duration
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

// predial opens n connections to tr's target before a closed loop starts, as wrk does, so that
// neither its measured phase nor the generator's own delay pays for the handshakes. Each is tried
// once: one that fails or is not open within the request timeout is left to the load, which
// opens connections as requests need them and counts the failures.
func (a *attacker) predial(ctx context.Context, tr vegeta.Targeter, n int) error {
	if err := a.prepare(ctx, tr); err != nil {
		return err
	}
	defer a.watch(ctx)()
	a.maxConns = n
	// The first wait only polls: a connection kept from an earlier load (Session) that the server
	// closed since is found closed before it counts as open.
	timeout := time.Duration(0)
	for tries := 0; ; {
		k, err := a.wait(timeout)
		if err != nil {
			a.closeConns()
			return err
		}
		if !a.handleEvents(k) {
			a.closeConns()
			return ctx.Err()
		}
		now := time.Now()
		a.expire(now)
		for a.dialing < maxPredialing && tries < n && a.open < n {
			tries++
			_, _ = a.dial(now) // a socket refused is a connection less; the load will say why
		}
		if a.dialing == 0 {
			return nil
		}
		timeout = a.untilDeadline(now)
	}
}

// dialMore opens connections for the requests waiting, a few at a time.
func (a *attacker) dialMore(now time.Time) {
	for a.dialing < a.dialCap() && a.dialing*a.perConn() < a.waiting.len() && a.open < a.maxConns {
		if op, err := a.dial(now); err != nil {
			// The oldest request waiting takes the error, as with net/http's Transport.
			if slot, ok := a.nextWaiting(); ok {
				a.fail(slot, a.errText(op, err), now)
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
	c := &conn{fd: fd, gen: a.connGen, state: dialing, dialed: now, dialDeadline: now.Add(a.timeout), wantOut: true}
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
func (a *attacker) handle(c *conn, events uint32) {
	if c.h2 != nil {
		a.h2handle(c, events)
		return
	}
	switch c.state {
	case dialing:
		a.connected(c)
	case idle:
		// Nothing was asked of an idle connection: what arrives is its end (the server's
		// keep-alive timeout) or bytes no request asked for. Either way it is done with,
		// unless it is TLS records that carry no data (session tickets).
		if c.tls != nil && a.idleTLS(c) {
			return
		}
		a.closeConn(c)
	case busy:
		if events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
			if a.flush(c); c.state != busy {
				return
			}
		}
		if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			a.read(c)
		}
	}
}

// connected ends c's dial: it serves the oldest request waiting, or the first to come.
func (a *attacker) connected(c *conn) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err != nil {
		a.closeConn(c)
		now := time.Now()
		if slot, ok := a.nextWaiting(); ok {
			a.fail(slot, a.errText("dial: connect", err), now)
		}
		a.dialMore(now)
		return
	}
	if a.tls.conf != nil {
		if err := a.handshake(c); err != nil {
			a.closeConn(c)
			now := time.Now()
			if slot, ok := a.nextWaiting(); ok {
				a.fail(slot, a.errText("tls handshake", err), now)
			}
			a.dialMore(now)
		}
		return // dialing until its helper is done (handshaken)
	}
	c.ready = time.Now()
	if a.stats != nil {
		a.stats.opened(c.ready.Sub(c.dialed), false)
	}
	a.dialing--
	a.dials = deleteConn(a.dials, c)
	a.setOut(c, false)
	if a.h2streams > 0 {
		a.h2ready(c)
		return
	}
	c.state = idle
	a.handBack(c)
}

// perConn is how many requests a connection being opened will carry at once.
func (a *attacker) perConn() int {
	if a.fresh {
		return 1
	}
	return max(a.h2streams, 1)
}

// dialCap bounds the connections being opened at once: maxDialing, unless every request
// takes a new connection, when as many as requests wait may be.
func (a *attacker) dialCap() int {
	if a.fresh {
		return a.maxConns
	}
	return maxDialing
}

// handBack gives c to the oldest request waiting, else keeps it idle.
func (a *attacker) handBack(c *conn) {
	if slot, ok := a.nextWaiting(); ok {
		a.send(c, slot, c.freeSince())
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

// send writes slot's request on c, a connection free for it since free (freeSince).
func (a *attacker) send(c *conn, slot int32, free time.Time) {
	if c.h2 != nil {
		c.state = busy // taken from the idle list
		a.h2send(c, slot)
		return
	}
	r := &a.slots[slot]
	r.c = c
	c.state, c.slot = busy, slot
	// A request that found no idle connection waited for one: for another request's answer on
	// it, or for a new one to be opened (the target's accept; over TLS, the handshake). That
	// wait is the target's or the connection's cost, not the generator's delay: its own share
	// runs from when a connection was free, so the loop's time to take it and write is counted
	// (ownFrom).
	r.free = r.ownFrom(free)
	c.resp.reset(r.wire.head)
	c.arrival, c.first = time.Time{}, time.Time{}
	c.out = r.wire.bytes
	if c.tls != nil {
		if !a.seal(c) {
			return
		}
	}
	a.flush(c)
}

// ownFrom is what own.record takes as when a connection became free for r, one being free
// from free: free less r's lateness until it was queued (the loop behind, before any connection
// could serve it, so that lateness stays the generator's); zero, so from its due time, when r
// was sent held (behindAfter): it waited on the loop's choice not to open a connection.
func (r *request) ownFrom(free time.Time) time.Time {
	switch {
	case r.queued.IsZero():
		return time.Time{}
	case free.After(r.queued) && r.queued.After(r.start):
		return free.Add(-r.queued.Sub(r.start))
	}
	return free
}

// freeSince is when c became free for a request: its last answer's arrival in the kernel, or,
// new, when it was found open (less a handshake's wait for a helper, which is the generator's).
func (c *conn) freeSince() time.Time {
	if !c.reused {
		return c.ready.Add(-c.helperWait)
	}
	return c.arrival
}

// flush writes what is left of c's request; epoll says when the rest can be written.
func (a *attacker) flush(c *conn) {
	switch err := a.writeOut(c); {
	case err == unix.EAGAIN:
		a.setOut(c, true)
		return
	case err != nil:
		a.broken(c, "write", err)
		return
	}
	a.setOut(c, false)
	a.slots[c.slot].written = time.Now()
}

// writeOut writes what is left of c.out until it is all written (nil), the socket is full
// (EAGAIN: the rest when epoll says it can take it), or the write fails.
func (a *attacker) writeOut(c *conn) error {
	for len(c.out) > 0 {
		n, err := write(c.fd, c.out)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		}
		c.out = c.out[n:]
	}
	return nil
}

// closeConn closes c, whatever it was doing; its request, if any, is the caller's to end.
func (a *attacker) closeConn(c *conn) {
	if a.conns[c.id] != c {
		return // closed already
	}
	if c.handshaking {
		// Its helper holds a duplicate of the socket: this ends the handshake now.
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
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

// endDials closes the connections still being opened when an attack ends: every request they
// were opened for has ended (which leaves only stale tickets waiting), and a dial that has not
// completed by then may never complete.
func (a *attacker) endDials() {
	for len(a.dials) > 0 {
		a.closeConn(a.dials[0])
	}
	a.waiting.clear()
}
