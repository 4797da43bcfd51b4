package maxrate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	cases := []struct {
		text    string
		p99     time.Duration
		errs    float64
		wantErr string
	}{
		{"p99<100ms,errors<0.1%", 100 * time.Millisecond, 0.001, ""},
		{" p99 < 2s ", 2 * time.Second, -1, ""},
		{"errors<1%", 0, 0.01, ""},
		{"", 0, 0, "is empty"},
		{"p95<100ms", 0, 0, `term "p95<100ms": write p99<DURATION or errors<PERCENT%`},
		{"p99<100", 0, 0, `"100" is not a positive duration`},
		{"errors<0.1", 0, 0, "give errors as a percentage above 0"},
		{"errors<0%", 0, 0, "give errors as a percentage above 0"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			slo, err := ParseSLO(c.text)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || slo.P99 != c.p99 || math.Abs(slo.MaxErrors-c.errs) > 1e-12 {
				t.Errorf("ParseSLO = %+v, %v; want p99 %v errors %v", slo, err, c.p99, c.errs)
			}
		})
	}
}

// queue simulates a target of the given capacity: p99 grows as 1/(1-load) (a single queue), errors
// appear past capacity, noise spreads the p99 by ± that share, and a step has a pause (a collector,
// a neighbour's burst) that triples its p99 with probability pauses.
type queue struct {
	capacity  float64
	service   time.Duration
	noise     float64
	pauses    float64
	rng       *rand.Rand
	generator int // rates above this the generator cannot send (0: no limit)
	probes    []int
}

func (q *queue) probe(_ context.Context, rate int) (Step, error) {
	q.probes = append(q.probes, rate)
	if q.generator > 0 && rate > q.generator {
		return Step{GeneratorLimited: true}, nil
	}
	return q.at(float64(rate)), nil
}

// at is what a step at rate sees.
func (q *queue) at(rate float64) Step {
	rho := rate / q.capacity
	if rho >= 1 {
		return Step{P99: 10 * time.Second, ErrorRatio: 1 - 1/rho}
	}
	p99 := float64(q.service) / (1 - rho)
	if q.noise > 0 {
		p99 *= 1 + q.noise*(2*q.rng.Float64()-1)
	}
	if q.pauses > 0 && q.rng.Float64() < q.pauses {
		p99 *= 3
	}
	return Step{P50: q.service, P99: time.Duration(p99), Throughput: rate}
}

var slo100 = SLO{P99: 100 * time.Millisecond, MaxErrors: 0.001}

func TestFindLandsOnTheSLOBoundary(t *testing.T) {
	// p99 = 10 ms / (1 − rate/1000) reaches 100 ms at 900 rps.
	q := &queue{capacity: 1000, service: 10 * time.Millisecond}
	at := LatencyAt{50, 75, 90}
	res, err := Find(context.Background(), Config{Start: 100, Resolution: Resolution{RPS: 10}, Limit: 100000, LatencyAt: at}, slo100, q.probe)
	if err != nil {
		t.Fatal(err)
	}
	if res.Max < 890 || res.Max >= 900 || res.FirstFailed < 900 || res.FirstFailed-res.Max > 10 {
		t.Errorf("max %d, first failed %d; want the last rate below 900 within 10 of a failing one (steps %v)", res.Max, res.FirstFailed, q.probes)
	}
	if got := q.probes[:5]; got[0] != 100 || got[1] != 200 || got[2] != 400 || got[3] != 800 || got[4] != 1600 {
		t.Errorf("ramp %v, want doubling from 100", got)
	}
	if len(res.Fractions) != 3 {
		t.Fatalf("%d fraction steps, want 3", len(res.Fractions))
	}
	for i, pct := range at {
		if want := int(pct / 100 * float64(res.Max)); res.Fractions[i].Rate != want || res.Fractions[i].Failed != "" {
			t.Errorf("%v%%: rate %d failed %q, want %d meeting the SLO", pct, res.Fractions[i].Rate, res.Fractions[i].Failed, want)
		}
	}
	if last := q.probes[len(q.probes)-1]; last != res.Fractions[2].Rate {
		t.Errorf("last step at %d rps, want the one at 90%% of the maximum, %d", last, res.Fractions[2].Rate)
	}
	for _, s := range res.Steps {
		if met := s.Failed == ""; met != (s.Rate < 900) {
			t.Errorf("step at %d: failed %q", s.Rate, s.Failed)
		}
	}
}

