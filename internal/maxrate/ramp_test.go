package maxrate

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// A ramp breaks on RampBreak failing seconds in a row; a recovery ends on RecoverySeconds passing
// ones.
func TestRampBrokenAndRecovered(t *testing.T) {
	ok, bad := Step{P99: time.Millisecond}, Step{P99: time.Second}
	for _, c := range []struct {
		name              string
		seconds           []Step
		broken, recovered bool
	}{
		{"none", nil, false, false},
		{"one passing: too soon to tell", []Step{ok}, false, false},
		{"two failing: a pause", []Step{ok, bad, bad}, false, false},
		{"three failing", []Step{ok, bad, bad, bad}, true, false},
		{"three failing, then one passing", []Step{bad, bad, bad, ok}, false, false},
		{"failing, then two passing", []Step{bad, bad, ok, ok}, false, false},
		{"failing, then three passing", []Step{bad, ok, ok, ok}, false, true},
		{"errors fail a second too", []Step{ok, {ErrorRatio: 0.01}, {ErrorRatio: 0.5}, bad}, true, false},
		{"errors fail a fast second", []Step{ok, {P99: time.Millisecond, ErrorRatio: 0.5}}, false, false},
	} {
		if got := RampBroken(c.seconds, slo100); got != c.broken {
			t.Errorf("%s: RampBroken = %v, want %v", c.name, got, c.broken)
		}
		if got := Recovered(c.seconds, slo100); got != c.recovered {
			t.Errorf("%s: Recovered = %v, want %v", c.name, got, c.recovered)
		}
	}
}

func rates(steps []Step) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.Rate
	}
	return out
}

// TestAWrongBracketCostsStepsNotTheAnswer gives the search brackets wholly below and above the
// boundary (900 rps), and none: it must still find it, by doubling above High or bisecting below
// Low. The maximum and the rate just above it are each confirmed by vote, and so is a bracket's
// Low; a rate further above is left at the one failing step that sent the search below it, for
// a failing step costs the target a recovery and the next step a warm-up.
func TestAWrongBracketCostsStepsNotTheAnswer(t *testing.T) {
	for _, b := range []Bracket{{100, 300}, {2000, 6000}, {400, 50000}, {600, 3000}, {}} {
		q := &queue{capacity: 1000, service: 10 * time.Millisecond}
		got, err := Find(context.Background(), Config{Start: 100, Resolution: Resolution{RPS: 10}, Limit: 50000, Bracket: b}, slo100, q.probe)
		if err != nil {
			t.Fatal(err)
		}
		if got.Max < 880 || got.Max >= 900 || got.FirstFailed < 900 || got.FirstFailed-got.Max > 10 {
			t.Errorf("bracket %v: max %d, first failed %d; want just below 900 (steps %v)", b, got.Max, got.FirstFailed, q.probes)
		}
		steps := map[int][2]int{} // rate → steps met, failed
		for _, s := range got.Steps {
			n := steps[s.Rate]
			if s.Failed == "" {
				n[0]++
			} else {
				n[1]++
			}
			steps[s.Rate] = n
		}
		if steps[got.Max][0] < 2 || steps[got.FirstFailed][1] < 2 {
			t.Errorf("bracket %v: max %d stepped %v, first failed %d stepped %v (met, failed): each wants its vote of 2", b, got.Max, steps[got.Max], got.FirstFailed, steps[got.FirstFailed])
		}
		for rate, n := range steps {
			if rate > got.FirstFailed && rate != b.Low && n != [2]int{0, 1} {
				t.Errorf("bracket %v: %d rps, above the first failed %d, stepped %v (met, failed): want one failing step", b, rate, got.FirstFailed, n)
			}
		}
	}
	for _, b := range []Bracket{{0, 100}, {300, 300}, {100, 60000}} {
		if _, err := Find(context.Background(), Config{Start: 100, Resolution: Resolution{RPS: 10}, Limit: 50000, Bracket: b}, slo100, nil); err == nil || !strings.Contains(err.Error(), "bracket") {
			t.Errorf("bracket %v: err %v, want it refused", b, err)
		}
	}
}

