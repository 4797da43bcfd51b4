package load

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakeID is the epoll data of the eventfd that ends an attack.
const wakeID = -1

// rawUpTo bounds the waits made as raw system calls, which keep the goroutine's processor: Go
// hands a processor blocked in a system call to another thread after 20 µs, and takes one back
// after it, three task switches that cost more than a short wait itself (on a VM, a 100 µs sleep
// costs 32 µs of CPU so, 12 µs raw). A longer or unbounded wait lets the runtime run other
// goroutines meanwhile; the garbage collector's stops wait 1 ms at most for this one.
const rawUpTo = time.Millisecond

// write writes b to the non-blocking socket fd. The loop's reads and writes are raw system calls
// too: its sockets never block, and telling the scheduler of each call, twice a request, cost 8%
// of the throughput of a closed loop at 64 connections against nginx on one core.
func write(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// reserveFDs grows this process's table of file descriptors, before the clock starts, to hold n
// descriptors past the attack's own. The kernel grows the table by doubling as descriptors are
// opened, and in a process with threads each growth waits for an RCU grace period
// (expand_fdtable: synchronize_rcu) inside the socket() that needed it: 5–27 ms on a VM,
// during which the loop stood still, each time its connections passed a power of two (as a
// target's latency rose, or a hiccup's backlog was dialled). The table never shrinks: placing
// one descriptor at the highest number needed, and closing it, grows it once, here.
func (a *attacker) reserveFDs(n int) {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur < 2 {
		return
	}
	top := min(uint64(max(a.ep, a.wake)+n+fdSlack), lim.Cur-1)
	if fd, err := unix.FcntlInt(uintptr(a.wake), unix.F_DUPFD_CLOEXEC, int(top)); err == nil {
		unix.Close(fd)
	}
}

// fdSlack is what reserveFDs adds for descriptors others open meanwhile (the timeline's files, a
// connection closing as its successor opens).
const fdSlack = 64

// openEpoll creates the epoll set and the eventfd in it that ends an attack.
func openEpoll() (ep, wake int, err error) {
	ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, 0, fmt.Errorf("the load engine's epoll set: %w", err)
	}
	wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return 0, 0, fmt.Errorf("the load engine's eventfd: %w", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeID}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return 0, 0, fmt.Errorf("the load engine's epoll set: %w", err)
	}
	return ep, wake, nil
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
			call := unix.Syscall6
			if timeout <= rawUpTo {
				call = unix.RawSyscall6
			}
			ts := unix.NsecToTimespec(int64(timeout))
			n, _, e = call(unix.SYS_EPOLL_PWAIT2, uintptr(a.ep), uintptr(unsafe.Pointer(&a.events[0])), uintptr(len(a.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
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

// sleep sleeps d (at most longestTurn, so raw: rawUpTo) without being woken by epoll's events; a
// signal may end it early.
func (a *attacker) sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
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

// drainWake reads the eventfd back to zero, ready for the next attack.
func (a *attacker) drainWake() {
	var b [8]byte
	_, _ = unix.Read(a.wake, b[:])
}