func TestRepeatedSearchesLandWithinTheResolution(t *testing.T) {
	// ±2% noise on p99 moves the boundary by a few rps, and one step in ten has a pause that fails
	// it wherever it is: searches must still agree within the resolution.
	var found []int
	for seed := range uint64(10) {
		q := &queue{capacity: 1000, service: 10 * time.Millisecond, noise: 0.02, pauses: 0.1, rng: rand.New(rand.NewPCG(seed, 1))}
		res, err := Find(context.Background(), Config{Start: 50, Resolution: Resolution{RPS: 25}, Limit: 5000}, slo100, q.probe)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, res.Max)
	}
	lo, hi := found[0], found[0]
	for _, m := range found {
		lo, hi = min(lo, m), max(hi, m)
	}
	if hi-lo > 25 {
		t.Errorf("maxima %v spread over %d rps, want within the 25 rps resolution", found, hi-lo)
	}
}

func TestFindEdges(t *testing.T) {
	cases := []struct {
		name          string
		q             *queue
		cfg           Config
		wantMax       int
		wantGenerator bool
	}{
		// p99 reaches 100 ms at 90 rps.
		{"start already too fast: bisect below it", &queue{capacity: 100, service: 10 * time.Millisecond}, Config{Start: 400, Resolution: Resolution{RPS: 5}, Limit: 1000}, 85, false},
		{"limit reached without failing", &queue{capacity: 1e9, service: time.Millisecond}, Config{Start: 100, Resolution: Resolution{RPS: 5}, Limit: 700}, 700, false},
		{"generator cannot send more", &queue{capacity: 1e9, service: time.Millisecond, generator: 1000}, Config{Start: 100, Resolution: Resolution{RPS: 5}, Limit: 100000}, 800, true},
		// A ramp's bracket whose first step the generator cannot send: the search goes on below
		// the generator's limit (it used to end there, reporting at least 0).
		{"bracket above what the generator sends", &queue{capacity: 1e9, service: time.Millisecond, generator: 700},
			Config{Start: 100, Resolution: Resolution{Percent: 20}, Limit: 100000, Bracket: Bracket{Low: 650, High: 1000}}, 650, true},
		// p99 reaches 100 ms at 630 rps, below the generator's 800 and the bracket's Low.
		{"bracket above what the generator sends, the target failing below it", &queue{capacity: 700, service: 10 * time.Millisecond, generator: 800},
			Config{Start: 100, Resolution: Resolution{Percent: 5}, Limit: 100000, Bracket: Bracket{Low: 650, High: 1000}}, 620, true},
		{"a share of the rate as resolution", &queue{capacity: 100, service: 10 * time.Millisecond}, Config{Start: 10, Resolution: Resolution{Percent: 5}, Limit: 1000}, 88, false},
		{"nothing meets the SLO", &queue{capacity: 1e9, service: time.Second}, Config{Start: 10, Resolution: Resolution{RPS: 2}, Limit: 100}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Find(context.Background(), c.cfg, slo100, c.q.probe)
			if err != nil {
				t.Fatal(err)
			}
			width := c.cfg.Resolution.At(c.wantMax)
			if c.wantMax > 0 && (res.Max > c.wantMax+width || res.Max < c.wantMax-width) || c.wantMax == 0 && res.Max != 0 || res.GeneratorLimited() != c.wantGenerator {
				t.Errorf("max %d generator-limited %v, want %d±%d, %v (steps %v)", res.Max, res.GeneratorLimited(), c.wantMax, width, c.wantGenerator, c.q.probes)
			}
			if res.Max == 0 && len(res.Fractions) != 0 {
				t.Errorf("fractions of nothing measured: %v", res.Fractions)
			}
			for _, s := range res.Steps {
				if c.q.generator > 0 && s.Rate > c.q.generator && !s.GeneratorLimited {
					t.Errorf("step at %d rps above the generator's %d not marked generator-limited", s.Rate, c.q.generator)
				}
			}
			if c.wantGenerator && (res.GeneratorLimit <= c.q.generator || res.Max >= res.GeneratorLimit) {
				t.Errorf("generator limit %d, max %d: want the lowest rate above the generator's %d, the max below it (steps %v)", res.GeneratorLimit, res.Max, c.q.generator, c.q.probes)
			}
		})
	}
}

