package load

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fdTableSize is the size of this process's table of file descriptors (FDSize in
// /proc/self/status).
func fdTableSize(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "FDSize:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no FDSize in /proc/self/status")
	return 0
}

// Before the clock starts, the table of descriptors is grown to hold a load's connections, so
// that opening them grows it no more: each growth waits for an RCU grace period (5–27 ms on a
// VM) in the socket() that needed it, while the loop stands still.
func TestTheDescriptorTableIsGrownBeforeTheLoad(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	n := 4000
	if lim.Cur < uint64(2*n) {
		t.Skipf("RLIMIT_NOFILE %d: too few descriptors to tell", lim.Cur)
	}
	a, err := newAttacker(time.Second, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	before := fdTableSize(t)
	if before >= n {
		t.Skipf("the table holds %d descriptors already", before)
	}
	a.reserveFDs(n)
	grown := fdTableSize(t)
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for range n {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	if after := fdTableSize(t); grown < n || after != grown {
		t.Errorf("the table held %d descriptors, %d once reserved for %d, %d once they were opened: want it grown once, before", before, grown, n, after)
	}
}
