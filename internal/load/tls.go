package load

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/iotbench/iotbench/internal/hostinfo"
)

// TLS in the one-threaded loop (docs/generator.md): a handshake runs on a helper goroutine, on a
// duplicate of the connection's socket through Go's own poller, and the connection comes back
// to the loop when it is done; from then on the loop runs crypto/tls's record layer itself,
// over a memory pipe (tlsWire): sealing a request appends its records to the pipe, which the
// loop writes to the socket as it writes plaintext; opening an answer reads the socket
// (recvmsg, with the kernel's receive time) straight into crypto/tls's input buffer. A read
// with nothing left to read returns a temporary net.Error, which crypto/tls passes up without
// breaking the connection, so that the loop never blocks in it.

// handshakeID is the epoll data of the eventfd the helpers write when a handshake is done.
const handshakeID = -2

// tlsState is the attacker's TLS side: its configuration, and the handshakes done by helpers
// that the loop has yet to take back.
type tlsState struct {
	conf *tls.Config // nil: plaintext
	// What the last handshake negotiated.
	version, cipher uint16
	wake            int // eventfd in the epoll set; 0 until the first handshake
	mu              sync.Mutex
	done            []handshakeDone
	// The loop's own copy of done, swapped with it, so that neither allocates once warm.
	taken []handshakeDone
	// The handshakes queued for the helpers (give), under mu; more (made with the eventfd, at the
	// first handshake) wakes an idle helper when the queue fills or closes.
	jobs          []handshakeJob
	more          *sync.Cond
	helping, idle int
	closed        bool
	// helpers running: the eventfd they write is closed only once they are done.
	helpers sync.WaitGroup
	// recvmsg's arguments for reads into crypto/tls's buffer (the loop's only).
	iov unix.Iovec
	msg unix.Msghdr
}

type handshakeDone struct {
	id, gen int32
	err     error
	// When a helper began the handshake, and when it returned: the wait for a helper before it
	// is the generator's, like the wait for the loop after it.
	began, ready time.Time
}

// tlsWire is the transport under a connection's tls.Conn: the socket through Go's poller
// during the handshake (hs), the loop's memory pipe after it.
type tlsWire struct {
	hs  net.Conn
	a   *attacker
	c   *conn
	out []byte // records crypto/tls wrote, for the loop to send
}

// errWouldBlock is what a read finds when the socket has nothing more: temporary, so that
// crypto/tls keeps the connection and what it read of a record so far.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

func (w *tlsWire) Read(p []byte) (int, error) {
	if w.hs != nil {
		return w.hs.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := w.a.recvTLS(w.c, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, errWouldBlock
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (w *tlsWire) Write(p []byte) (int, error) {
	if w.hs != nil {
		return w.hs.Write(p)
	}
	w.out = append(w.out, p...)
	return len(p), nil
}

func (w *tlsWire) Close() error                       { return nil }
func (w *tlsWire) LocalAddr() net.Addr                { return nil }
func (w *tlsWire) RemoteAddr() net.Addr               { return nil }
func (w *tlsWire) SetDeadline(t time.Time) error      { return nil }
func (w *tlsWire) SetReadDeadline(t time.Time) error  { return nil }
func (w *tlsWire) SetWriteDeadline(t time.Time) error { return nil }

// handshake hands c, connected, to a helper that makes its TLS handshake; c stays dialing, out
// of the epoll set, until the loop takes it back (handshaken).
func (a *attacker) handshake(c *conn) error {
	if a.tls.wake == 0 {
		wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			return err
		}
		if err := unix.EpollCtl(a.ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: handshakeID}); err != nil {
			unix.Close(wake)
			return err
		}
		a.tls.wake = wake
		a.tls.more = sync.NewCond(&a.tls.mu)
	}
	dup, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_ = unix.EpollCtl(a.ep, unix.EPOLL_CTL_DEL, c.fd, nil)
	c.wantOut = false
	c.handshaking = true
	c.hsBegan = time.Now()
	if c.wire == nil {
		c.wire = &tlsWire{}
	}
	c.wire.a, c.wire.c, c.wire.out = nil, nil, c.wire.out[:0]
	c.tls = tls.Client(c.wire, a.tls.conf)
	a.tls.give(handshakeJob{c.tls, c.wire, dup, c.id, c.gen, c.dialDeadline})
	return nil
}

// handshakeJob is a helper's work: the handshake of tc over the socket dup, by deadline.
type handshakeJob struct {
	tc       *tls.Conn
	w        *tlsWire
	dup      int
	id, gen  int32
	deadline time.Time
}

// give queues job for a helper, starting one when none is idle, up to hostinfo.BackgroundSlots.
// Helpers are kept until the attacker closes: each runs on a thread of its own at the lowest
// priority (hostinfo.Background), and a thread per handshake cost the loop a clone(2) each time.
// More handshakes at once than helpers wait in the queue.
func (st *tlsState) give(job handshakeJob) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.jobs = append(st.jobs, job)
	if st.idle == 0 && st.helping < hostinfo.BackgroundSlots {
		st.helping++
		st.helpers.Add(1)
		go st.help()
		return
	}
	st.more.Signal()
}

