package load

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/timeline"
)

func TestParseStages(t *testing.T) {
	cases := []struct {
		text, want, err string
	}{
		{text: "30s:500,60s:500-5000,30s:5000", want: "30s:500,1m:500-5000,30s:5000"},
		{text: "1m30s:0-100, 1h:100", want: "1m30s:0-100,1h:100"},
		{text: "10s:5000-500", want: "10s:5000-500"},
		{text: "30s", err: `stage "30s": write it DURATION:RATE or DURATION:FROM-TO (e.g. 30s:500, 60s:500-5000)`},
		{text: "1500ms:10", err: `stage "1500ms:10": the duration "1500ms" must be whole seconds, at least 1s (e.g. 30s, 2m)`},
		{text: "10s:fast", err: `stage "10s:fast": the rate "fast" must be a whole number of requests per second, 0 or more`},
		{text: "10s:5--1", err: `the rate "-1" must be`},
		{text: "10s:0", err: "the stages send no request: give a rate above 0"},
	}
	for _, c := range cases {
		stages, err := ParseStages(c.text)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.text, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.text, err)
		case FormatStages(stages) != c.want:
			t.Errorf("%q read as %s, want %s", c.text, FormatStages(stages), c.want)
		}
	}
}

// requestsBy is Λ(t), the requests due by t under stages, computed on its own: the area under
// the rates.
func requestsBy(stages []Stage, t time.Duration) float64 {
	var n float64
	for _, s := range stages {
		tau := min(t, s.Duration).Seconds()
		if tau <= 0 {
			break
		}
		slope := float64(s.To-s.From) / s.Duration.Seconds()
		n += float64(s.From)*tau + slope*tau*tau/2
		t -= s.Duration
	}
	return n
}

// The uniform schedule of stages follows their line: request i is due exactly when i+1 requests
// are due by the rates (to the nanosecond the due times are rounded to), steps and ramps up and
// down alike, and the stages send the area under their rates.
func TestStagedScheduleFollowsItsLine(t *testing.T) {
	for _, text := range []string{"30s:500,60s:500-5000,30s:5000", "10s:0-1000,10s:1000-0", "5s:7,5s:3"} {
		stages, err := ParseStages(text)
		if err != nil {
			t.Fatal(err)
		}
		s := newSchedule(Model{Stages: stages}, 0)
		var n uint64
		prev := time.Duration(0)
		for ; ; n++ {
			wait, end := s.Pace(0, n)
			if end {
				break
			}
			at := s.due(n)
			if at != wait || at < prev {
				t.Fatalf("%s: request %d due at %v (wait %v), after one due at %v", text, n, at, wait, prev)
			}
			prev = at
			// One nanosecond either side of the due time holds i+1 requests between them.
			if lo, hi := requestsBy(stages, at-time.Nanosecond), requestsBy(stages, at+time.Nanosecond); lo > float64(n+1)+1e-6 || hi < float64(n+1)-1e-6 {
				t.Fatalf("%s: request %d due at %v, where the line has %.6f to %.6f due", text, n, at, lo, hi)
			}
		}
		if want := uint64(math.Floor(StagesRequests(stages) + 1e-9)); n != want {
			t.Errorf("%s: %d requests, want %d (the area under the rates)", text, n, want)
		}
	}
}

// Poisson arrivals over stages keep the stages' counts: each stage sends its area within 1%
// (over thousands of requests a stage, 1% is many standard deviations).
func TestStagedPoissonKeepsTheCounts(t *testing.T) {
	stages, _ := ParseStages("300s:500,300s:500-2000,300s:2000")
	s := newSchedule(Model{Stages: stages, Arrival: arrival.Poisson}, 5)
	counts := make([]float64, len(stages))
	for i := uint64(0); ; i++ {
		if _, end := s.Pace(0, i); end {
			break
		}
		at := s.due(i)
		for k := range stages {
			if at <= StagesDuration(stages[:k+1]) {
				counts[k]++
				break
			}
		}
	}
	for k, st := range stages {
		want := float64(st.From+st.To) / 2 * st.Duration.Seconds()
		if math.Abs(counts[k]-want) > 0.01*want {
			t.Errorf("stage %s: %.0f requests, want %.0f within 1%%", st, counts[k], want)
		}
	}
}

