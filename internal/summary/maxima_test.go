package summary

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// searchRows runs maxrate.Find against a simulated target whose capacity is capacity (a step
// meets the SLO below it; flaky lists rates whose first step fails anyway) and records every step
// as internal/bench does: one row a step, valid when it met the SLO, trial counting on.
func searchRows(t *testing.T, target string, startup time.Duration, capacity int, flaky map[int]bool, trial *int) ([]results.Row, maxrate.Result) {
	t.Helper()
	return searchRowsAt(t, target, startup, capacity, flaky, maxrate.LatencyAt{50, 75, 90}, trial)
}

// searchRowsAt is searchRows with the latency measured at the percentages at of the maximum.
func searchRowsAt(t *testing.T, target string, startup time.Duration, capacity int, flaky map[int]bool, at maxrate.LatencyAt, trial *int) ([]results.Row, maxrate.Result) {
	t.Helper()
	slo, _ := maxrate.ParseSLO("p99<100ms")
	var rows []results.Row
	tried := map[int]int{}
	probe := func(_ context.Context, rate int) (maxrate.Step, error) {
		tried[rate]++
		s := maxrate.Step{Rate: rate, P99: 20 * time.Millisecond}
		if rate > capacity || flaky[rate] && tried[rate] == 1 {
			s.P99 = 300 * time.Millisecond
		}
		slo.Judge(&s)
		*trial++
		r := results.Row{Scenario: "io" + results.FindMaxSuffix, Target: target, Trial: *trial, Mode: "open", RequestedRPS: rate,
			LatencyAt: at.String(), Startup: startup, Valid: s.Failed == "", LatencyP99: s.P99, CPUCores: float64(rate) / 1000, MemoryPeak: 100 << 20, ThroughputRPS: float64(rate)}
		if !r.Valid {
			r.InvalidReason = "slo not met: " + s.Failed
		}
		rows = append(rows, r)
		return s, nil
	}
	res, err := maxrate.Find(context.Background(), maxrate.Config{Start: 100, Limit: 50000, Resolution: maxrate.Resolution{Percent: 5}, LatencyAt: at}, slo, probe)
	if err != nil {
		t.Fatal(err)
	}
	return rows, res
}

// TestMaximaAreTheSearchesOwn: the maxima read back from the steps of interleaved searches are
// those maxrate.Find reported, flaky steps included; the targets are ordered by them, and ranked,
// with ties, only from MinTrialsToRank searches a target, as fixed-rate trials are; their figures
// are those of the steps at the maxima.
func TestMaximaAreTheSearchesOwn(t *testing.T) {
	type search struct {
		target   string
		capacity int
		flaky    map[int]bool
	}
	pair := []search{
		{"fast", 4100, nil}, {"close", 3900, map[int]bool{1600: true}}, {"slow", 1000, nil},
		{"close", 4000, nil}, {"slow", 1100, map[int]bool{800: true}}, {"fast", 4300, nil},
	}
	// Three more each: fast's and close's capacities interleave, slow's stay far below.
	more := slices.Concat(pair, []search{
		{"slow", 1050, nil}, {"fast", 4450, nil}, {"close", 4200, nil},
		{"close", 3950, nil}, {"fast", 4300, map[int]bool{3200: true}}, {"slow", 1000, nil},
		{"fast", 4200, nil}, {"slow", 1150, nil}, {"close", 4050, nil},
	})
	for _, c := range []struct {
		name    string
		plan    []search
		ranks   string
		finding []string
	}{
		{"two searches a target", pair, "fast: close: slow:",
			[]string{"Finding: not ranked, with fewer than 5 trusted maxima a target (close 2, fast 2, slow 2): the highest median maximum of io load under its SLO is fast's", "next, close at"}},
		{"five searches a target", more, "fast:1= close:1= slow:3",
			[]string{"Finding: fast sustains the most io load under its SLO", "tied with close (Mann–Whitney, p ≥ 0.05)", "next, slow at"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rows []results.Row
			want := map[string][]int{}
			trial := map[string]*int{"fast": new(int), "close": new(int), "slow": new(int)}
			for i, p := range c.plan {
				r, res := searchRows(t, p.target, time.Duration(1000+i)*time.Millisecond, p.capacity, p.flaky, trial[p.target])
				rows = append(rows, r...)
				want[p.target] = append(want[p.target], res.Max)
			}
			sc := FromRows(upgraded(rows)).Scenarios[0]
			var got []string
			for _, tg := range sc.Targets {
				var maxima []int
				for _, s := range tg.Searches {
					maxima = append(maxima, s.Max)
				}
				if fmt.Sprint(maxima) != fmt.Sprint(want[tg.Name]) {
					t.Errorf("%s: maxima %v read from its steps, want the searches' %v", tg.Name, maxima, want[tg.Name])
				}
				got = append(got, tg.Name+":"+tg.Rank)
				if tg.CPUCores == nil || tg.CPUCores.Median != tg.Max.Median/1000 {
					t.Errorf("%s: CPU at max %v, want the median of the steps at its maxima (%v)", tg.Name, tg.CPUCores, tg.Max.Median/1000)
				}
			}
			if g := strings.Join(got, " "); g != c.ranks {
				t.Errorf("ranks %s, want %s (maxima %v)", g, c.ranks, want)
			}
			if m := sc.Targets[0].Max; m.Range != (m.N < 6) {
				t.Errorf("max %+v: under six searches, their range", m)
			}
			finding := sc.Finding()
			for _, w := range c.finding {
				if !strings.Contains(finding, w) {
					t.Errorf("finding %q lacks %q", finding, w)
				}
			}
			notes := strings.Join(sc.MaxNotes(), "\n")
			if ranked := c.ranks != "fast: close: slow:"; strings.Contains(notes, "not ranked: a ranking needs 5 searches a target") == ranked ||
				strings.Contains(notes, "run with --trials 6 or more") == ranked {
				t.Errorf("notes:\n%s", notes)
			}
		})
	}
}

