package load

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// read reads what arrived on c and parses it; a complete answer ends its request.
func (a *attacker) read(c *conn) {
	if c.tls != nil {
		a.readTLS(c)
		return
	}
	for {
		n, at, err := a.recv(c.fd)
		switch {
		case err == unix.EAGAIN:
			return
		case err == unix.EINTR:
			continue
		case err != nil:
			a.broken(c, "read", err)
			return
		}
		if !at.IsZero() {
			c.arrival = at
		}
		a.arrived(c)
		if n == 0 {
			if err := c.resp.eof(); err != nil {
				a.broken(c, "", err)
				return
			}
			c.resp.close = true
			a.finish(c)
			return
		}
		if a.take(c, a.rbuf[:n]) {
			return
		}
		if n < len(a.rbuf) {
			return // all there is for now: epoll says when more arrives
		}
	}
}

// recv reads from fd into a.rbuf with the kernel's receive time of what it read, when it says;
// a raw system call, as write's.
func (a *attacker) recv(fd int) (int, time.Time, error) {
	a.iov.SetLen(len(a.rbuf))
	a.msg.SetControllen(len(a.oob))
	a.msg.Flags = 0
	n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&a.msg)), 0)
	if e != 0 {
		return 0, time.Time{}, e
	}
	var at time.Time
	if a.msg.Controllen > 0 {
		at, _ = receivedAt(a.oob[:a.msg.Controllen])
	}
	return int(n), at, nil
}

// take feeds what a read brought to c's answer, and ends its request when the answer is whole;
// it says whether the request ended (answered or broken).
func (a *attacker) take(c *conn, got []byte) bool {
	used, err := c.resp.feed(got)
	if err != nil {
		a.broken(c, "", err)
		return true
	}
	if !c.resp.complete() {
		return false
	}
	// Bytes no request asked for, or an answer before the whole request was written: the
	// connection cannot carry another request.
	if used < len(got) || len(c.out) > 0 {
		c.resp.close = true
	}
	a.finish(c)
	return true
}
