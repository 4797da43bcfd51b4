package load

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
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

// A stage that drives a target past its capacity is the target's: its requests queue for
// in-flight slots and some are still due, unsent, when the phase ends. The stage is judged
// against all it had due, not only against the requests that left, and its slots are seen
// full. The stage before it, under the capacity, is not charged for the requests still on their
// way at its end.
func TestAStageOverTheTargetsCapacityIsTheTargets(t *testing.T) {
	srv, err := reference.Start(reference.Shape{Delay: 20 * time.Millisecond, Workers: 10}) // 500 rps
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	stages, _ := ParseStages("2s:200,2s:1000")
	cfg := Config{
		Request:  Request{Method: http.MethodGet, URL: srv.URL()},
		Check:    NewCheck(reference.Body),
		Model:    Model{Rate: 200, Stages: stages, ExpectedLatency: 20 * time.Millisecond},
		Duration: 4 * time.Second,
		Timeout:  10 * time.Second,
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	byStage, err := StageResults(res, cfg)
	if err != nil {
		t.Fatal(err)
	}
	under, over := byStage[0], byStage[1]
	if under.Requests < 390 || float64(under.Requests) < MinAchievedRatio*float64(under.Scheduled) {
		t.Errorf("first stage (200 rps, under the capacity): %d requests of %d due, want them all", under.Requests, under.Scheduled)
	}
	// 2,000 due; at most 500 a second answered, and the slots (240) fill within half a second.
	if over.Scheduled < 1900 || over.Requests > 1500 {
		t.Errorf("second stage (1,000 rps, twice the capacity): %d requests of %d due, want about 2,000 due and far fewer sent", over.Requests, over.Scheduled)
	}
	if !over.InFlightFull || over.Fault != fault.InFlightFull {
		t.Errorf("second stage: slots full %v, judged %s (%s), want the target's: every in-flight slot busy", over.InFlightFull, over.Fault, over.InvalidReason)
	}
}