// Shards of a uniform schedule of stages, each every Count-th request of it, are the schedule
// together, request for request.
func TestStagedShareInterleaves(t *testing.T) {
	stages, _ := ParseStages("5s:100-1000,5s:1000")
	whole := newSchedule(Model{Stages: stages}, 0)
	const count = 3
	shards := make([]schedule, count)
	next := make([]uint64, count)
	for i := range shards {
		shards[i] = newSchedule(Model{Stages: stages, Share: Share{Index: i, Count: count}}, 0)
	}
	for j := uint64(0); ; j++ {
		_, end := whole.Pace(0, j)
		i := j % count
		_, shardEnd := shards[i].Pace(0, next[i])
		if end != shardEnd {
			t.Fatalf("request %d: the whole schedule ends %v, shard %d %v", j, end, i, shardEnd)
		}
		if end {
			break
		}
		if got, want := shards[i].due(next[i]), whole.due(j); got != want {
			t.Fatalf("request %d: shard %d has it due at %v, the whole at %v", j, i, got, want)
		}
		next[i]++
	}
}

// A run of stages: its second-by-second timeline shows the ramp (the requests due each second
// follow the rates), and it is judged by the stages' mean rate.
func TestStagesRun(t *testing.T) {
	url := serve(t, &stub{})
	stages, _ := ParseStages("1s:100,1s:200-400")
	cfg := config(url, Model{Rate: 200, Stages: stages, ExpectedLatency: time.Millisecond}, 2*time.Second)
	cfg.Warmup = 200 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Requests > 400 || res.RequestedRate != 200 {
		t.Fatalf("%d requests (want at most 400, the stages' area), requested %d rps", res.Requests, res.RequestedRate)
	}
	if len(res.Timeline) < 2 || res.Timeline[1].Due < 2*res.Timeline[0].Due {
		t.Errorf("timeline %+v: the ramp's second (300 due) does not show over the first (100)", res.Timeline)
	}
	cfg.Duration = time.Second
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "the stages last 2s, the measured phase 1s") {
		t.Errorf("stages longer than the phase: err %v", err)
	}
}

