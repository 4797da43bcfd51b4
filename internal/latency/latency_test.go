package latency

import (
	"testing"
	"time"
)

func TestSummaryOfKnownDistribution(t *testing.T) {
	r := NewRecorder(time.Minute)
	// 1..1000 ms, one each: pXX is XX% of 1000 ms.
	for i := 1; i <= 1000; i++ {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	s := r.Summary()
	cases := []struct {
		name      string
		got, want time.Duration
	}{
		{"mean", s.Mean, 500500 * time.Microsecond},
		{"p50", s.P50, 500 * time.Millisecond},
		{"p90", s.P90, 900 * time.Millisecond},
		{"p99", s.P99, 990 * time.Millisecond},
		{"p99.9", s.P999, 999 * time.Millisecond},
		{"max", s.Max, 1000 * time.Millisecond},
	}
	for _, c := range cases {
		// 3 significant digits: within 0.1% of the true value.
		if diff := (c.got - c.want).Abs(); float64(diff) > 0.001*float64(c.want) {
			t.Errorf("%s = %v, want %v ±0.1%%", c.name, c.got, c.want)
		}
	}
	if s.Count != 1000 {
		t.Errorf("count = %d, want 1000", s.Count)
	}
}

func TestValuesAboveCeilingAreClampedAndCounted(t *testing.T) {
	r := NewRecorder(time.Second)
	r.Record(10 * time.Millisecond)
	r.Record(5 * time.Second)
	s := r.Summary()
	if s.Clamped != 1 {
		t.Errorf("clamped = %d, want 1", s.Clamped)
	}
	if s.Max < 999*time.Millisecond || s.Max > 1001*time.Millisecond {
		t.Errorf("max = %v, want the 1 s ceiling", s.Max)
	}
}

func TestEmptyRecorderSummarisesToZero(t *testing.T) {
	s := NewRecorder(time.Second).Summary()
	if s.Count != 0 || s.P99 != 0 || s.Max != 0 {
		t.Errorf("empty summary = %+v, want zeros", s)
	}
}

func TestMemoryDoesNotGrowWithValues(t *testing.T) {
	r := NewRecorder(10 * time.Second)
	before := r.h.ByteSize()
	for i := 0; i < 1_000_000; i++ {
		r.Record(time.Duration(i%10000) * time.Microsecond)
	}
	if after := r.h.ByteSize(); after != before {
		t.Errorf("histogram grew from %d to %d bytes", before, after)
	}
}
