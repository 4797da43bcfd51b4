package load

import (
	"testing"
	"time"
)

// A request belongs to the phase it was due in, whatever it waited for: a warm-up request whose
// connection's handshake ended after the boundary is the warm-up's own delay, not the measured
// phase's, and its wait for the handshake is no delay of the generator's.
func TestOwnDelayCountsARequestInThePhaseItWasDueIn(t *testing.T) {
	began := time.Now()
	o := newOwnDelay(began, nil, time.Minute)
	o.prepareMeasure()
	boundary := began.Add(time.Second)
	o.measureFrom(boundary)
	due := boundary.Add(-time.Millisecond)
	handshake := 5 * time.Millisecond
	written := due.Add(handshake + 100*time.Microsecond)
	arrival := written.Add(20 * time.Millisecond)
	o.record(due, due.Add(handshake), written, arrival, arrival.Add(50*time.Microsecond))
	warm, measured := o.summary(), o.measure.summary()
	if warm.Count != 1 || measured.Count != 0 {
		t.Fatalf("own delays: %d in the warm-up, %d in the measured phase; want the request in the warm-up it was due in", warm.Count, measured.Count)
	}
	if warm.Max > time.Millisecond {
		t.Errorf("own delay %v, want the 150 µs the generator took (the 5 ms handshake is the connection's)", warm.Max)
	}
}