// A phase of stages cut at their ends: each stage's answers and latencies are those of its
// seconds, the last taking what came after the phase; each is judged at its own mean rate, its
// answers against what was due in its seconds less what it sent late (the second stage: 100 due
// in its second and not sent in it, with every slot taken).
func TestStageResults(t *testing.T) {
	stages, _ := ParseStages("2s:100,1s:100-300")
	second := func(i int, due, sent, successes, timeouts int64, ms ...int64) timeline.Second {
		rec := latency.NewRecorder(time.Minute)
		for _, v := range ms {
			rec.Record(time.Duration(v) * time.Millisecond)
		}
		enc, err := rec.Histogram().Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return timeline.Second{Index: i, Due: due, Sent: sent, Successes: successes, Timeouts: timeouts, InFlight: int64(i), Full: sent < due, OwnDelayP99: time.Duration(i) * 100 * time.Microsecond, Histogram: enc}
	}
	res := Result{Mode: Open, Arrival: arrival.Uniform, InFlightLimit: 100, Timeline: []timeline.Second{
		second(0, 100, 100, 100, 0, repeat(1, 100)...),
		second(1, 100, 102, 98, 1, repeat(2, 98)...), // two on their way at the stage's end
		second(2, 300, 200, 201, 0, repeat(5, 201)...),
		second(3, 0, 0, 1, 0, 9), // answered after the phase
	}}
	// Each stage is bounded as far as it climbs (2 × rate × (0 + 100 ms)), under the phase's.
	got, err := StageResults(res, Config{Model: Model{Stages: stages}})
	if err != nil {
		t.Fatal(err)
	}
	type figures struct {
		rate                          int
		requests, successes, timeouts int64
		scheduled                     int64
		p50, max                      time.Duration
		peak                          int64
		limit                         int
		own                           time.Duration
		fault                         fault.Kind
	}
	want := []figures{
		{100, 199, 198, 1, 199, 1 * time.Millisecond, 2 * time.Millisecond, 1, 20, 100 * time.Microsecond, fault.None},
		{200, 202, 202, 0, 302, 5 * time.Millisecond, 9 * time.Millisecond, 3, 60, 300 * time.Microsecond, fault.InFlightFull},
	}
	for k, r := range got {
		// The histogram keeps 3 significant digits.
		ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
		f := figures{r.RequestedRate, r.Requests, r.Successes, r.Timeouts, r.Scheduled, ms(r.Latency.P50), ms(r.Latency.Max), r.PeakInFlight, r.InFlightLimit, r.OwnDelay.P99, r.Fault}
		if f != want[k] {
			t.Errorf("stage %d: %+v (%s), want %+v", k+1, f, r.InvalidReason, want[k])
		}
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// A ramp ended early: asked with its closed seconds in order, the phase ends at the end of the
// second under way once EndEarly says so, lasting whole seconds, and is judged on what was due
// in them (not the whole ramp's schedule). The bounds leave the machine a second of slack.
func TestEndEarlyEndsARampAtTheSecond(t *testing.T) {
	url := serve(t, &stub{})
	stages, _ := ParseStages("8s:100-500")
	cfg := config(url, Model{Rate: 300, Stages: stages, ExpectedLatency: time.Millisecond}, 8*time.Second)
	var asked [][]timeline.Second
	cfg.EndEarly = func(seconds []timeline.Second) bool {
		asked = append(asked, slices.Clone(seconds))
		return len(seconds) >= 2
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) == 0 {
		t.Fatal("EndEarly never asked")
	}
	last := asked[len(asked)-1]
	for i, s := range last {
		if s.Index != i || s.Successes == 0 || s.P99 == 0 {
			t.Errorf("second %d asked as %+v: want every second in order, with its answers and percentiles", i, s)
		}
	}
	if res.Duration < 3*time.Second || res.Duration > 5*time.Second || res.Duration%time.Second != 0 {
		t.Errorf("phase of %v after EndEarly at 2 seconds, want 3 or 4 whole seconds", res.Duration)
	}
	if all := StagesRequests(stages); float64(res.Requests) > 0.75*all || res.Scheduled > res.Requests+res.Requests/50 {
		t.Errorf("%d requests of the ramp's %.0f, %d scheduled: want the ramp cut short, judged on its seconds", res.Requests, all, res.Scheduled)
	}
	if strings.Contains(res.InvalidReason, "generator sent") { // its own delay is this machine's load
		t.Errorf("ended early, judged against the whole ramp: %s", res.InvalidReason)
	}
	cfg.Model = Model{Connections: 2}
	cfg.Duration = time.Second
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "early end") {
		t.Errorf("EndEarly on a closed loop: err %v", err)
	}
}

func TestStagesRate(t *testing.T) {
	stages, _ := ParseStages("2s:100,4s:100-500,1s:0")
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 100}, {1500 * time.Millisecond, 100}, {2 * time.Second, 100}, {3 * time.Second, 200}, {5500 * time.Millisecond, 450}, {6 * time.Second, 0}, {7 * time.Second, 0}} {
		if got := StagesRate(stages, c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("StagesRate at %v = %v, want %v", c.at, got, c.want)
		}
	}
}

