package shard

import (
	"fmt"
	"time"
)

// A shard on another host starts its measured phase by its own clock, which need not be this
// machine's. Before the start, the parent asks the shard its clock a few times, NTP-style: it
// notes when it asked and when the answer came, both by its own clock, and takes the shard's
// clock to have been read at the midpoint. The exchange with the shortest round trip bounds the
// error best (at most half that round trip, when the two directions take different times), so
// it is the one kept. The start handed to the shard is the parent's plus that offset.

// ClockSamples is how many exchanges the parent makes with each shard on another host.
const ClockSamples = 8

// ClockSample is one exchange: when the parent asked and when the answer arrived (the parent's
// clock), and the time the shard answered (its clock).
type ClockSample struct {
	Sent, Received, Remote time.Time
}

// RoundTrip is the time from the question to the answer, by the parent's clock.
func (s ClockSample) RoundTrip() time.Duration { return s.Received.Sub(s.Sent) }

// Offset is how far the shard's clock is ahead of the parent's, taking the shard to have read its
// clock halfway through the round trip.
func (s ClockSample) Offset() time.Duration {
	mid := s.Sent.Add(s.RoundTrip() / 2)
	return s.Remote.Sub(mid)
}

// ClockOffset is a shard's clock against the parent's: Offset is added to a time of the parent's
// to get the shard's; its error is at most half of RoundTrip.
type ClockOffset struct {
	Offset, RoundTrip time.Duration
}

// EstimateOffset keeps the sample of the shortest round trip. A sample whose answer came before
// its question (a clock stepped back mid-exchange) is no measurement and is skipped.
func EstimateOffset(samples []ClockSample) (ClockOffset, error) {
	best := -1
	for i, s := range samples {
		if s.RoundTrip() < 0 {
			continue
		}
		if best < 0 || s.RoundTrip() < samples[best].RoundTrip() {
			best = i
		}
	}
	if best < 0 {
		return ClockOffset{}, fmt.Errorf("no usable clock sample of %d: the clock here went back during each", len(samples))
	}
	return ClockOffset{Offset: samples[best].Offset(), RoundTrip: samples[best].RoundTrip()}, nil
}

// abs is |d|.
func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