// A target whose searches ended without a maximum (its target died) but met the SLO above the
// others' maxima keeps the answer open: its capacity is at least that.
func TestFindingDoesNotCrownBelowATargetThatDied(t *testing.T) {
	step := func(target string, trial, rate int, reason string) results.Row {
		return results.Row{Scenario: "io" + results.FindMaxSuffix, Target: target, Trial: trial, RequestedRPS: rate, Valid: reason == "", InvalidReason: reason}
	}
	rows := []results.Row{
		step("jvm", 1, 3500, ""), step("jvm", 2, 3500, ""), step("jvm", 3, 3600, "slo not met: p99"), step("jvm", 4, 3600, "slo not met: p99"),
		step("js", 1, 8000, ""), step("js", 2, 16000, "target exited with code 137"),
		step("broken", 1, 0, string(fault.VerifyFailed)+": POST /ingest: no"),
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	var got []string
	for _, tg := range sc.Targets {
		got = append(got, fmt.Sprintf("%s:%s:%d", tg.Name, tg.Rank, tg.AtLeast))
	}
	if g := strings.Join(got, " "); g != "jvm::0 broken::0 js::8000" {
		t.Errorf("targets %s", g)
	}
	f := sc.Finding()
	if !strings.Contains(f, "no answer yet: js met it at 8,000 rps") || strings.Contains(f, "jvm sustains the most io") {
		t.Errorf("finding %q", f)
	}
	if why := sc.Targets[1].Unsearched(); !strings.HasPrefix(why, "verify-failed") {
		t.Errorf("broken: %q, want its reason", why)
	}
}

// TestFindingSaysWhereArrivalsClumpedAtAMaximum: a step that met the SLO at a search's maximum
// with its arrivals not as intended is a caveat on that target's maximum in the finding; clumps
// in steps that failed above a maximum (a saturated target's backpressure) are not.
func TestFindingSaysWhereArrivalsClumpedAtAMaximum(t *testing.T) {
	step := func(target string, trial, rate int, failed, clumped bool) results.Row {
		r := results.Row{Scenario: "io" + results.FindMaxSuffix, Target: target, Trial: trial, Mode: "open", RequestedRPS: rate, Valid: !failed,
			ArrivalJudged: true, ArrivalAsIntended: !clumped}
		if failed {
			r.InvalidReason = "slo not met: p99"
		}
		return r
	}
	rows := []results.Row{
		step("bun", 1, 40000, false, true), step("bun", 2, 40000, false, false), step("bun", 3, 44000, true, true), step("bun", 4, 44000, true, true),
		step("node", 1, 15000, false, false), step("node", 2, 15000, false, false), step("node", 3, 16500, true, true), step("node", 4, 16500, true, true),
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	f := sc.Finding()
	if !strings.Contains(f, "bun's arrivals at its maximum were not as intended in 1 of 1 searches") || strings.Contains(f, "node's arrivals") {
		t.Errorf("finding %q", f)
	}
}

// TestASearchThatMetItsLimitIsAtLeastIt: a search none of whose steps above its maximum failed
// (none ran: it met the most a search asks) has a maximum that is a lower bound, said so; a
// search that failed above its maximum has not.
func TestASearchThatMetItsLimitIsAtLeastIt(t *testing.T) {
	step := func(target string, trial, rate int, failed bool) results.Row {
		r := results.Row{Scenario: "io" + results.FindMaxSuffix, Target: target, Trial: trial, Mode: "open", RequestedRPS: rate, Valid: !failed}
		if failed {
			r.InvalidReason = "slo not met: p99"
		}
		return r
	}
	rows := []results.Row{
		step("bun", 1, 32000, false), step("bun", 2, 100000, false), step("bun", 3, 100000, false),
		step("node", 1, 15000, false), step("node", 2, 15000, false), step("node", 3, 16500, true), step("node", 4, 16500, true),
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	if f := sc.Finding(); !strings.Contains(f, "bun has the highest maximum of io load under its SLO, at least 100,000 rps") || strings.Contains(f, "node at at least") {
		t.Errorf("finding %q", f)
	}
	notes := strings.Join(sc.MaxNotes(), "\n")
	if !strings.Contains(notes, "bun: met the SLO at the most a search asks: its maximum is at least this") || strings.Contains(notes, "node: met the SLO at the most") ||
		strings.Contains(notes, "bun: what stopped it") {
		t.Errorf("notes:\n%s", notes)
	}
}

// Searches of a target iotbench did not start (--url: no start-up time) run one after the other
// are told apart by the steps at fractions of the maximum that end each.
func TestSearchesWithoutAContainerEndAtTheirFractions(t *testing.T) {
	var rows []results.Row
	var want []int
	trial := 0
	for _, capacity := range []int{2000, 2500, 1700} {
		r, res := searchRows(t, "url", 0, capacity, nil, &trial)
		rows = append(rows, r...)
		want = append(want, res.Max)
	}
	var got []int
	for _, s := range FromRows(upgraded(rows)).Scenarios[0].Targets[0].Searches {
		got = append(got, s.Max)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("maxima %v, want the searches' %v", got, want)
	}
}

// One search a target, without steps below its maximum (make run): the answer says it is a first
// answer, neither a ranking nor a spread.
func TestOneSearchATargetIsAFirstAnswer(t *testing.T) {
	var rows []results.Row
	trial := new(int)
	for i, s := range []struct {
		target   string
		capacity int
	}{{"fast", 4100}, {"slow", 1000}, {"mid", 2600}} {
		r, res := searchRowsAt(t, s.target, time.Duration(i+1)*time.Second, s.capacity, nil, nil, trial)
		if len(res.Fractions) != 0 || r[len(r)-1].LatencyAt != "" {
			t.Fatalf("a search without latency at percentages measured %d such steps, recorded %q", len(res.Fractions), r[len(r)-1].LatencyAt)
		}
		rows = append(rows, r...)
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	if !sc.OneSearch() {
		t.Fatalf("searches %v: want one a target", sc.Targets)
	}
	for _, tg := range sc.Targets {
		if len(tg.Searches) != 1 || tg.Rank != "" || tg.Max == nil || tg.Max.N != 1 {
			t.Errorf("%s: %d searches, rank %q, max %+v: want one search, unranked", tg.Name, len(tg.Searches), tg.Rank, tg.Max)
		}
	}
	if sc.Targets[0].Name != "fast" || sc.Targets[2].Name != "slow" {
		t.Errorf("order %s, %s, %s: want by maximum", sc.Targets[0].Name, sc.Targets[1].Name, sc.Targets[2].Name)
	}
	f := sc.Finding()
	if want := "Finding: a first answer from one search a target, not a ranking (that takes --trials 6): fast has the highest maximum of io load under its SLO, 4,000 rps"; !strings.HasPrefix(f, want) {
		t.Errorf("finding %q\nwant it to start %q", f, want)
	}
	if !strings.Contains(f, "; next, mid at ") {
		t.Errorf("finding %q: want the next target named", f)
	}
	notes := strings.Join(sc.MaxNotes(), "\n")
	for _, want := range []string{"max rps: the maximum of each target's one search", "not ranked: one search a target is a first answer; a ranking needs 5 searches a target whose maximum the self-checks trust: run with --trials 6 or more"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes:\n%s\nwant %q", notes, want)
		}
	}
	if strings.Contains(notes, "least–greatest") || strings.Contains(notes, "(fast 1") {
		t.Errorf("notes:\n%s\nwant no range and no count of searches short of a ranking", notes)
	}
}

// A search with a step whose run's calibration missed its limits gives no maximum to rank: the
// target's maximum is its other searches', and the notes say one was left out.
func TestSearchesTheCalibrationDistrustsAreLeftOut(t *testing.T) {
	var rows []results.Row
	trial := new(int)
	first, _ := searchRows(t, "fast", time.Second, 4100, nil, trial)
	second, res := searchRows(t, "fast", 2*time.Second, 2000, nil, trial)
	first[len(first)/2].Calibrated = true // within: false
	rows = append(append(rows, first...), second...)
	tg := FromRows(upgraded(rows)).Scenarios[0].Targets[0]
	if len(tg.Searches) != 2 || tg.Searches[0].Distrust() != results.DistrustCalibration || tg.Searches[1].Distrust() != "" {
		t.Fatalf("searches %d, distrust %q %q: want the first distrusted", len(tg.Searches), tg.Searches[0].Distrust(), tg.Searches[1].Distrust())
	}
	if tg.Max == nil || tg.Max.N != 1 || tg.Max.Median != float64(res.Max) {
		t.Errorf("max %+v: want the second search's %d alone", tg.Max, res.Max)
	}
	notes := strings.Join(FromRows(upgraded(rows)).Scenarios[0].MaxNotes(), "\n")
	if want := "fast: 1 search(es) left out of its maximum and the ranking: calibration missed its limits"; !strings.Contains(notes, want) {
		t.Errorf("notes:\n%s\nwant %q", notes, want)
	}
}

// When every search's maximum is distrusted, the target has none and no rate it is known to hold:
// the notes and the finding blame the calibration, not the SLO, and say it once.
func TestAllSearchesDistrustedAnswerNothing(t *testing.T) {
	var rows []results.Row
	trial := new(int)
	for _, capacity := range []int{4100, 3900} {
		r, _ := searchRows(t, "fast", time.Duration(*trial+1)*time.Second, capacity, nil, trial)
		for i := range r {
			r[i].Calibrated = true // within: false, as every row of a run whose calibration missed
		}
		rows = append(rows, r...)
	}
	// A third search stopped by the generator's limit, as distrusted: no "at least" either.
	for _, s := range []struct {
		rate int
		why  string
	}{{8000, ""}, {16000, ""}, {16000, ""}, {32000, "generator-limited: its own p99 delay"}} {
		*trial++
		rows = append(rows, results.Row{Scenario: "io" + results.FindMaxSuffix, Target: "fast", Trial: *trial, Mode: "open", RequestedRPS: s.rate,
			Startup: time.Hour, Valid: s.why == "", InvalidReason: s.why, Calibrated: true})
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	tg := sc.Targets[0]
	if len(tg.Searches) != 3 || !tg.Searches[2].GeneratorLimited || tg.Searches[2].Max != 16000 {
		t.Fatalf("searches %+v; want three, the last generator-limited at 16000", tg.Searches)
	}
	if tg.Max != nil || tg.AtLeast != 0 {
		t.Errorf("max %+v, at least %d: want neither from distrusted searches", tg.Max, tg.AtLeast)
	}
	notes := strings.Join(sc.MaxNotes(), "\n")
	if want := "fast: the maxima of its 3 search(es) that found one are left out: calibration missed its limits"; !strings.Contains(notes, want) {
		t.Errorf("notes:\n%s\nwant %q", notes, want)
	}
	if strings.Contains(notes, "no rate met the SLO") || strings.Contains(notes, "at least") || strings.Count(notes, results.DistrustCalibration) != 1 {
		t.Errorf("notes:\n%s\nwant the calibration named once, no SLO blamed and no maximum of at least", notes)
	}
	if f := sc.Finding(); !strings.HasPrefix(f, "Finding: no answer: calibration missed its limits") {
		t.Errorf("finding %q: want the calibration blamed", f)
	}
}

// A search the generator stopped short reads back as maxrate reported it: a rate split 1–1 by
// its vote before the generator fell behind is no maximum, the last rate met without a failure is
// (at least).
func TestAGeneratorLimitedSearchKeepsItsLastGoodRate(t *testing.T) {
	var rows []results.Row
	for i, s := range []struct {
		rate int
		why  string
	}{{8000, ""}, {16000, ""}, {32000, "slo not met: p99"}, {32000, "slo not met: p99"}, {24000, ""}, {24000, "slo not met: p99"}, {24000, "generator-limited: its own p99 delay"}} {
		rows = append(rows, results.Row{Scenario: "io" + results.FindMaxSuffix, Target: "bun", Trial: i + 1, Mode: "open", RequestedRPS: s.rate,
			Startup: time.Second, Valid: s.why == "", InvalidReason: s.why})
	}
	sc := FromRows(upgraded(rows)).Scenarios[0]
	s := sc.Targets[0].Searches
	if len(s) != 1 || s[0].Max != 16000 || !s[0].GeneratorLimited {
		t.Errorf("searches %+v; want one, at least 16000, generator-limited", s)
	}
	// The answer's sentence says "at least", as its table does.
	if f := sc.Finding(); !strings.Contains(f, "at least 16,000 rps") {
		t.Errorf("finding %q: want the maximum given as at least 16,000 rps", f)
	}
}

// A step at a fraction of the maximum that failed while disturbed is measured again: the search
// ends with the step measured again, not before it (a search of its own, with no maximum, once).
func TestARepeatedFractionStepEndsNoSearch(t *testing.T) {
	var rows []results.Row
	for i, s := range []struct {
		rate int
		why  string
	}{{1000, ""}, {1000, ""}, {2000, "slo not met: p99"}, {2000, "slo not met: p99"}, {500, ""}, {750, ""},
		{900, "repeated: failed while disturbed (see warnings)"}, {900, ""}} {
		rows = append(rows, results.Row{Scenario: "io" + results.FindMaxSuffix, Target: "bun", Trial: i + 1, Mode: "open", RequestedRPS: s.rate,
			Startup: time.Second, Valid: s.why == "", InvalidReason: s.why})
	}
	s := FromRows(upgraded(rows)).Scenarios[0].Targets[0].Searches
	if len(s) != 1 || s[0].Max != 1000 || len(s[0].Steps) != len(rows) {
		t.Errorf("%d searches, the first %+v; want one of every step, max 1000", len(s), s[0])
	}
}

// upgraded gives rows built as an older iotbench wrote them (a reason's words, a scenario's
// suffix) the fields that newer files hold, as reading such a file does.
func upgraded(rows []results.Row) []results.Row {
	results.Upgrade(rows)
	return rows
}

// The maxima are decided by the rows' fields (kind of fault, search), never by the words of
// their reasons or by how the searches lie in the file: rewording every reason, and giving each
// search's steps (search numbers kept) one start-up time and one block of the file, changes nothing.
func TestMaximaReadFieldsNotWords(t *testing.T) {
	var rows []results.Row
	trial := map[string]*int{"a": new(int), "b": new(int)}
	for i, s := range []struct {
		target   string
		capacity int
	}{{"a", 3000}, {"b", 1200}, {"a", 3300}, {"b", 1100}} {
		r, _ := searchRows(t, s.target, time.Duration(1000+i)*time.Millisecond, s.capacity, map[int]bool{800: true}, trial[s.target])
		rows = append(rows, r...)
	}
	maxima := func(rows []results.Row) string {
		var out []string
		for _, tg := range FromRows(rows).Scenarios[0].Targets {
			for _, s := range tg.Searches {
				out = append(out, fmt.Sprintf("%s:%d", tg.Name, s.Max))
			}
		}
		return strings.Join(out, " ")
	}
	want := maxima(upgraded(rows))
	if !strings.Contains(want, "a:") || !strings.Contains(want, "b:") {
		t.Fatalf("maxima %q", want)
	}
	reworded := slices.Clone(rows)
	for i := range reworded {
		if !reworded[i].Valid {
			reworded[i].InvalidReason = "generator-limited: words that once meant another kind"
		}
		reworded[i].Startup = time.Second // searches told apart by their field alone
	}
	// Each target's searches one after the other: the file's order no longer separates them.
	slices.SortStableFunc(reworded, func(x, y results.Row) int { return strings.Compare(x.Target, y.Target) })
	if got := maxima(reworded); got != want {
		t.Errorf("maxima %q with reworded reasons and regrouped rows, want %q", got, want)
	}
}

// What limited a target at its maximum is read from the steps that failed just above it (the
// rate it could not sustain): a target at its CPU there is CPU-bound; one at 0.67 of its core is
// "not found", with its figures among what was ruled out; and it shows in the notes of the answer.
func TestTheLimitAtAMaximumIsTheFailingStepsAboveIt(t *testing.T) {
	step := func(target string, trial, rate int, cores float64, failed bool) results.Row {
		r := results.Row{Scenario: "io" + results.FindMaxSuffix, Target: target, Trial: trial, Search: 1, Mode: "open", RequestedRPS: rate,
			CPUSet: "1", CPUCores: cores, Memory: "1g", MemoryPeak: 300 << 20, GeneratorCPUPercent: 40, Duration: 4 * time.Second, Valid: !failed}
		if failed {
			r.SetFault(fault.SLONotMet, "slo not met: p99 300ms ≥ 100ms")
		}
		return r
	}
	rows := []results.Row{
		step("js", 1, 8000, 0.80, false), step("js", 2, 8000, 0.82, false), step("js", 3, 9000, 0.97, true), step("js", 4, 9000, 0.98, true),
		step("jvm", 1, 2000, 0.55, false), step("jvm", 2, 2000, 0.56, false), step("jvm", 3, 2400, 0.67, true), step("jvm", 4, 2400, 0.66, true),
	}
	sc := FromRows(rows).Scenarios[0]
	got := map[string]string{}
	for _, tg := range sc.Targets {
		got[tg.Name] = tg.Limit().String()
	}
	if !strings.HasPrefix(got["js"], "CPU: 0.97 of its 1 CPU") {
		t.Errorf("js's limit %q, want its CPU at the failing rate above its maximum", got["js"])
	}
	if !strings.HasPrefix(got["jvm"], "not found") || !strings.Contains(got["jvm"], "CPU (0.67 of its 1 CPU, under 0.90; pressure not read)") {
		t.Errorf("jvm's limit %q, want not found, its CPU at 0.67 ruled out", got["jvm"])
	}
	notes := strings.Join(sc.MaxNotes(), "\n")
	if !strings.Contains(notes, "js: what stopped it above its maximum (at the first rate it failed): CPU: 0.97") || !strings.Contains(notes, "jvm: what stopped it above its maximum (at the first rate it failed): not found") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A search many of whose steps were measured while other work took the CPUs ran on a busy host:
// those measured again, and those kept because they met the SLO all the same, both count. The
// notes say so beside its maximum, with the counts, and so does the finding; a step or two
// disturbed is a moment's disturbance and says nothing.
func TestASearchOnABusyHostSaysSo(t *testing.T) {
	for _, tc := range []struct {
		repeats, kept int    // steps measured again; steps kept while disturbed
		want          string // "" when no note is due
	}{
		{0, 0, ""},
		{2, 0, ""},
		{0, 2, ""},
		{3, 0, ""}, // 3 of 3+steps: under a third of the steps
		{8, 0, "fast: 8 of its %d steps were measured while other work or the hypervisor took the CPUs (8 of them failed and were measured again): searched on a busy host, its maximum may be low; run again when it is quieter"},
		// Too few repeats to tell alone: the steps kept while disturbed tell the rest.
		{2, 6, "fast: 8 of its %d steps were measured while other work or the hypervisor took the CPUs (2 of them failed and were measured again): searched on a busy host, its maximum may be low; run again when it is quieter"},
	} {
		name := fmt.Sprintf("%d repeats and %d kept of", tc.repeats, tc.kept)
		trial := new(int)
		steps, res := searchRows(t, "fast", time.Second, 4100, nil, trial)
		if len(steps) < 9 || len(steps) < tc.repeats+tc.kept {
			t.Fatalf("%d steps: the cases want more than 9 steps in all", len(steps))
		}
		var rows []results.Row
		for i, r := range steps {
			if i < tc.repeats { // measured again before the step that counted
				again := r
				again.Valid, again.InvalidReason = false, "repeated: failed while disturbed (see warnings)"
				again.Warnings = "disturbed: other processes took 0.41 cores"
				rows = append(rows, again)
			}
			if i >= tc.repeats && i < tc.repeats+tc.kept {
				r.Warnings = "disturbed: the hypervisor took 0.22 cores (steal)"
			}
			rows = append(rows, r)
		}
		sc := FromRows(upgraded(rows)).Scenarios[0]
		if tg := sc.Targets[0]; tg.Max == nil || tg.Max.Median != float64(res.Max) {
			t.Errorf("%s %d steps: max %+v, want the search's %d: repeats decide nothing", name, len(rows), tg.Max, res.Max)
		}
		busy := strings.Contains(sc.Finding(), "searched on a busy host (steps measured while other work took the CPUs: fast ")
		if busy != (tc.want != "") {
			t.Errorf("%s %d steps: finding %q: want the busy host named there: %v", name, len(rows), sc.Finding(), tc.want != "")
		}
		notes := strings.Join(sc.MaxNotes(), "\n")
		switch {
		case tc.want == "" && strings.Contains(notes, "busy host"):
			t.Errorf("%s %d steps: notes\n%s\nwant none of a busy host", name, len(rows), notes)
		case tc.want != "" && !strings.Contains(notes, fmt.Sprintf(tc.want, len(rows))):
			t.Errorf("%s %d steps: notes\n%s\nwant %q", name, len(rows), notes, fmt.Sprintf(tc.want, len(rows)))
		}
	}
}

// A target's ramps are those of its own searches, found in its rows' source by their keys (the
// step's scenario's ".ramp-<n>", the target, the search's number), by search and in order: not
// another target's, nor another search's, nor a step's.
func TestATargetsRampsAreItsSearchesOwn(t *testing.T) {
	sc := "io" + results.FindMaxSuffix
	step := func(target string, search, trial, rate int) results.Row {
		return results.Row{Scenario: sc, Target: target, Search: search, Trial: trial, Mode: "open", RequestedRPS: rate, Valid: true,
			LatencyP99: 20 * time.Millisecond, ThroughputRPS: float64(rate), SLO: "p99<100ms"}
	}
	rows := []results.Row{step("t", 1, 1, 1000), step("t", 1, 2, 1000), step("u", 1, 1, 500), step("t", 2, 3, 900)}
	ramp := func(n int, target string, search int, due int64) timeline.Cell {
		return timeline.Cell{Key: timeline.Key{Scenario: fmt.Sprintf("%s.ramp-%d", sc, n), Target: target, Trial: search, RequestedRPS: 100000},
			Warmup: []timeline.Second{{Due: due}}}
	}
	tls := map[timeline.Key]timeline.Cell{}
	for _, c := range []timeline.Cell{ramp(2, "t", 1, 12), ramp(1, "t", 1, 11), ramp(1, "u", 1, 31), ramp(1, "t", 2, 21), ramp(1, "t", 3, 99),
		{Key: KeyOf(rows[0]), Measure: []timeline.Second{{Due: 1000}}}} {
		tls[c.Key] = c
	}
	o, err := Build([]Source{{Path: "run.csv", Rows: rows, Timelines: tls}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, tg := range o.Scenarios[0].Targets {
		for _, r := range tg.Ramps {
			got[tg.Name] = append(got[tg.Name], r.Warmup[0].Due)
		}
	}
	if want := map[string][]int64{"t": {11, 12, 21}, "u": {31}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ramps (by their first second's due) %v, want %v", got, want)
	}
}
