package overview

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
		{Target: "mortal", Result: maxrate.Result{Max: 300, FirstFailed: 320, Steps: []maxrate.Step{{Rate: 300}, {Rate: 320, Died: "target OOM-killed at its 512 MiB limit"}}}},
	}
	// A target searched three times: the median of the maxima, each one listed.
	for i, m := range []int{3812, 2968, 3468} {
		found = append(found, maxrate.Outcome{Target: "jvm", Search: i + 1, Result: maxrate.Result{Max: m, FirstFailed: m + 30,
			Fractions: []maxrate.Step{{P50: time.Duration(50+i) * time.Millisecond, P99: time.Duration(60+i) * time.Millisecond}}}})
	}
	found = append(found, maxrate.Outcome{Target: "jvm", Search: 4, Failed: "start failed: port busy"})
	var b strings.Builder
	if err := WriteMax(&b, "io-heavy", "io-heavy.find-max", slo, 10*time.Second, maxrate.Resolution{Percent: 5}, maxrate.LatencyAt{50, 75, 90}, found); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"meeting p99<100ms,errors<0.1% for a whole 10s step (resolution 5%)",
		"│ first failing │ p50 / p99 at 50%  │ p50 / p99 at 75%  │ p50 / p99 at 90%  │",
		"│ spring  │                 800 │                 800 │           825 │ 52.0 ms / 61.0 ms │ 53.0 ms / 70.0 ms │ 55.0 ms / 88.0 ms │",
		"broken: no result: verify-failed",
		"│ starved │               ≥ 400 │               ≥ 400 │",
		"│ jvm     │ 3,812 2,968 3,468 — │ 3,468 [2,968–3,812] │         3,498 │ 51.0 ms / 61.0 ms │",
		"jvm search 4: no result: start failed: port busy",
		"max rps, first failing and the latencies are medians over them",
		"starved: the generator could not send 800 rps on time",
		"scenario io-heavy.find-max",
		"jvm: its searches found 2968 to 3812 rps, further apart than the resolution",
		"│ mortal  │                 300 │                 300 │           320 │",
		"mortal: the target died at 320 rps (target OOM-killed at its 512 MiB limit): the rate failed, and the search went on below it in a new container",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "spring: its searches") {
		t.Errorf("a single search is said to spread:\n%s", b.String())
	}
}

// Without --latency-at, a search measures no latency below its maximum: no column says it did.
func TestWriteMaxWithoutLatencyAt(t *testing.T) {
	slo, _ := maxrate.ParseSLO("p99<100ms,errors<0.1%")
	var found []maxrate.Outcome
	for i, m := range []int{3812, 2968} {
		found = append(found, maxrate.Outcome{Target: "jvm", Search: i + 1, Result: maxrate.Result{Max: m, FirstFailed: m + 30}})
	}
	found = append(found, maxrate.Outcome{Target: "fast", Search: 1, Result: maxrate.Result{Max: 12000, FirstFailed: 13000}})
	var b strings.Builder
	if err := WriteMax(&b, "io-heavy", "io-heavy.find-max", slo, 4*time.Second, maxrate.Resolution{Percent: 20}, nil, found); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"│ target │ max of each search │ max rps             │ first failing │\n├",
		"│ fast   │             12,000 │              12,000 │        13,000 │",
		"max rps and first failing are medians over them,",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "p50 / p99") || strings.Contains(b.String(), "latencies") {
		t.Errorf("latencies named that were not measured:\n%s", b.String())
	}
}

// One search a target (make run): its maximum alone, no column of each search's, no range, no
// median, no even search started from an odd one's boundary.
func TestWriteMaxOneSearchATarget(t *testing.T) {
	slo, _ := maxrate.ParseSLO("p99<100ms,errors<0.1%")
	ramped := maxrate.Bracket{Low: 6500, High: 10000}
	found := []maxrate.Outcome{
		{Target: "fast", Search: 1, Result: maxrate.Result{Max: 12000, FirstFailed: 13000, Bracket: ramped}},
		{Target: "starved", Search: 1, Result: maxrate.Result{Max: 20000, GeneratorLimit: 24000, Bracket: ramped}},
		{Target: "capped", Search: 1, Result: maxrate.Result{Max: 100000, AtLimit: true, Bracket: ramped}},
	}
	var b strings.Builder
	if err := WriteMax(&b, "io-heavy", "io-heavy.find-max", slo, 4*time.Second, maxrate.Resolution{Percent: 20}, nil, found); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"│ target  │ max rps   │ first failing │\n├",
		"│ fast    │    12,000 │        13,000 │",
		"│ starved │  ≥ 20,000 │             — │",
		"│ capped  │ ≥ 100,000 │             — │",
		"capped: met the SLO at 100000 rps, the most a search asks: its maximum is at least that, and was not measured",
		"start from a bracket of the boundary, not by doubling from the first rate: a ramp's, unmeasured,",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	for _, not := range []string{"each search", "[", "median", "even search"} {
		if strings.Contains(b.String(), not) {
			t.Errorf("report of one search a target says %q:\n%s", not, b.String())
		}
	}
}