// helperPriority puts a helper's thread at the lowest priority. A variable for the tests alone
// (tls_test.go).
var helperPriority = hostinfo.Background

// help runs the handshakes queued until the attacker closes.
func (st *tlsState) help() {
	defer st.helpers.Done()
	helperPriority()
	st.mu.Lock()
	for {
		for len(st.jobs) == 0 && !st.closed {
			st.idle++
			st.more.Wait()
			st.idle--
		}
		if len(st.jobs) == 0 {
			st.mu.Unlock()
			return
		}
		job := st.jobs[0]
		st.jobs[0] = handshakeJob{} // the queue's array must not keep a finished handshake's connection
		st.jobs = st.jobs[1:]
		st.mu.Unlock()
		st.runHandshake(job)
		st.mu.Lock()
	}
}

// closeHelpers ends the helpers once they are done with the handshakes queued.
func (st *tlsState) closeHelpers() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	if st.more != nil {
		st.more.Broadcast()
	}
}

// runHandshake makes job's handshake. It touches nothing of the loop's but what it posts to st.
func (st *tlsState) runHandshake(job handshakeJob) {
	began := time.Now()
	f := os.NewFile(uintptr(job.dup), "")
	nc, err := net.FileConn(f) // its own duplicate, in Go's poller
	f.Close()
	if err == nil {
		_ = nc.SetDeadline(job.deadline)
		job.w.hs = nc
		err = job.tc.Handshake()
		job.w.hs = nil
		nc.Close()
	}
	ready := time.Now()
	st.mu.Lock()
	st.done = append(st.done, handshakeDone{id: job.id, gen: job.gen, err: err, began: began, ready: ready})
	st.mu.Unlock()
	one := [8]byte{1}
	_, _ = unix.Write(st.wake, one[:])
}

// handshaken takes back the connections whose handshakes are done: ready ones serve the
// oldest request waiting; a failed one fails it.
func (a *attacker) handshaken() {
	var b [8]byte
	_, _ = unix.Read(a.tls.wake, b[:])
	st := &a.tls
	st.mu.Lock()
	st.done, st.taken = st.taken[:0], st.done
	st.mu.Unlock()
	now := time.Now()
	for _, d := range st.taken {
		c := a.conns[d.id]
		if c == nil || c.gen != d.gen || !c.handshaking {
			continue // closed meanwhile (its dial timed out, or the attack ended)
		}
		c.handshaking = false
		if d.err == nil {
			err := unix.EpollCtl(a.ep, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.id, Pad: c.gen})
			if err != nil {
				d.err = fmt.Errorf("epoll_ctl: %w", err)
			}
		}
		if d.err != nil {
			a.closeConn(c)
			if slot, ok := a.nextWaiting(); ok {
				a.fail(slot, a.errText("tls handshake", a.handshakeError(d.err)), now)
			}
			a.dialMore(now)
			continue
		}
		c.wire.a, c.wire.c = a, c
		// The connection's cost is its TCP connect and its handshake, not its wait in the queue
		// for a helper (hostinfo.BackgroundSlots at once): that wait stays the generator's delay.
		waited := max(d.began.Sub(c.hsBegan), 0)
		c.hsBegan, c.ready, c.helperWait = d.began, d.ready, waited
		cs := c.tls.ConnectionState()
		if a.h2streams > 0 && cs.NegotiatedProtocol != "h2" {
			a.closeConn(c)
			if slot, ok := a.nextWaiting(); ok {
				a.fail(slot, a.errText("tls handshake", errNoH2), now)
			}
			a.dialMore(now)
			continue
		}
		st.version, st.cipher = cs.Version, cs.CipherSuite
		if a.stats != nil {
			a.stats.opened(d.ready.Sub(c.dialed)-waited, cs.DidResume)
		}
		a.dialing--
		a.dials = deleteConn(a.dials, c)
		if a.h2streams > 0 {
			a.h2ready(c)
			continue
		}
		c.state = idle
		a.handBack(c)
	}
	clear(st.taken) // the errors
}

