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
		a.received.Add(int64(n))
		if n == 0 {
			if err := c.resp.eof(); err != nil {
				a.broken(c, "", err)
				return
			}
			c.resp.close = true
			a.finish(c)
			return
		}
		used, err := c.resp.feed(a.rbuf[:n])
		if err != nil {
			a.broken(c, "", err)
			return
		}
		if c.resp.complete() {
			// Bytes no request asked for, or an answer before the whole request was written:
			// the connection cannot carry another request.
			if used < n || len(c.out) > 0 {
				c.resp.close = true
			}
			a.finish(c)
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