func TestFindWithoutLatencyAtEndsAtItsMaximum(t *testing.T) {
	q := &queue{capacity: 1000, service: 10 * time.Millisecond}
	res, err := Find(context.Background(), Config{Start: 100, Resolution: Resolution{RPS: 10}, Limit: 100000}, slo100, q.probe)
	if err != nil {
		t.Fatal(err)
	}
	if res.Max == 0 || len(res.Fractions) != 0 || len(q.probes) != len(res.Steps) {
		t.Errorf("max %d, %d fraction steps, %d probes for %d steps: want a maximum and no step after the search's", res.Max, len(res.Fractions), len(q.probes), len(res.Steps))
	}
}

func TestParseLatencyAt(t *testing.T) {
	cases := []struct {
		text string
		want LatencyAt
		err  string // a part of the error; empty: none
	}{
		{"50%,75%,90%", LatencyAt{50, 75, 90}, ""},
		{" 50 % , 99.5% ", LatencyAt{50, 99.5}, ""},
		{"", nil, ""},
		{"  ", nil, ""},
		{"50", nil, `term "50": give percentages of the maximum above 0% and below 100%`},
		{"0.5", nil, "above 0% and below 100%"},
		{"0%", nil, "above 0% and below 100%"},
		{"100%", nil, "above 0% and below 100%"},
		{"-10%", nil, "above 0% and below 100%"},
		{"NaN%", nil, "above 0% and below 100%"},
		{"50%,", nil, `term ""`},
		{"90%,50%", nil, `term "50%": give each percentage once, in ascending order`},
		{"50%,50%", nil, "once, in ascending order"},
	}
	for _, c := range cases {
		got, err := ParseLatencyAt(c.text)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("ParseLatencyAt(%q) = %v, %v; want %v", c.text, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseLatencyAt(%q) = %v, %v; want an error saying %q", c.text, got, err, c.err)
		}
	}
	if got := (LatencyAt{50, 75, 90}).Rates(1001); !slices.Equal(got, []int{500, 750, 900}) {
		t.Errorf("rates at 50/75/90%% of 1001: %v", got)
	}
	if got := (LatencyAt{10}).Rates(5); !slices.Equal(got, []int{1}) {
		t.Errorf("rate at 10%% of 5: %v, want 1 (never 0)", got)
	}
}

// FuzzParseLatencyAt: whatever the text, percentages read are written back as text that reads
// the same, each above 0 and below 100, ascending.
func FuzzParseLatencyAt(f *testing.F) {
	for _, s := range []string{"50%,75%,90%", "", "99.5%", "1e1%,2e1%", "50%,50%", "0x1p-2%", "100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		at, err := ParseLatencyAt(text)
		if err != nil {
			return
		}
		for i, v := range at {
			if !(v > 0 && v < 100) || i > 0 && v <= at[i-1] {
				t.Fatalf("%q read as %v", text, at)
			}
		}
		back, err := ParseLatencyAt(at.String())
		if err != nil || !slices.Equal(back, at) {
			t.Fatalf("%q read as %v, written %q, read back as %v (%v)", text, at, at.String(), back, err)
		}
	})
}

