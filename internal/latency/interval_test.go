package latency

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// An Interval encodes exactly as hdrhistogram does, interval after interval (its buffers and
// compressor reused), and what it encodes decodes to the values recorded.
func TestIntervalEncodesAsHdrHistogram(t *testing.T) {
	const ceiling = 25 * time.Second
	iv := NewInterval(ceiling)
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name   string
		values []time.Duration
	}{
		{"empty", nil},
		{"one value", []time.Duration{1500 * time.Microsecond}},
		{"below 1 µs and at the ceiling", []time.Duration{0, 300 * time.Nanosecond, ceiling, 2 * ceiling}},
		{"every bucket's edges", func() (out []time.Duration) {
			for v := int64(1); v < ceiling.Microseconds(); v *= 2 {
				out = append(out, time.Duration(v-1)*time.Microsecond, time.Duration(v)*time.Microsecond, time.Duration(v+1)*time.Microsecond)
			}
			return out
		}()},
		{"a second at 20,000 rps", func() (out []time.Duration) {
			for range 20000 {
				out = append(out, time.Duration(rng.ExpFloat64()*float64(300*time.Microsecond)))
			}
			return out
		}()},
		{"after the busy second, a quiet one", []time.Duration{time.Millisecond, time.Millisecond}},
	}
	for _, c := range cases {
		ref := NewRecorder(ceiling)
		for _, d := range c.values {
			iv.Record(d)
			ref.Record(d)
		}
		got, err := iv.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded\n%s\nwant hdrhistogram's\n%s", c.name, got, want)
		}
		h, err := hdrhistogram.Decode(got)
		if err != nil || h.TotalCount() != int64(len(c.values)) {
			t.Errorf("%s: decoded %d values (%v), want %d", c.name, h.TotalCount(), err, len(c.values))
		}
		iv.Reset()
	}
}

// Closing an interval makes no garbage but the encoded bytes it hands over: a long phase's
// timeline holds its memory flat.
func TestIntervalEncodesWithoutGarbage(t *testing.T) {
	iv := NewInterval(20 * time.Second)
	one := func() {
		for i := range 1000 {
			iv.Record(time.Duration(i) * time.Microsecond)
		}
		if _, err := iv.Encode(); err != nil {
			t.Fatal(err)
		}
		iv.Reset()
	}
	one() // the buffers reach their size
	if allocs := testing.AllocsPerRun(20, one); allocs > 1 {
		t.Errorf("an interval recorded, encoded and reset allocates %.1f times, want 1 (the encoded bytes)", allocs)
	}
}
