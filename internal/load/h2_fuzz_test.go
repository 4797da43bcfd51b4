package load

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// FuzzH2Frames feeds whatever a server might send to an HTTP/2 connection carrying two
// requests: the engine ends them or keeps waiting, and never panics or ends one twice.
func FuzzH2Frames(f *testing.F) {
	frame := func(typ, flags byte, id uint32, payload ...byte) []byte {
		return append(h2Frame(nil, typ, flags, id, len(payload)), payload...)
	}
	f.Add(frame(h2Headers, h2EndHeaders|h2EndStream, 1, 0x88)) // :status 200
	f.Add(append(frame(h2Headers, h2EndHeaders, 3, 0x88), frame(h2Data, h2EndStream|h2Padded, 3, 2, 'o', 'k', 0, 0)...))
	f.Add(frame(h2Settings, 0, 0, 0, 3, 0, 0, 0, 1))
	f.Add(frame(h2GoAway, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0))
	f.Add(frame(h2RstStream, 0, 1, 0, 0, 0, 8))
	f.Add(append(frame(h2Headers, 0, 1, 0x88), frame(h2Continuation, h2EndHeaders, 1)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := newAttacker(time.Second, 64, false)
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fds[1])
		ended := map[uint64]int{}
		a.each = func(r *vegeta.Result, _, _ time.Time, _ int) { ended[r.Seq]++ }
		a.h2streams, a.maxConns = 2, 2
		c := &conn{fd: fds[0], gen: 1, state: busy}
		a.conns, a.open = []*conn{c}, 1
		a.newH2(c, 2)
		w := &wireRequest{target: vegeta.Target{Method: "GET", URL: "http://127.0.0.1/"}}
		if err := encodeH2(w, "http"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for seq := range uint64(2) {
			slot := a.takeSlot()
			r := &a.slots[slot]
			r.seq, r.taken, r.start, r.wire = seq, now, now, w
			a.started++
			a.h2send(c, slot)
		}
		c.h2.in = append(c.h2.in, in...)
		a.h2frames(c)
		for seq, n := range ended {
			if n > 1 {
				t.Errorf("request %d ended %d times", seq, n)
			}
		}
		if a.conns[c.id] != c && int64(len(ended)) != a.completed {
			t.Errorf("the connection closed with %d requests ended of %d", len(ended), a.started)
		}
	})
}
