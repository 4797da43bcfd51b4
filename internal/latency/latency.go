// Package latency records durations in an HDR histogram of fixed size and summarises them.
// Memory does not grow with the number of values recorded, so a run can last as long as it likes.
package latency

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Recorder accumulates durations with 3 significant digits from 1 µs up to its ceiling.
// It is not safe for concurrent use: the load engine records from one goroutine.
type Recorder struct {
	h       *hdrhistogram.Histogram
	ceiling time.Duration
	clamped int64
}

// NewRecorder returns a Recorder that holds values up to ceiling; larger values are recorded as
// the ceiling and counted in Clamped, so that no value is lost silently.
func NewRecorder(ceiling time.Duration) *Recorder {
	if ceiling < time.Millisecond {
		ceiling = time.Millisecond
	}
	return &Recorder{
		h:       hdrhistogram.New(1, ceiling.Microseconds(), 3),
		ceiling: ceiling,
	}
}

// Record adds one duration. Values below 1 µs count as 1 µs.
func (r *Recorder) Record(d time.Duration) {
	_ = r.h.RecordValue(r.micros(d)) // cannot fail: within [1, ceiling]
}

// micros is d as recorded: whole microseconds within [1, ceiling], a value above the ceiling
// counted in clamped.
func (r *Recorder) micros(d time.Duration) int64 {
	us := d.Microseconds()
	if us < 1 {
		us = 1
	}
	if d > r.ceiling {
		us = r.ceiling.Microseconds()
		r.clamped++
	}
	return us
}

// Summary returns the distribution's mean, percentiles and maximum.
func (r *Recorder) Summary() Summary {
	s := Summarize(r.h)
	s.Clamped = r.clamped
	return s
}

// Histogram returns a copy of the values recorded, in microseconds: the lossless form that
// percentiles are taken from, to be saved, merged with other trials' or summarised again.
func (r *Recorder) Histogram() *hdrhistogram.Histogram { return hdrhistogram.Import(r.h.Export()) }

// Encode returns the values recorded in HdrHistogram's compressed V2 encoding, which its tools
// and Decode read.
func (r *Recorder) Encode() ([]byte, error) {
	return r.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
}

// Reset forgets every value recorded, keeping the recorder's size: one recorder serves interval
// after interval without allocating.
func (r *Recorder) Reset() {
	r.h.Reset()
	r.clamped = 0
}

// Summarize gives the mean, percentiles and maximum of h, whose values are microseconds; the
// percentiles are the same as a Recorder's Summary of the same values.
func Summarize(h *hdrhistogram.Histogram) Summary {
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	at := func(q float64) time.Duration { return us(float64(h.ValueAtQuantile(q))) }
	return Summary{
		Count: h.TotalCount(),
		Mean:  us(h.Mean()),
		P50:   at(50),
		P90:   at(90),
		P99:   at(99),
		P999:  at(99.9),
		Max:   us(float64(h.Max())),
	}
}

// Summary describes a latency distribution. Zero values when Count is 0.
type Summary struct {
	Count                          int64
	Mean, P50, P90, P99, P999, Max time.Duration
	// Clamped counts values above the recorder's ceiling, recorded as the ceiling.
	Clamped int64
}