// handshakeError is err as the results count it: one text per cause, whatever the connection.
func (a *attacker) handshakeError(err error) error {
	if strings.Contains(err.Error(), "no application protocol") { // the server's alert
		if a.h2streams > 0 {
			return errNoH2
		}
		return errNoHTTP11
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errHandshakeTimeout
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return errors.New("the server's certificate is not trusted (is the run's CA given?): " + cv.Err.Error())
	}
	return err
}

var (
	errHandshakeTimeout = errors.New("timeout: no handshake within the request timeout")
	errNoH2             = errors.New("the server did not agree to h2 by ALPN: it serves HTTP/1.1 only over TLS (use protocol https)")
	errNoHTTP11         = errors.New("the server did not agree to http/1.1 by ALPN: it serves h2 only over TLS (use protocol h2)")
)

// seal encrypts c's request into its records, which become what is left to write of it.
func (a *attacker) seal(c *conn) bool {
	c.wire.out = c.wire.out[:0]
	if _, err := c.tls.Write(c.out); err != nil {
		a.broken(c, "tls write", err)
		return false
	}
	c.out = c.wire.out
	return true
}

// readTLS reads what arrived on c, decrypts and parses it; a complete answer ends its request.
func (a *attacker) readTLS(c *conn) {
	for {
		n, err := c.tls.Read(a.plain)
		switch {
		case err == errWouldBlock:
			return
		case err == io.EOF:
			if err := c.resp.eof(); err != nil {
				a.broken(c, "", err)
				return
			}
			c.resp.close = true
			a.finish(c)
			return
		case err != nil:
			a.broken(c, "read", err)
			return
		}
		if a.take(c, a.plain[:n]) {
			return
		}
	}
}

// idleTLS reads what arrived on idle c: the session tickets a TLS 1.3 server sends after the
// handshake keep it; an answer nobody asked for, or its end, does not.
func (a *attacker) idleTLS(c *conn) bool {
	for {
		n, err := c.tls.Read(a.plain)
		switch {
		case err == errWouldBlock:
			return true
		case err != nil || n > 0:
			return false
		}
	}
}

// recvTLS reads from c's socket into p with the kernel's receive time of what it read.
func (a *attacker) recvTLS(c *conn, p []byte) (int, error) {
	st := &a.tls
	st.iov.Base = &p[0]
	st.iov.SetLen(len(p))
	st.msg.Iov = &st.iov
	st.msg.Iovlen = 1
	st.msg.Control = &a.oob[0]
	st.msg.SetControllen(len(a.oob))
	st.msg.Flags = 0
	n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&st.msg)), 0)
	st.iov.Base = nil // p is crypto/tls's buffer: not kept past the call
	if e != 0 {
		return 0, e
	}
	if st.msg.Controllen > 0 {
		if at, _ := receivedAt(a.oob[:st.msg.Controllen]); !at.IsZero() {
			c.arrival = at
		}
	}
	a.arrived(c)
	return int(n), nil
}

// closeTLS releases the eventfd of the helpers.
func (a *attacker) closeTLS() {
	a.tls.closeHelpers()
	if a.tls.wake != 0 {
		a.tls.helpers.Wait() // each ends at once: closeConns shut their sockets down
		unix.Close(a.tls.wake)
		a.tls.wake = 0
	}
}
