package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// A claim about one request of a mix is checked on that request's rows only; one without, on
// the cells' whole rows, never on a part's.
func TestClaimOfARequestTakesItsRows(t *testing.T) {
	row := func(target, request string, trial int, p99ms int) results.Row {
		r := results.Row{Scenario: "s", Target: target, Trial: trial, Request: request, Valid: true, Successes: 10, Requests: 10, CPUSet: "1"}
		r.LatencyP99 = time.Duration(p99ms+trial) * time.Millisecond
		if request != "" {
			r.Scenario += ".request-" + request
		}
		return r
	}
	var rows []results.Row
	for trial := 1; trial <= 4; trial++ { // 4 a side: the fewest the rank test decides on
		// The whole: a faster than b; the probe: b faster than a.
		rows = append(rows, row("a", "", trial, 10), row("a", "probe", trial, 50), row("b", "", trial, 40), row("b", "probe", trial, 5))
	}
	e := &Experiment{Name: "x", Runs: []*Run{{Name: "r"}}}
	probe := Claim{Quote: "q", Request: "probe", Winner: &Winner{Metric: "latency_p99_ms", Target: "b"}}
	if f := probe.check(e, "r", rows); f.Verdict != Holds || !strings.HasPrefix(f.Measured, "probe's p99: b ") {
		t.Errorf("the probe's claim: %s (%s, %s), want it to hold on the probe's rows, named as the probe's p99", f.Verdict, f.Measured, f.Why)
	}
	whole := Claim{Quote: "q", Winner: &Winner{Metric: "latency_p99_ms", Target: "b"}}
	if f := whole.check(e, "r", rows); f.Verdict != DoesNotHold {
		t.Errorf("the whole's claim: %s (%s, %s), want it not to hold on the cells' rows", f.Verdict, f.Measured, f.Why)
	}
}