// TestASearchFromAnEarlierOnesBoundary searches simulated targets twice, the second from the
// first's Boundary: it finds the same maximum in fewer steps, its first at the first's failing
// rate; and when the capacity moved between the two (another start of the runtime), it follows.
func TestASearchFromAnEarlierOnesBoundary(t *testing.T) {
	const start, limit = 500, 50000
	res := Resolution{Percent: 20}
	for _, c := range []struct {
		name          string
		first, second float64 // the capacity in each search; the SLO's boundary is at 90% of it
		noise, pauses float64
	}{
		{"knee at 2700 rps, noisy", 3000, 3000, 0.02, 0.1},
		{"knee at 13500 rps", 15000, 15000, 0, 0},
		{"knee at 22500 rps, noisy", 25000, 25000, 0.02, 0.1},
		{"capacity up by half", 3000, 4500, 0, 0},
		{"capacity down by half", 10000, 5000, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(5) {
				q := func(capacity float64) *queue {
					return &queue{capacity: capacity, service: 10 * time.Millisecond, noise: c.noise, pauses: c.pauses, rng: rand.New(rand.NewPCG(seed, 3))}
				}
				first, err := Find(context.Background(), Config{Start: start, Resolution: res, Limit: limit}, slo100, q(c.first).probe)
				if err != nil {
					t.Fatal(err)
				}
				b := first.Boundary()
				if b.Low != first.Max || b.High != first.FirstFailed || b.High <= b.Low {
					t.Fatalf("seed %d: boundary %v of max %d, first failed %d", seed, b, first.Max, first.FirstFailed)
				}
				fresh, err := Find(context.Background(), Config{Start: start, Resolution: res, Limit: limit}, slo100, q(c.second).probe)
				if err != nil {
					t.Fatal(err)
				}
				sq := q(c.second)
				seeded, err := Find(context.Background(), Config{Start: start, Resolution: res, Limit: limit, Bracket: b}, slo100, sq.probe)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("seed %d: first %d rps; second from %v: %d rps in %d steps, %d doubling", seed, first.Max, b, seeded.Max, len(seeded.Steps), fresh.Max)
				if sq.probes[0] != b.High {
					t.Errorf("seed %d: first step at %d rps, want the boundary's failing rate %d", seed, sq.probes[0], b.High)
				}
				if diff, width := seeded.Max-fresh.Max, res.At(fresh.Max); diff > width || diff < -width || float64(seeded.Max) >= 0.9*c.second {
					t.Errorf("seed %d: from %v: max %d; doubling: %d; want within %d of each other, below %.0f", seed, b, seeded.Max, fresh.Max, width, 0.9*c.second)
				}
				if c.first == c.second && len(seeded.Steps) >= len(fresh.Steps) {
					t.Errorf("seed %d: from %v: %d steps %v; doubling: %d %v; want fewer", seed, b, len(seeded.Steps), rates(seeded.Steps), len(fresh.Steps), rates(fresh.Steps))
				}
			}
		})
	}
}

