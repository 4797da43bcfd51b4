package overview

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
)

func TestMsTicksNeverLeaveAnAxisBare(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.1, 1000, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{3, 40, []string{"5", "10", "20"}},
		{150.9, 152.1, []string{"151", "152"}},
		{120, 210, []string{"120", "210"}}, // one round tick in range: the ends instead
	} {
		var got []string
		for _, tk := range (msTicks{}).Ticks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Ticks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// A target whose measured seconds hold no answer (dead from its first step: make run's
// spring-mvc-virtual, out of memory) still gets its timeline: the latency panel is empty, not a
// log scale asked to hold 0 (which panicked the run's HTML report).
func TestATimelineWithoutAnAnswerIsDrawn(t *testing.T) {
	row := results.Row{Scenario: "io", Target: "dead", Trial: 1, Mode: "open", RequestedRPS: 1856, Duration: 4 * time.Second, Fault: fault.TargetDied, InvalidReason: "target died"}
	var seconds []timeline.Second
	for i := range 4 {
		seconds = append(seconds, timeline.Second{Index: i, Due: 1856, Sent: 139, Timeouts: 139})
	}
	sc := summary.Scenario{Name: "io"}
	tg := summary.Target{Name: "dead", Cells: []summary.Cell{{Row: row, Verdict: "invalid", Measure: seconds}}}
	c, err := timelineChart(sc, tg)
	if err != nil || c == nil || !strings.Contains(string(c.SVG), "<svg") {
		t.Fatalf("chart %v, %v: want an SVG", c, err)
	}
}
