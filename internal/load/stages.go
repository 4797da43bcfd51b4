package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/latency"
)

// Stage is a stretch of an open loop whose rate goes in a straight line from From to To requests
// per second over Duration: constant when they are equal, a ramp when not. A step is two stages
// of different rates, one after the other.
type Stage struct {
	Duration time.Duration
	From, To int
}

// String writes the stage as ParseStages reads it: 30s:500, 60s:500-5000.
func (s Stage) String() string {
	d := s.Duration.String() // 1m0s, 1h0m0s: the zero units dropped
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	if strings.HasSuffix(d, "h0m") {
		d = strings.TrimSuffix(d, "0m")
	}
	if s.From == s.To {
		return fmt.Sprintf("%s:%d", d, s.From)
	}
	return fmt.Sprintf("%s:%d-%d", d, s.From, s.To)
}

// FormatStages writes stages as ParseStages reads them, comma-separated.
func FormatStages(stages []Stage) string {
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// ParseStage reads one stage: DURATION:RATE (constant) or DURATION:FROM-TO (a ramp), e.g. 30s:500
// or 60s:500-5000. The duration is whole seconds, so that each stage's rows are made of whole
// seconds of the timeline.
func ParseStage(text string) (Stage, error) {
	d, rates, ok := strings.Cut(strings.TrimSpace(text), ":")
	if !ok {
		return Stage{}, fmt.Errorf("stage %q: write it DURATION:RATE or DURATION:FROM-TO (e.g. 30s:500, 60s:500-5000)", text)
	}
	du, err := time.ParseDuration(d)
	if err != nil || du < time.Second || du%time.Second != 0 {
		return Stage{}, fmt.Errorf("stage %q: the duration %q must be whole seconds, at least 1s (e.g. 30s, 2m)", text, d)
	}
	from, to, ramp := strings.Cut(rates, "-")
	if !ramp {
		to = from
	}
	s := Stage{Duration: du}
	for _, r := range []struct {
		text string
		n    *int
	}{{from, &s.From}, {to, &s.To}} {
		n, err := strconv.Atoi(r.text)
		if err != nil || n < 0 {
			return Stage{}, fmt.Errorf("stage %q: the rate %q must be a whole number of requests per second, 0 or more", text, r.text)
		}
		*r.n = n
	}
	return s, nil
}

// ParseStages reads a comma-separated list of stages (ParseStage), e.g. 30s:500,60s:500-5000,30s:5000.
func ParseStages(text string) ([]Stage, error) {
	var stages []Stage
	for _, part := range strings.Split(text, ",") {
		s, err := ParseStage(part)
		if err != nil {
			return nil, err
		}
		stages = append(stages, s)
	}
	return stages, CheckStages(stages)
}

// CheckStages refuses stages that send nothing.
func CheckStages(stages []Stage) error {
	if len(stages) == 0 {
		return errors.New("no stage: give at least one, e.g. 30s:500")
	}
	if StagesRequests(stages) < 1 {
		return errors.New("the stages send no request: give a rate above 0")
	}
	return nil
}

// StagesDuration is how long the stages last together.
func StagesDuration(stages []Stage) time.Duration {
	var du time.Duration
	for _, s := range stages {
		du += s.Duration
	}
	return du
}

// StagesRequests is how many requests the stages send: the area under their rates.
func StagesRequests(stages []Stage) float64 {
	var n float64
	for _, s := range stages {
		n += float64(s.From+s.To) / 2 * s.Duration.Seconds()
	}
	return n
}

// StagesPeak is the highest rate of the stages.
func StagesPeak(stages []Stage) int {
	peak := 0
	for _, s := range stages {
		peak = max(peak, s.From, s.To)
	}
	return peak
}

// StagesPeakUntil is the highest rate the stages reach by at, from their start (rounded up);
// StagesPeak once they are over.
func StagesPeakUntil(stages []Stage, at time.Duration) int {
	peak := 0
	var start time.Duration
	for _, s := range stages {
		if at < start+s.Duration {
			return max(peak, s.From, int(math.Ceil(StagesRate([]Stage{s}, max(at-start, 0)))))
		}
		peak = max(peak, s.From, s.To)
		start += s.Duration
	}
	return peak
}

// StagesRate is the stages' rate at, from their start; 0 after their end.
func StagesRate(stages []Stage, at time.Duration) float64 {
	var start time.Duration
	for _, s := range stages {
		if at < start+s.Duration {
			f := (at - start).Seconds() / s.Duration.Seconds()
			return float64(s.From) + f*float64(s.To-s.From)
		}
		start += s.Duration
	}
	return 0
}

// StagesUntil are stages as far as du from their start: the stage under way at du ends there, at
// its rate then (rounded); all of them when they end before.
func StagesUntil(stages []Stage, du time.Duration) []Stage {
	var out []Stage
	var start time.Duration
	for _, s := range stages {
		if left := du - start; left < s.Duration {
			if left > 0 {
				out = append(out, Stage{Duration: left, From: s.From, To: int(math.Round(StagesRate([]Stage{s}, left)))})
			}
			return out
		}
		out = append(out, s)
		start += s.Duration
	}
	return out
}

// Share places a shard's uniform schedule among Count shards splitting one (Index from 0): the
// shard sends every Count-th request of the whole, from request Index, so that the shards'
// requests interleave into the cell's schedule whatever its rate does. The zero Share is the
// whole schedule.
type Share struct{ Index, Count int }

// stagedPacer is the schedule of stages: with Λ(t) the requests due by t (the area under the
// rates), uniform request i is due when Λ reaches i+1, and Poisson requests when Λ reaches the
// running sum of exponential draws of mean 1 (a Poisson process of varying rate is a unit one
// with its clock run at the rate). Each due time is Λ's inverse, found exactly on the stage's line:
// for a ramp, the root of a quadratic.
type stagedPacer struct {
	stages []Stage
	starts []time.Duration // each stage's start
	before []float64       // requests due before each stage
	total  time.Duration

	poisson bool
	rng     *rand.Rand
	lead    float64 // uniform: request i is due at Λ = i·step + lead
	step    float64
	next    uint64  // the request whose due time at holds
	u       float64 // its Λ
	at      time.Duration
}

var _ schedule = (*stagedPacer)(nil)

func newStagedPacer(stages []Stage, process arrival.Process, seed uint64, share Share) *stagedPacer {
	p := &stagedPacer{stages: stages, poisson: process == arrival.Poisson, lead: 1, step: 1}
	var at time.Duration
	var n float64
	for _, s := range stages {
		p.starts, p.before = append(p.starts, at), append(p.before, n)
		at += s.Duration
		n += float64(s.From+s.To) / 2 * s.Duration.Seconds()
	}
	p.total = at
	if share.Count > 1 {
		p.step, p.lead = float64(share.Count), float64(share.Index+1)
	}
	if p.poisson {
		p.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		p.u = p.rng.ExpFloat64()
	} else {
		p.u = p.lead
	}
	p.at = p.inverse(p.u)
	return p
}

// inverse is when Λ reaches u; past the last stage when it never does.
func (p *stagedPacer) inverse(u float64) time.Duration {
	for k, s := range p.stages {
		end := p.before[k] + float64(s.From+s.To)/2*s.Duration.Seconds()
		if u > end {
			continue
		}
		x := u - p.before[k]
		r0 := float64(s.From)
		slope := float64(s.To-s.From) / s.Duration.Seconds()
		// x = r0·τ + slope·τ²/2, solved in the form that neither divides by the slope nor
		// loses precision when it is small.
		tau := 2 * x / (r0 + math.Sqrt(max(r0*r0+2*slope*x, 0)))
		if math.IsNaN(tau) { // x = 0 on a stage starting at rate 0
			tau = 0
		}
		return p.starts[k] + time.Duration(tau*float64(time.Second))
	}
	return p.total + time.Nanosecond
}

// due is when request i is due: the last one drawn, or the one after it.
func (p *stagedPacer) due(i uint64) time.Duration {
	if i == p.next+1 {
		if p.poisson {
			p.u += p.rng.ExpFloat64()
		} else {
			p.u = float64(i)*p.step + p.lead
		}
		p.at, p.next = p.inverse(p.u), i
	}
	if i != p.next {
		panic(fmt.Sprintf("load: staged schedule asked for request %d after %d", i, p.next))
	}
	return p.at
}

// Pace implements vegeta.Pacer: how long until request hits is due; the end once the stages
// are over.
func (p *stagedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	at := p.due(hits)
	if at > p.total {
		return 0, true
	}
	return max(at-elapsed, 0), false
}

// Rate implements vegeta.Pacer: the rate at elapsed.
func (p *stagedPacer) Rate(elapsed time.Duration) float64 {
	return StagesRate(p.stages, elapsed) / max(p.step, 1)
}

// StageResults cuts res, a measured phase of cfg's stages, into one Result per stage, each made of the
// whole seconds of res.Timeline the stage spans (stages last whole seconds): its answers, errors
// and latencies by the second they were answered in, the last stage taking the answers that came
// after the phase. Each is judged as a phase of its own at the stage's mean rate; what the
// timeline does not keep by the second is the worst second's (peak in flight, slots full, the
// generator's own delay) or the phase's (send lag, bytes, codes: none). What it sent is judged
// against the requests due in its seconds: its answers are its Requests, and those due in its
// seconds that did not leave in them are what it fell short by. A stage's answers lag its sends
// by a latency, so judging answers against what was due would charge the generator for requests
// still on their way at the stage's end. Each keeps its seconds of the timeline.
func StageResults(res Result, cfg Config) ([]Result, error) {
	stages := cfg.Model.Stages
	out := make([]Result, len(stages))
	first := 0
	var end time.Duration
	for k, st := range stages {
		last := first + int(st.Duration/time.Second)
		if k == len(stages)-1 {
			last = max(last, len(res.Timeline))
		}
		end += st.Duration
		r := Result{
			Mode: res.Mode, Arrival: res.Arrival, ExpectedLatency: res.ExpectedLatency, InFlightLimit: min(res.InFlightLimit, cfg.InFlightLimitAt(end)),
			RequestedRate: int(math.Round(float64(st.From+st.To) / 2)), Duration: st.Duration, SendLag: res.SendLag,
			Generators: res.Generators, ClockOffset: res.ClockOffset, ClockMeasured: res.ClockMeasured,
		}
		var h *hdrhistogram.Histogram
		var due, sent int64
		r.Timeline = res.Timeline[min(first, len(res.Timeline)):min(last, len(res.Timeline))]
		for _, s := range r.Timeline {
			r.Successes += s.Successes
			r.Errors += s.Errors()
			r.Timeouts += s.Timeouts
			r.PeakInFlight = max(r.PeakInFlight, s.InFlight)
			r.InFlightFull = r.InFlightFull || s.Full
			due, sent = due+s.Due, sent+s.Sent
			if s.OwnDelayP99 > r.OwnDelay.P99 {
				r.OwnDelay.P99 = s.OwnDelayP99
			}
			if s.Histogram == nil {
				continue
			}
			sh, err := hdrhistogram.Decode(s.Histogram)
			if err != nil {
				return nil, fmt.Errorf("second %d of the timeline: %w", s.Index, err)
			}
			if h == nil {
				h = sh
			} else {
				h.Merge(sh)
			}
		}
		if h == nil {
			h = hdrhistogram.New(1, time.Hour.Microseconds(), 3)
		}
		r.Requests = r.Successes + r.Errors
		if due > 0 {
			r.Scheduled = r.Requests + max(due-sent, 0)
		}
		r.Answered = r.Successes // by the second they were answered in
		r.OwnDelay.Count = r.Successes
		r.Latencies, r.Latency = h, latency.Summarize(h)
		r.SetFault(judge(r))
		out[k] = r
		first = last
	}
	return out, nil
}