func TestBoundary(t *testing.T) {
	for _, c := range []struct {
		name string
		res  Result
		want Bracket
	}{
		{"a maximum and a failing rate", Result{Max: 12000, FirstFailed: 14000}, Bracket{12000, 14000}},
		{"nothing failed up to the limit", Result{Max: 50000}, Bracket{}},
		{"no rate met the SLO", Result{FirstFailed: 500}, Bracket{}},
		{"the generator stopped it", Result{Max: 16000, FirstFailed: 32000, GeneratorLimit: 32000}, Bracket{}},
		{"a failing rate below the maximum", Result{Max: 3000, FirstFailed: 2500}, Bracket{}},
	} {
		if got := c.res.Boundary(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAPassingHighIsPassedByTheBracketsWidth gives the search a bracket whose High the target now
// meets (its boundary moved up to 13000 rps since [10000, 12000] was found): the search tries the
// bracket's width above High before it doubles, and finds the new boundary.
func TestAPassingHighIsPassedByTheBracketsWidth(t *testing.T) {
	q := &queue{capacity: 13000 / 0.9, service: 10 * time.Millisecond}
	res := Resolution{Percent: 20}
	got, err := Find(context.Background(), Config{Start: 500, Resolution: res, Limit: 50000, Bracket: Bracket{10000, 12000}}, slo100, q.probe)
	if err != nil {
		t.Fatal(err)
	}
	if top := slices.Max(q.probes); top > 14000 {
		t.Errorf("steps %v: want none above 14000 (High and the bracket's width)", q.probes)
	}
	if got.Max < 13000-res.At(13000) || got.Max >= 13000 {
		t.Errorf("max %d (steps %v), want within %d below 13000", got.Max, q.probes, res.At(13000))
	}
}

func TestRampBracket(t *testing.T) {
	at := func(rate int, p99 time.Duration) Step { return Step{Rate: rate, P99: p99} }
	ok, bad := time.Millisecond, time.Second
	for _, c := range []struct {
		name    string
		seconds []Step
		whole   bool
		want    Bracket
	}{
		{"not broken", []Step{at(500, ok), at(600, bad), at(700, bad)}, false, Bracket{}},
		{"run whole, its last two seconds failing", []Step{at(500, ok), at(600, bad), at(700, bad)}, true, Bracket{390, 600}},
		{"run whole, none failing: from its last second", []Step{at(500, ok), at(600, ok), at(700, ok)}, true, Bracket{455, 700}},
		{"no second", nil, true, Bracket{}},
		{"broken: from its first failing second", []Step{at(500, ok), at(600, ok), at(700, bad), at(850, bad), at(1000, bad)}, false, Bracket{455, 700}},
		{"a failing run longer than the break", []Step{at(500, ok), at(700, bad), at(850, bad), at(1000, bad), at(1200, bad)}, false, Bracket{455, 700}},
		{"a lone failing second before it is a pause", []Step{at(500, bad), at(600, ok), at(700, bad), at(850, bad), at(1000, bad)}, false, Bracket{455, 700}},
		{"failing from its first second", []Step{at(500, bad), at(600, bad), at(700, bad)}, false, Bracket{325, 500}},
		{"too low a rate to bracket", []Step{at(1, bad), at(1, bad), at(1, bad)}, false, Bracket{}},
	} {
		if got := RampBracket(c.seconds, slo100, c.whole); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestARampsBracketFindsWhatDoublingFinds simulates a ramp on queueing targets (its seconds fail
// as a queue's p99 lifts, later than steps do) and searches from its bracket: the same maximum as
// a doubling search, within the resolution, in fewer steps.
func TestARampsBracketFindsWhatDoublingFinds(t *testing.T) {
	const start, limit = 500, 50000
	res := Resolution{Percent: 20}
	// 45,000 and 70,000: ramps that reach the limit unbroken, one below the boundary, one above.
	for _, capacity := range []float64{3000, 11000, 25000, 45000, 70000} {
		q := &queue{capacity: capacity, service: 10 * time.Millisecond}
		fresh, err := Find(context.Background(), Config{Start: start, Resolution: res, Limit: limit}, slo100, q.probe)
		if err != nil {
			t.Fatal(err)
		}
		// A ramp rising 19% a second; a second fails once the queue it builds over capacity
		// (unserved arrivals since the rate passed it) waits longer than the SLO allows.
		var seconds []Step
		queued := 0.0
		for rate := float64(start); !RampBroken(seconds, slo100) && rate < limit; rate *= 1.19 {
			queued = max(0, queued+rate-capacity)
			seconds = append(seconds, Step{Rate: int(rate), P99: 10*time.Millisecond + time.Duration(queued/capacity*float64(time.Second))})
		}
		b := RampBracket(seconds, slo100, !RampBroken(seconds, slo100))
		sq := &queue{capacity: capacity, service: 10 * time.Millisecond}
		got, err := Find(context.Background(), Config{Start: start, Resolution: res, Limit: limit, Bracket: b}, slo100, sq.probe)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("capacity %.0f: ramp bracket %v; max %d in %d steps %v; doubling %d in %d steps", capacity, b, got.Max, len(got.Steps), rates(got.Steps), fresh.Max, len(fresh.Steps))
		if diff, width := got.Max-fresh.Max, res.At(fresh.Max); diff > width || diff < -width {
			t.Errorf("capacity %.0f: from the ramp's %v max %d, doubling %d: want within %d", capacity, b, got.Max, fresh.Max, width)
		}
		if got.AtLimit != (capacity > limit) {
			t.Errorf("capacity %.0f: max %d at the limit %v", capacity, got.Max, got.AtLimit)
		}
		if capacity > limit {
			if got.Max != limit || !got.Bounded() {
				t.Errorf("capacity %.0f over the limit: max %d from the ramp's %v, want the limit, bounded", capacity, got.Max, b)
			}
			continue
		}
		if b == (Bracket{}) || float64(b.Low) >= 0.9*capacity || float64(b.High) < 0.9*capacity {
			t.Errorf("capacity %.0f: ramp bracket %v, want it around the boundary at 90%% of it", capacity, b)
		}
		if len(got.Steps) >= len(fresh.Steps) {
			t.Errorf("capacity %.0f: %d steps from the ramp's bracket, %d doubling: want fewer", capacity, len(got.Steps), len(fresh.Steps))
		}
	}
}

// TestAGeneratorLimitBeforeAnyPassingStepReportsNoBracketRate: a bracket's Low is not a maximum
// until a step of this search meets it; a search whose generator sends no rate on time, down to
// the resolution, reports none, each step below the last it could not send.
func TestAGeneratorLimitBeforeAnyPassingStepReportsNoBracketRate(t *testing.T) {
	var rates []int
	probe := func(_ context.Context, rate int) (Step, error) {
		rates = append(rates, rate)
		return Step{P99: time.Millisecond, GeneratorLimited: true}, nil
	}
	got, err := Find(context.Background(), Config{Start: 500, Resolution: Resolution{Percent: 20}, Limit: 50000, Bracket: Bracket{20000, 40000}}, slo100, probe)
	if err != nil {
		t.Fatal(err)
	}
	if !got.GeneratorLimited() || got.Max != 0 || got.GeneratorLimit != rates[len(rates)-1] {
		t.Errorf("generator-limited %v at %d, max %d: want the search stopped with no maximum (steps %v)", got.GeneratorLimited(), got.GeneratorLimit, got.Max, rates)
	}
	for i := 1; i < len(rates); i++ {
		if rates[i] >= rates[i-1] {
			t.Errorf("steps %v: want each below the last the generator could not send", rates)
			break
		}
	}
}

// TestAboveAPassingHighTheStrideDoubles: a boundary far above a bracket (20000 rps over
// [10000, 12000]) is reached by strides of the bracket's width, then twice, four times it, not by
// doubling the rate, which overshoots a boundary just above High by as much as the rate.
func TestAboveAPassingHighTheStrideDoubles(t *testing.T) {
	q := &queue{capacity: 20000 / 0.9, service: 10 * time.Millisecond}
	res := Resolution{Percent: 20}
	got, err := Find(context.Background(), Config{Start: 500, Resolution: res, Limit: 50000, Bracket: Bracket{10000, 12000}}, slo100, q.probe)
	if err != nil {
		t.Fatal(err)
	}
	var above []int
	for _, r := range q.probes {
		if r > 12000 && !slices.Contains(above, r) && (len(above) == 0 || r > above[len(above)-1]) {
			above = append(above, r)
		}
	}
	if want := []int{14000, 18000, 26000}; !slices.Equal(above[:min(3, len(above))], want) {
		t.Errorf("rates above High %v (steps %v), want %v first", above, q.probes, want)
	}
	if got.Max < 20000-res.At(20000) || got.Max >= 20000 {
		t.Errorf("max %d (steps %v), want within %d below 20000", got.Max, q.probes, res.At(20000))
	}
}

// TestARateMetOnceAndFailedOnceIsNoMaximumWhenTheGeneratorFallsShort: a rate whose vote went met,
// failed, then the generator could not send it has not met the SLO (Met): the search goes on below
// it, as a results file's summary reads the same steps, instead of reporting it as at least met.
func TestARateMetOnceAndFailedOnceIsNoMaximumWhenTheGeneratorFallsShort(t *testing.T) {
	at25000 := []Step{{P99: time.Millisecond}, {P99: time.Second}, {P99: time.Millisecond, GeneratorLimited: true}}
	probe := func(_ context.Context, rate int) (Step, error) {
		switch {
		case rate == 25000 && len(at25000) > 0:
			s := at25000[0]
			at25000 = at25000[1:]
			return s, nil
		case rate >= 25000:
			return Step{P99: time.Millisecond, GeneratorLimited: true}, nil
		}
		return Step{P99: time.Millisecond}, nil
	}
	got, err := Find(context.Background(), Config{Start: 500, Resolution: Resolution{Percent: 20}, Limit: 50000, Bracket: Bracket{20000, 30000}}, slo100, probe)
	if err != nil {
		t.Fatal(err)
	}
	if !got.GeneratorLimited() || got.GeneratorLimit != 25000 || got.Max <= 20000 || got.Max >= 25000 {
		t.Errorf("max %d, generator limit %d: want a maximum met by vote between 20000 and 25000 (steps %+v)", got.Max, got.GeneratorLimit, got.Steps)
	}
}

// TestHighIsSteppedFirst gives the search brackets on either side of the boundary (900 rps): its
// first step is High either way. Wholly below it, as spring-mvc-virtual's ramps were, no step
// falls between Low and High; above it, the search bisects below High, also when High's first
// step passed by luck and its vote then failed.
func TestHighIsSteppedFirst(t *testing.T) {
	res := Resolution{Percent: 20}
	for _, c := range []struct {
		b        Bracket
		lucky    bool // High's first step passes
		bisected bool
	}{
		{Bracket{390, 600}, false, false},
		{Bracket{650, 1000}, false, true},
		{Bracket{650, 1000}, true, true},
	} {
		q := &queue{capacity: 1000, service: 10 * time.Millisecond}
		probe := func(ctx context.Context, rate int) (Step, error) {
			if c.lucky && len(q.probes) == 0 {
				q.probes = append(q.probes, rate)
				return Step{P99: 50 * time.Millisecond}, nil
			}
			return q.probe(ctx, rate)
		}
		got, err := Find(context.Background(), Config{Start: 100, Resolution: res, Limit: 50000, Bracket: c.b}, slo100, probe)
		if err != nil {
			t.Fatal(err)
		}
		if q.probes[0] != c.b.High {
			t.Errorf("bracket %v: first step at %d rps (steps %v), want High", c.b, q.probes[0], q.probes)
		}
		inside := slices.ContainsFunc(q.probes, func(r int) bool { return r > c.b.Low && r < c.b.High })
		if inside != c.bisected {
			t.Errorf("bracket %v: steps %v: a step between Low and High: %v, want %v", c.b, q.probes, inside, c.bisected)
		}
		if got.Max < 900-res.At(900) || got.Max >= 900 {
			t.Errorf("bracket %v: max %d (steps %v), want within %d below 900", c.b, got.Max, q.probes, res.At(900))
		}
	}
}
