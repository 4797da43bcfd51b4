package periodic

import (
	"errors"
	"testing"
	"time"
)

func TestReadsAtStartEveryIntervalAndAtStop(t *testing.T) {
	n := 0
	var got []int
	w, err := Start(time.Millisecond, func() (int, error) { n++; return n, nil }, func(v int) { got = append(got, v) })
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	// The goroutine has ended: got is ours to read.
	if len(got) < 2 || got[0] != 1 || got[len(got)-1] != n {
		t.Errorf("readings %v of %d reads: want the first and the last", got, n)
	}
}

func TestAFailedReadIsStopsError(t *testing.T) {
	if _, err := Start(time.Hour, func() (int, error) { return 0, errors.New("gone") }, func(int) {}); err == nil {
		t.Error("a first read that failed started a watch")
	}
	reads := 0
	w, err := Start(time.Hour, func() (int, error) {
		if reads++; reads > 1 {
			return 0, errors.New("gone")
		}
		return reads, nil
	}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(); err == nil || err.Error() != "gone" {
		t.Errorf("Stop = %v, want the last read's failure", err)
	}
}
