package main

import (
	"math"
	"runtime/metrics"
	"time"
)

// goRuntime is what the Go runtime counted so far: how long goroutines waited, runnable, for a
// thread, and how many collections ran. Over a step, the first is latency the generator adds on
// its own, whatever the server does.
type goRuntime struct {
	schedWait *metrics.Float64Histogram
	gcs       uint64
}

func readRuntime() goRuntime {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return goRuntime{schedWait: s[0].Value.Float64Histogram(), gcs: s[1].Value.Uint64()}
}

// since is the p99 of the scheduling waits and the collections between before and r.
func (r goRuntime) since(before goRuntime) (schedP99 time.Duration, gcs uint64) {
	counts := make([]uint64, len(r.schedWait.Counts))
	var total uint64
	for i, c := range r.schedWait.Counts {
		counts[i] = c - before.schedWait.Counts[i]
		total += counts[i]
	}
	if total == 0 {
		return 0, r.gcs - before.gcs
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i, c := range counts {
		if seen += c; seen >= rank {
			// The bucket's upper bound: the runtime's buckets are a few percent wide.
			upper := r.schedWait.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = r.schedWait.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second)), r.gcs - before.gcs
		}
	}
	return 0, r.gcs - before.gcs
}
