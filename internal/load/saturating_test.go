package load

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/reference"
)

// Against a target at its capacity (a reference server answering 10 requests at a time, each in
// 20 ms: 500 a second) driven at twice that, the requests queue in the target: the latency
// holds the queue and the step is the target's (its p99 far over its service time), while the
// generator's own delay stays a small share of it, as against a target with room.
func TestASaturatingTargetsQueueIsNotTheGenerators(t *testing.T) {
	const delay = 20 * time.Millisecond
	srv, err := reference.Start(reference.Shape{Delay: delay, Workers: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := Config{
		Request:  Request{Method: http.MethodGet, URL: srv.URL()},
		Check:    NewCheck(reference.Body),
		Model:    Model{Rate: 1000, ExpectedLatency: time.Second},
		Duration: 2 * time.Second,
		Timeout:  10 * time.Second,
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Half the arrivals find no worker: the queue grows through the phase, to hundreds of ms.
	if res.Latency.P99 < 10*delay {
		t.Fatalf("p99 %v, want the target's queue in it (10 times its %v service time or more)", res.Latency.P99, delay)
	}
	if res.OwnDelay.Count == 0 || res.OwnDelay.P99*4 > res.Latency.P99 {
		t.Errorf("own delay p99 %v of a latency p99 %v (%d own delays): the target's queue counted as the generator's", res.OwnDelay.P99, res.Latency.P99, res.OwnDelay.Count)
	}
	if res.Fault.Generator() {
		t.Errorf("judged %s (%s): a saturated target's step blamed on the generator", res.Fault, res.InvalidReason)
	}
}