func TestParseResolution(t *testing.T) {
	cases := []struct {
		text string
		want Resolution
		at   int // At(1000)
	}{
		{"5%", Resolution{Percent: 5}, 50},
		{" 2.5 % ", Resolution{Percent: 2.5}, 25},
		{"200", Resolution{RPS: 200}, 200},
		{"200rps", Resolution{RPS: 200}, 200},
		{"0.01%", Resolution{Percent: 0.01}, 1}, // never under 1 rps
		{"0%", Resolution{}, 0},
		{"100%", Resolution{}, 0},
		{"0", Resolution{}, 0},
		{"-5", Resolution{}, 0},
		{"fast", Resolution{}, 0},
		{"", Resolution{}, 0},
	}
	for _, c := range cases {
		got, err := ParseResolution(c.text)
		if c.at == 0 {
			if err == nil {
				t.Errorf("ParseResolution(%q) = %v, want an error", c.text, got)
			}
			continue
		}
		if err != nil || got != c.want || got.At(1000) != c.at {
			t.Errorf("ParseResolution(%q) = %v (At(1000) %d), %v; want %v (%d)", c.text, got, got.At(1000), err, c.want, c.at)
		}
	}
}

func TestFindStopsOnProbeError(t *testing.T) {
	stop := errors.New("cancelled")
	calls := 0
	_, err := Find(context.Background(), Config{Start: 1, Resolution: Resolution{RPS: 1}, Limit: 1 << 20}, slo100, func(context.Context, int) (Step, error) {
		calls++
		if calls == 3 {
			return Step{}, stop
		}
		return Step{P99: time.Millisecond}, nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("err %v after %d probes, want the probe's error at once", err, calls)
	}
	if _, err := Find(context.Background(), Config{Start: 0, Resolution: Resolution{RPS: 1}, Limit: 10}, slo100, nil); err == nil {
		t.Error("a search starting at rate 0 ran")
	}
}

func TestALuckyStepIsNotBelieved(t *testing.T) {
	q := &queue{capacity: 1000, service: 10 * time.Millisecond}
	lucky := map[int]bool{}
	// Every rate from 900 to 1000 passes the first time it is tried, as a quiet moment would let it.
	probe := func(ctx context.Context, rate int) (Step, error) {
		if rate >= 900 && rate <= 1000 && !lucky[rate] {
			lucky[rate] = true
			return Step{P99: 50 * time.Millisecond}, nil
		}
		return q.probe(ctx, rate)
	}
	res, err := Find(context.Background(), Config{Start: 125, Resolution: Resolution{RPS: 10}, Limit: 100000}, slo100, probe)
	if err != nil {
		t.Fatal(err)
	}
	if len(lucky) == 0 {
		t.Fatalf("the search never tried a lucky rate (steps %v)", res.Steps)
	}
	if res.Max < 880 || res.Max >= 900 {
		t.Errorf("max %d after lucky passes at %v, want the sustained boundary just below 900", res.Max, lucky)
	}
	passes := 0
	for _, s := range res.Steps {
		if s.Rate == res.Max && s.Failed == "" {
			passes++
		}
	}
	if passes < 2 {
		t.Errorf("max %d passed %d time(s), want at least 2", res.Max, passes)
	}
}

func TestAnUnluckyStepIsNotBelieved(t *testing.T) {
	q := &queue{capacity: 1000, service: 10 * time.Millisecond}
	unlucky := map[int]bool{}
	// Every rate from 500 up fails the first time it is tried, as a collector pause would make it.
	probe := func(ctx context.Context, rate int) (Step, error) {
		if rate >= 500 && !unlucky[rate] {
			unlucky[rate] = true
			return Step{P99: time.Second}, nil
		}
		return q.probe(ctx, rate)
	}
	res, err := Find(context.Background(), Config{Start: 125, Resolution: Resolution{RPS: 10}, Limit: 100000}, slo100, probe)
	if err != nil {
		t.Fatal(err)
	}
	if res.Max < 880 || res.Max >= 900 || res.FirstFailed < 900 {
		t.Errorf("max %d, first failed %d after unlucky steps at %v; want the boundary just below 900", res.Max, res.FirstFailed, unlucky)
	}
}

// A target that dies at a rate (out of memory) fails it at once: the rate is not voted on, for
// each vote would kill it again, and the search goes on below. Here it dies from 700 rps up,
// before its latency reaches the SLO (at 900).
func TestADeathFailsItsRateWithoutAVote(t *testing.T) {
	q := &queue{capacity: 1000, service: 10 * time.Millisecond}
	deaths := map[int]int{}
	probe := func(ctx context.Context, rate int) (Step, error) {
		if rate >= 700 {
			deaths[rate]++
			return Step{Died: "target OOM-killed"}, nil
		}
		return q.probe(ctx, rate)
	}
	res, err := Find(context.Background(), Config{Start: 100, Resolution: Resolution{RPS: 10}, Limit: 100000}, slo100, probe)
	if err != nil {
		t.Fatal(err)
	}
	if res.Max < 690 || res.Max >= 700 || res.FirstFailed < 700 || res.FirstFailed-res.Max > 10 {
		t.Errorf("max %d, first failed %d; want the last rate below 700 within 10 of one the target died at (steps %v)", res.Max, res.FirstFailed, q.probes)
	}
	for rate, n := range deaths {
		if n != 1 {
			t.Errorf("the target died %d times at %d rps: a rate it died at was run again", n, rate)
		}
	}
	for _, s := range res.Steps {
		if s.Died != "" && s.Failed != "the target died: target OOM-killed" {
			t.Errorf("step at %d: died, failed %q", s.Rate, s.Failed)
		}
	}
}

func TestASealedStepFailsWhateverItsRestBrings(t *testing.T) {
	slo, err := ParseSLO("p99<100ms,errors<0.1%")
	if err != nil {
		t.Fatal(err)
	}
	const due = 40000 // 10,000 rps for 4 s
	for _, tc := range []struct {
		name         string
		slow, errors int64
		sealed       bool
	}{
		{"nothing failed yet", 0, 0, false},
		{"1% slow: the rest could still bring p99 under", 400, 0, false},
		{"2% of the step's due requests slow", 800, 0, true},
		{"0.1% errors: the rest could still dilute them", 0, 40, false},
		{"0.2% errors", 0, 80, true},
		{"some of each, neither enough", 700, 70, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slo.Sealed(tc.slow, tc.errors, due); got != tc.sealed {
				t.Fatalf("Sealed(%d slow, %d errors, %d due) = %v, want %v", tc.slow, tc.errors, due, got, tc.sealed)
			}
			if !tc.sealed {
				return
			}
			// The rest of the step at its best: every other due request answered, fast. Its p99
			// by nearest rank over its successes still fails, as does its error ratio.
			successes := due - tc.errors
			st := Step{P99: time.Millisecond, ErrorRatio: float64(tc.errors) / due}
			if rank := int64(math.Ceil(0.99 * float64(successes))); rank > successes-tc.slow {
				st.P99 = slo.P99
			}
			if slo.Judge(&st); st.Failed == "" {
				t.Fatalf("sealed, yet at its best the step meets the SLO: %+v", st)
			}
		})
	}
	if (SLO{P99: time.Second, MaxErrors: -1}).Sealed(0, 1000, due) {
		t.Error("an SLO without an error bound is sealed by errors")
	}
}

// A step failed by requests that never got an answer, not by answers that were errors, says so:
// its row counts no error, and the SLO's share would read as a contradiction of it.
func TestAFailureByUnansweredRequestsSaysSo(t *testing.T) {
	slo := SLO{P99: 100 * time.Millisecond, MaxErrors: 0.001}
	for _, tc := range []struct {
		step Step
		want string
	}{
		{Step{P99: 50 * time.Millisecond, ErrorRatio: 0.269, Unanswered: true},
			"errors 26.900% ≥ 0.100% (requests due and never answered: every in-flight slot was taken)"},
		{Step{P99: 50 * time.Millisecond, ErrorRatio: 0.269}, "errors 26.900% ≥ 0.100%"},
		{Step{P99: 979 * time.Millisecond, ErrorRatio: 0.02, Unanswered: true},
			"p99 979ms ≥ 100ms, errors 2.000% ≥ 0.100% (requests due and never answered: every in-flight slot was taken)"},
	} {
		if slo.Judge(&tc.step); tc.step.Failed != tc.want {
			t.Errorf("failed %q, want %q", tc.step.Failed, tc.want)
		}
	}
}
