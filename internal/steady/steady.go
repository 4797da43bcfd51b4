// Package steady judges whether a measured phase was in a steady state: a trend test over its
// per-second figures (throughput, p50, p99, errors) that flags the phase only when a figure
// changed over it both significantly (Mann–Kendall) and by a large amount (its Sen slope over
// the phase against the figure's level). With per-second samples almost any slope is
// significant; the minimum effect keeps noise and harmless drift from flagging a cell.
package steady

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/timeline"
)

// MinSeconds is the fewest judged seconds a phase needs to be judged at all: below it, no trend
// test can reach significance.
const MinSeconds = 8

// Alpha is the significance level of each figure's trend test.
const Alpha = 0.01

// MinChange is the least change over the phase, as a share of the figure's level (its median),
// that makes a significant trend a not-steady phase.
const MinChange = 0.10

// MinErrorChange is the least change of the error share over the phase (an absolute share of
// the second's requests) that flags it: an error level near zero has no useful 10%.
const MinErrorChange = 0.01

// Trend is one figure's change over the phase.
type Trend struct {
	Figure string  // throughput, p50, p99, errors
	Unit   string  // of Slope: rps, ms, % of requests
	Slope  float64 // Sen's slope: Unit per second
	Level  float64 // the figure's median, in Unit
	P      float64 // Mann–Kendall's two-sided p-value
}

// Change is the slope over the phase's n seconds.
func (t Trend) Change(n int) float64 { return t.Slope * float64(n-1) }

// String says the trend in words: "p50 rose 2.1 ms per second over the measured phase".
func (t Trend) String() string {
	verb := "rose"
	if t.Slope < 0 {
		verb = "fell"
	}
	return fmt.Sprintf("%s %s %.3g %s per second over the measured phase", t.Figure, verb, math.Abs(t.Slope), t.Unit)
}

// Judgement is what the test found of a phase.
type Judgement struct {
	// Judged is false when the phase had fewer than MinSeconds seconds to judge.
	Judged bool
	// Trends are the figures that changed significantly and by a large amount; none when steady.
	Trends []Trend
}

// Steady says the phase was judged and no figure trended.
func (v Judgement) Steady() bool { return v.Judged && len(v.Trends) == 0 }

// String is the judgement in words: "not steady: p50 rose 2.1 ms per second over the measured
// phase"; empty when steady or not judged.
func (v Judgement) String() string {
	if len(v.Trends) == 0 {
		return ""
	}
	words := make([]string, len(v.Trends))
	for i, t := range v.Trends {
		words[i] = t.String()
	}
	return "not steady: " + strings.Join(words, ", ")
}

// Judge tests a measured phase's seconds. The last second is left out: the phase's end cuts it
// short, and its few answers would read as a fall in throughput.
func Judge(seconds []timeline.Second) Judgement {
	if len(seconds) > 0 {
		seconds = seconds[:len(seconds)-1]
	}
	return judge(seconds, Alpha, len(seconds))
}

// WarmupAlpha is the significance level of a warm-up's trend tests: looser than a measured
// phase's, since there the burden of proof is reversed (a warm-up that ends too early spoils
// the phase; one that runs on costs seconds).
const WarmupAlpha = 0.05

// JudgeWarmup tests a warm-up's latest complete seconds: steady when no figure trends (at
// WarmupAlpha) by a change that, kept up over horizon seconds (the measured phase to come),
// Judge would flag.
func JudgeWarmup(seconds []timeline.Second, horizon int) Judgement {
	return judge(seconds, WarmupAlpha, horizon)
}

// judge flags each figure of seconds whose trend is significant at alpha and, over horizon
// seconds, large.
func judge(seconds []timeline.Second, alpha float64, horizon int) Judgement {
	if len(seconds) < MinSeconds {
		return Judgement{}
	}
	var tput, p50, p99, errs []float64
	for _, s := range seconds {
		tput = append(tput, float64(s.Successes))
		if n := s.Successes + s.Errors(); n > 0 {
			errs = append(errs, 100*float64(s.Errors())/float64(n))
		}
		if s.Successes > 0 {
			p50 = append(p50, ms(s.P50.Seconds()))
			p99 = append(p99, ms(s.P99.Seconds()))
		}
	}
	v := Judgement{Judged: true}
	for _, f := range []struct {
		name, unit string
		xs         []float64
		absolute   float64 // the least change, when not a share of the level
	}{
		{"throughput", "rps", tput, 0},
		{"p50", "ms", p50, 0},
		{"p99", "ms", p99, 0},
		{"errors", "% of requests", errs, 100 * MinErrorChange},
	} {
		if len(f.xs) < MinSeconds {
			continue
		}
		t := Trend{Figure: f.name, Unit: f.unit, Slope: SenSlope(f.xs), Level: median(slices.Clone(f.xs)), P: MannKendall(f.xs)}
		least := f.absolute
		if least == 0 {
			least = MinChange * math.Abs(t.Level)
		}
		if t.P < alpha && math.Abs(t.Change(horizon)) >= least && t.Slope != 0 {
			v.Trends = append(v.Trends, t)
		}
	}
	return v
}

func ms(seconds float64) float64 { return 1000 * seconds }

// MannKendall is the two-sided p-value of the Mann–Kendall test for a monotonic trend in xs
// (in order), by its normal approximation with the variance corrected for ties and the
// statistic for continuity. 1 when xs has fewer than 3 values or no variance.
func MannKendall(xs []float64) float64 {
	n := len(xs)
	if n < 3 {
		return 1
	}
	s := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				s++
			case xs[j] < xs[i]:
				s--
			}
		}
	}
	nf := float64(n)
	variance := nf * (nf - 1) * (2*nf + 5)
	ties := map[float64]int{}
	for _, x := range xs {
		ties[x]++
	}
	for _, t := range ties {
		tf := float64(t)
		variance -= tf * (tf - 1) * (2*tf + 5)
	}
	variance /= 18
	if variance <= 0 || s == 0 {
		return 1
	}
	z := (math.Abs(float64(s)) - 1) / math.Sqrt(variance)
	return math.Erfc(z / math.Sqrt2)
}

// SenSlope is the Theil–Sen slope of xs against their index: the median of the slopes of
// every pair, robust to the odd outlier second (a GC pause).
func SenSlope(xs []float64) float64 {
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			slopes = append(slopes, (xs[j]-xs[i])/float64(j-i))
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return median(slopes)
}

// median sorts xs and returns their median.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
