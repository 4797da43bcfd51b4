package report

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
)

func TestWriteMax(t *testing.T) {
	slo, _ := maxrate.ParseSLO("p99<100ms,errors<0.1%")
	found := []maxrate.Outcome{
		{Target: "spring", Result: maxrate.Result{Max: 800, FirstFailed: 825,
			Steps: []maxrate.Step{{Rate: 800}},
			Fractions: []maxrate.Step{
				{Rate: 400, P50: 52 * time.Millisecond, P99: 61 * time.Millisecond},
				{Rate: 600, P50: 53 * time.Millisecond, P99: 70 * time.Millisecond},
				{Rate: 720, P50: 55 * time.Millisecond, P99: 88 * time.Millisecond}}}},
		{Target: "broken", Failed: "verify-failed: POST /ingest: answer is not a JSON object"},
		{Target: "starved", Result: maxrate.Result{Max: 400, GeneratorLimit: 800, Steps: []maxrate.Step{{Rate: 400}, {Rate: 800}}}},
	}
	// A target searched three times: the median of the maxima, each one listed.
	for i, m := range []int{3812, 2968, 3468} {
		found = append(found, maxrate.Outcome{Target: "jvm", Search: i + 1, Result: maxrate.Result{Max: m, FirstFailed: m + 30,
			Fractions: []maxrate.Step{{P50: time.Duration(50+i) * time.Millisecond, P99: time.Duration(60+i) * time.Millisecond}}}})
	}
	found = append(found, maxrate.Outcome{Target: "jvm", Search: 4, Failed: "start failed: port busy"})
	var b strings.Builder
	if err := WriteMax(&b, "io-heavy", "io-heavy.find-max", slo, 10*time.Second, maxrate.Resolution{Percent: 5}, found); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"meeting p99<100ms,errors<0.1% for a whole 10s step (resolution 5%)",
		"│ spring  │                800 │                 800 │           825 │ 52.0 ms / 61.0 ms │ 53.0 ms / 70.0 ms │ 55.0 ms / 88.0 ms │",
		"broken: no result: verify-failed",
		"│ starved │              ≥ 400 │               ≥ 400 │",
		"│ jvm     │   3812 2968 3468 — │ 3,468 [2,968–3,812] │          3498 │ 51.0 ms / 61.0 ms │",
		"jvm search 4: no result: start failed: port busy",
		"medians over them",
		"starved: the generator could not send 800 rps on time",
		"scenario io-heavy.find-max",
		"jvm: its searches found 2968 to 3812 rps, further apart than the resolution",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "spring: its searches") {
		t.Errorf("a single search is said to spread:\n%s", b.String())
	}
}