func TestStagesUntil(t *testing.T) {
	stages, _ := ParseStages("2s:100,4s:100-500")
	for _, c := range []struct {
		du   time.Duration
		want string
	}{{time.Second, "1s:100"}, {2 * time.Second, "2s:100"}, {3 * time.Second, "2s:100,1s:100-200"}, {6 * time.Second, "2s:100,4s:100-500"}, {9 * time.Second, "2s:100,4s:100-500"}} {
		if got := FormatStages(StagesUntil(stages, c.du)); got != c.want {
			t.Errorf("StagesUntil %v = %s, want %s", c.du, got, c.want)
		}
	}
}

func TestStagesPeakUntil(t *testing.T) {
	stages, _ := ParseStages("2s:100,2s:100-300,1s:300-50")
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{
		{0, 100},
		{time.Second, 100},
		{2 * time.Second, 100},
		{3 * time.Second, 200},
		{3*time.Second + time.Millisecond, 201}, // rounded up: 200.1
		{4*time.Second + 500*time.Millisecond, 300},
		{time.Hour, 300},
	} {
		if got := StagesPeakUntil(stages, tc.at); got != tc.want {
			t.Errorf("at %s: %d, want %d", tc.at, got, tc.want)
		}
	}
}

// The in-flight bound follows the rate the stages have reached, the streams of their own on top;
// a constant rate and a closed loop keep theirs.
func TestInFlightLimitAtFollowsTheClimb(t *testing.T) {
	climb, _ := ParseStages("4s:500-50000")
	for _, tc := range []struct {
		name string
		cfg  Config
		at   time.Duration
		want int
	}{
		{"climb at its start", Config{Model: Model{Stages: climb, ExpectedLatency: 50 * time.Millisecond}}, 0, 150},
		{"climb half way", Config{Model: Model{Stages: climb, ExpectedLatency: 50 * time.Millisecond}}, 2 * time.Second, 7575},
		{"climb at its top: the engine's most", Config{Model: Model{Stages: climb, ExpectedLatency: 50 * time.Millisecond}}, 4 * time.Second, MaxInFlight},
		{"a shard's share", Config{Model: Model{Stages: climb, ExpectedLatency: 50 * time.Millisecond, Share: Share{Index: 0, Count: 2}}}, 0, 75},
		{"a stream of its own", Config{Model: Model{Stages: climb, ExpectedLatency: 50 * time.Millisecond}, Kinds: []Kind{{Rate: 100}}}, 0, 180},
		{"constant rate", Config{Model: Model{Rate: 1000, ExpectedLatency: 50 * time.Millisecond}}, time.Second, 300},
		{"closed loop", Config{Model: Model{Connections: 64}}, time.Second, 64},
	} {
		if got := tc.cfg.InFlightLimitAt(tc.at); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Behind a server that answers in a second, a climb's first stage at 100 rps keeps the bound of
// 100 rps in flight (2 × 100 × (1 ms + 100 ms) = 21), not that of its top (2,000 rps: 404),
// and its stage and the phase say the slots were full. Bounded at the top, ~100 would wait.
func TestAClimbQueuesNoDeeperThanItsRate(t *testing.T) {
	url := serve(t, &stub{delay: time.Second})
	stages, _ := ParseStages("3s:100,1s:100-2000")
	cfg := config(url, Model{Rate: 100, Stages: stages, ExpectedLatency: time.Millisecond}, 4*time.Second)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.InFlightLimit != 404 {
		t.Errorf("bound at the top %d, want 404", res.InFlightLimit)
	}
	if !res.InFlightFull || res.Fault != fault.InFlightFull {
		t.Errorf("slots full %v, judged %s (%s), want the in-flight slots full", res.InFlightFull, res.Fault, res.InvalidReason)
	}
	byStage, err := StageResults(res, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := byStage[0]
	if first.InFlightLimit != 21 || first.PeakInFlight < 15 || first.PeakInFlight > 21 {
		t.Errorf("first stage: peak in flight %d of a bound of %d, want the bound of 100 rps, 21", first.PeakInFlight, first.InFlightLimit)
	}
	if first.Fault != fault.InFlightFull {
		t.Errorf("first stage judged %s (%s), want the in-flight slots full", first.Fault, first.InvalidReason)
	}
}
