package load

import (
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// receivedAt reads the receive timestamp among the control messages recvmsg returns, and nothing
// from a truncated or foreign one.
func TestReceivedAt(t *testing.T) {
	at := time.Date(2026, 11, 23, 2, 30, 0, 123456789, time.UTC)
	stamp := func() []byte {
		b := make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS
		h.SetLen(syscall.CmsgLen(int(unsafe.Sizeof(syscall.Timespec{}))))
		*(*syscall.Timespec)(unsafe.Pointer(&b[syscall.CmsgLen(0)])) = syscall.NsecToTimespec(at.UnixNano())
		return b
	}
	cases := []struct {
		name string
		oob  []byte
		ok   bool
	}{
		{"timestamp", stamp(), true},
		{"after another message", append(syscall.UnixRights(0), stamp()...), true},
		{"another message only", syscall.UnixRights(0), false},
		{"cut short", stamp()[:syscall.CmsgLen(4)], false},
		{"nothing", nil, false},
	}
	for _, c := range cases {
		got, ok := receivedAt(c.oob)
		if ok != c.ok || ok && !got.Equal(at) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, at, c.ok)
		}
	}
}
