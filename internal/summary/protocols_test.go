package summary

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// Trials of one scenario over different protocols (files reported together) are different
// settings: each protocol is a target of its own, never pooled into one median or ranked as one;
// a scenario over one protocol keeps its targets' plain names.
func TestTrialsOverSeveralProtocolsAreNotPooled(t *testing.T) {
	rows := func(protocols ...string) []results.Row {
		var out []results.Row
		for _, p := range protocols {
			for trial := 1; trial <= 3; trial++ {
				p99 := map[string]time.Duration{"http1": 3, "https": 5, "h2": 9}[p] * time.Millisecond
				out = append(out, results.Row{Scenario: "io", Target: "fastify", Trial: trial, Mode: "open", RequestedRPS: 100,
					Requests: 100, Successes: 100, Valid: true, LatencyP99: p99, Protocol: p})
			}
		}
		return out
	}
	for _, tc := range []struct {
		protocols []string
		want      string
	}{
		{[]string{"http1", "https", "h2"}, "fastify (h2) 3 9ms|fastify (http1) 3 3ms|fastify (https) 3 5ms"},
		{[]string{"https"}, "fastify 3 5ms"},
	} {
		sc := FromRows(rows(tc.protocols...)).Scenarios[0]
		var got []string
		for _, tg := range sc.Targets {
			got = append(got, fmt.Sprintf("%s %d %gms", tg.Name, tg.Valid, tg.P99.Median))
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("%v: targets %s, want %s", tc.protocols, g, tc.want)
		}
	}
}

// The table of each target over each protocol sets figures side by side: a trial whose run's
// calibration missed its limits is no figure to compare, valid or not.
func TestOverProtocolsLeaveOutDistrustedTrials(t *testing.T) {
	var rows []results.Row
	for _, p := range []string{"http1", "https"} {
		for trial := 1; trial <= 2; trial++ {
			rows = append(rows, results.Row{Scenario: "io", Target: "fastify", Trial: trial, Mode: "open", RequestedRPS: 100,
				Requests: 100, Successes: 100, Valid: true, LatencyP99: time.Duration(trial) * time.Millisecond, Protocol: p,
				Calibrated: true, CalibrationWithin: p == "https" || trial == 2})
		}
	}
	over := overProtocols(rows)
	if len(over) != 2 {
		t.Fatalf("%d protocol rows, want 2", len(over))
	}
	http1, https := over[0], over[1]
	if http1.Trials != 2 || http1.Valid != 1 || http1.P99 == nil || http1.P99.Median != 2 {
		t.Errorf("http1: %d trials, %d counted, p99 %v; want 2, 1 (trial 1's calibration missed), 2 ms", http1.Trials, http1.Valid, http1.P99)
	}
	if https.Valid != 2 {
		t.Errorf("https: %d counted, want both trials", https.Valid)
	}
}
