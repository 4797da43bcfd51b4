package bounds

import (
	"math"
	"testing"
	"time"
)

func TestBounds(t *testing.T) {
	cases := []struct {
		name string
		b    Bound
		want string
		kind Kind
	}{
		// io-corrected: 256 connections against 50 ms answers.
		{"connections over service time", Connections(256, 50*time.Millisecond), "≤ 5,120 rps (256 connections ÷ 50 ms)", Design},
		{"one connection", Connections(1, 5*time.Second), "≤ 0.2 rps (1 connection ÷ 5 s)", Design},
		{"a pool over service time", Pool(200, 50*time.Millisecond), "≤ 4,000 rps (200 threads ÷ 50 ms)", Own},
		{"seed 002's 50 threads on 5 s", Pool(50, 5*time.Second), "≤ 10 rps (50 threads ÷ 5 s)", Own},
		{"CPUs over CPU a request", CPU(1, 84*time.Microsecond), "≤ 11,905 rps (1 CPU ÷ 84 µs of CPU a request)", Own},
		{"several CPUs", CPU(2, 1200*time.Millisecond), "≤ 1.67 rps (2 CPUs ÷ 1.2 s of CPU a request)", Own},
		{"an open loop", Offered(300), "≤ 300 rps (the 300 rps the run offers)", Design},
		{"no service time: no bound", Connections(256, 0), "no bound", None},
		{"no pool: no bound", Pool(0, time.Second), "no bound", None},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.String(); got != c.want || c.b.Kind != c.kind {
				t.Errorf("got %q (kind %d), want %q (kind %d)", got, c.b.Kind, c.want, c.kind)
			}
		})
	}
}

func TestLowestIsTheFirstMet(t *testing.T) {
	conns, pool := Connections(256, 50*time.Millisecond), Pool(200, 50*time.Millisecond)
	if got := Lowest(conns, Unbounded, pool); got != pool {
		t.Errorf("Lowest = %v, want the pool's %v", got, pool)
	}
	if got := Lowest(Connections(0, 0)); got.Known() {
		t.Errorf("Lowest of nothing known = %v, want no bound", got)
	}
}

// The factor a run can show: io-corrected's virtual threads held by 256 connections at 5,120,
// the platform threads by their pool at 4,000, measured at 3,947: no factor above 1.30 shows.
func TestFactors(t *testing.T) {
	conns, pool := Connections(256, 50*time.Millisecond), Pool(200, 50*time.Millisecond)
	cpu := CPU(1, 90*time.Microsecond)
	virtual, platform := Capacity{Measured: 4692, Design: conns, Own: cpu}, Capacity{Measured: 3947, Design: conns, Own: Lowest(pool, cpu)}
	lo, hi := Factors(virtual, platform)
	if math.Abs(lo-4692.0/4000) > 1e-9 || math.Abs(hi-5120.0/3947) > 1e-9 {
		t.Errorf("Factors = [%v, %v], want [%v, %v]", lo, hi, 4692.0/4000, 5120.0/3947)
	}
	if !virtual.Held() || platform.Held() {
		t.Errorf("held: virtual %v, platform %v; want the connections' held, the pool's not", virtual.Held(), platform.Held())
	}
	// No CPU figure: nothing says the design, not the target, held it.
	if (Capacity{Measured: 100, Design: conns}).Held() {
		t.Error("a figure with no bound of its own is called held by the design")
	}
	lo, hi = Factors(Capacity{Measured: 10}, Capacity{Measured: 5})
	if lo != 0 || !math.IsInf(hi, 1) {
		t.Errorf("unbounded Factors = [%v, %v], want [0, +Inf]", lo, hi)
	}
}
