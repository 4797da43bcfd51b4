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
