package load

import (
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
