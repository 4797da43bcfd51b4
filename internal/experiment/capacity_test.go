package experiment

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
)

func TestCapacitiesRankWithTiesAndCost(t *testing.T) {
	search := func(target string, n, max int) maxrate.Outcome {
		return maxrate.Outcome{Target: target, Search: n, Result: maxrate.Result{Max: max}}
	}
	found := []maxrate.Outcome{
		search("slow", 1, 1000), search("fast", 1, 4000), search("close", 1, 3800),
		search("slow", 2, 1100), search("fast", 2, 4200), search("close", 2, 4100),
		{Target: "broken", Search: 1, Failed: "verify-failed: no"},
	}
	step := func(target string, rate int, valid bool, cpu float64) results.Row {
		return results.Row{Target: target, RequestedRPS: rate, Valid: valid, CPUCores: cpu, MemoryPeak: 200 << 20, LatencyP99: 80 * time.Millisecond}
	}
	rows := []results.Row{
		step("fast", 4000, true, 0.9), step("fast", 4200, true, 1.0), step("fast", 8000, false, 1.0), step("fast", 2000, true, 0.5),
		step("close", 3800, true, 0.8), step("close", 4100, true, 1.0), step("slow", 1000, true, 1.0), step("slow", 1100, true, 1.0),
	}
	caps := Capacities(found, rows)
	var got []string
	for _, c := range caps {
		got = append(got, c.Target+":"+rankText(c))
	}
	if want := "fast:1 close:1= slow:3 broken:—"; strings.Join(got, " ") != want {
		t.Errorf("ranks %q, want %q", strings.Join(got, " "), want)
	}
	if fast := caps[0]; fast.CPUCores != 0.95 || fast.MemoryPeak != 200<<20 || fast.P99 != 80*time.Millisecond {
		t.Errorf("cost at the max: %+v, want the median of the steps at each search's maximum (0.95 cores)", fast)
	}
	answer := Answer("io-heavy", maxrate.SLO{}, caps)
	for _, want := range []string{"fast sustains the most io-heavy load", "4,100 rps", "tied with close", "next, slow at 1,050 rps"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer %q lacks %q", answer, want)
		}
	}
}

func rankText(c Capacity) string {
	switch {
	case c.Rank == 0:
		return "—"
	case c.TiesWith != "":
		return fmt.Sprintf("%d=", c.Rank)
	}
	return fmt.Sprint(c.Rank)
}

// A target whose searches ended without a maximum (OOM-killed) but met the SLO above the others'
// maxima keeps the answer open: its capacity is at least that.
func TestAnswerDoesNotCrownBelowATargetThatDied(t *testing.T) {
	found := []maxrate.Outcome{
		{Target: "jvm", Search: 1, Result: maxrate.Result{Max: 3500}},
		{Target: "js", Search: 1, Failed: "the target stopped answering its health check at 16000 rps: target OOM-killed at its 1 GiB limit"},
	}
	rows := []results.Row{
		{Target: "jvm", RequestedRPS: 3500, Valid: true},
		{Target: "js", RequestedRPS: 8000, Valid: true}, {Target: "js", RequestedRPS: 16000},
	}
	caps := Capacities(found, rows)
	if caps[1].AtLeast != 8000 {
		t.Errorf("js at least %d, want 8000 (its highest step meeting the SLO)", caps[1].AtLeast)
	}
	answer := Answer("io-heavy", maxrate.SLO{}, caps)
	if !strings.Contains(answer, "no answer yet: js met it at 8,000 rps") || strings.Contains(answer, "jvm sustains the most io-heavy") {
		t.Errorf("answer %q", answer)
	}
}
