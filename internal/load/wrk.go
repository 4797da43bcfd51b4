package load

import (
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// WrkFigures are what wrk would have printed of a measured phase, counted from the same requests
// as the engine's own figures (docs/generator.md): every answer read within the phase, whatever
// its status and however late (a request past its timeout kept its connection, Compat Wrk), is
// one of wrk's requests; an answer that took the timeout or longer is one of wrk's timeouts and
// stays out of its latency; a status above 399 is one of its "Non-2xx or 3xx responses".
type WrkFigures struct {
	Requests int64 // answers read within the phase
	Timeouts int64 // of them, answered after the timeout
	Status   int64 // of them, with a status above 399
	// Latency is the sum of the answers' latencies below the timeout (from the request
	// written to its answer read), over Latencies answers: wrk's Latency Avg.
	Latency   time.Duration
	Latencies int64
	Bytes     int64 // the answers' bytes (heads and bodies)
}

// add counts an answer; timeout is the request timeout, wrk's --timeout.
func (w *WrkFigures) add(r *vegeta.Result, timeout time.Duration) {
	w.Requests++
	w.Bytes += int64(r.BytesIn)
	if r.Code > 399 {
		w.Status++
	}
	if r.Latency >= timeout {
		w.Timeouts++
		return
	}
	w.Latency += r.Latency
	w.Latencies++
}

// RequestsPerSecond is wrk's Requests/sec over a phase of du.
func (w WrkFigures) RequestsPerSecond(du time.Duration) float64 {
	return float64(w.Requests) / du.Seconds()
}

// TransferPerSecond is wrk's Transfer/sec, in bytes, over a phase of du.
func (w WrkFigures) TransferPerSecond(du time.Duration) float64 {
	return float64(w.Bytes) / du.Seconds()
}

// MeanLatency is wrk's Latency Avg; 0 when no answer came within the timeout.
func (w WrkFigures) MeanLatency() time.Duration {
	if w.Latencies == 0 {
		return 0
	}
	return w.Latency / time.Duration(w.Latencies)
}

// Merge adds o's counts: the figures of several generators measuring one phase.
func (w *WrkFigures) Merge(o WrkFigures) {
	w.Requests += o.Requests
	w.Timeouts += o.Timeouts
	w.Status += o.Status
	w.Latency += o.Latency
	w.Latencies += o.Latencies
	w.Bytes += o.Bytes
}
