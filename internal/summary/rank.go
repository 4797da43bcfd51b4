package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
)

// MinTrialsToRank is the number of valid trials per target below which a fixed-rate scenario's
// targets are not ranked: the Mann–Whitney test that tells a difference from a tie needs 4 a side
// to reach p < 0.05 at all, and one spare trial leaves room for noise.
const MinTrialsToRank = 5

// Order is the one rule that tells two samples of a figure apart: 1 when a is better, -1 when b
// is, 0 when they cannot be told apart. It is the Mann–Whitney test at stats.DefaultAlpha, which
// needs stats.TrialsToDiffer values a side to tell any two samples apart: with fewer, none are
// (whether their ranges overlap or not).
func Order(a, b []float64, higherIsBetter bool) int {
	n := stats.TrialsToDiffer(stats.DefaultAlpha)
	if len(a) < n || len(b) < n || !stats.Compare(a, b, stats.DefaultAlpha).Significant() {
		return 0
	}
	o := cmp.Compare(stats.Summarize(a).Median, stats.Summarize(b).Median)
	if !higherIsBetter {
		o = -o
	}
	return o
}

// rank sorts samples best first by median (stably) and gives each its rank: a sample that Order
// cannot tell from the first of the group above it shares that group's rank, and every member of
// a group of several is marked "=". It returns the order as indices into samples.
func rank(samples [][]float64, higherIsBetter bool) (order []int, ranks []string) {
	order = make([]int, len(samples))
	median := make([]float64, len(samples))
	for i, s := range samples {
		order[i] = i
		median[i] = stats.Summarize(s).Median
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if higherIsBetter {
			return cmp.Compare(median[b], median[a])
		}
		return cmp.Compare(median[a], median[b])
	})
	position := make([]int, len(samples))
	size := map[int]int{}
	leader := -1
	for i, s := range order {
		if leader < 0 {
			leader = s
		} else if Order(samples[leader], samples[s], higherIsBetter) != 0 {
			leader = s
		}
		if leader == s {
			position[s] = i + 1
		} else {
			position[s] = position[leader]
		}
		size[position[s]]++
	}
	ranks = make([]string, len(samples))
	for i := range samples {
		ranks[i] = fmt.Sprint(position[i])
		if size[position[i]] > 1 {
			ranks[i] += "="
		}
	}
	return order, ranks
}

// rankMetric is the figure a fixed-rate scenario's targets are ranked on: closed loop, throughput
// (each target went as fast as it could); open loop, p99 (every valid target carried the same
// rate, so latency under that load is the difference).
func rankMetric(mode string) results.Metric {
	if mode == "closed" {
		return results.MustMetric("throughput")
	}
	return results.MustMetric("p99")
}

// rankTargets ranks a fixed-rate scenario's targets on rankMetric when every target has
// MinTrialsToRank valid trials the self-checks trust, and orders them by rank: a trial
// results.Row.Distrust names a reason for is never ranked. RankNote says how, or why not.
func rankTargets(sc *Scenario) {
	if len(sc.Targets) < 2 {
		return
	}
	by := rankMetric(sc.Settings.Mode)
	var short, distrusted []string
	var fewTrials bool
	why := map[string]int{} // the distrusted trials of the targets short of trusted ones
	// endedEarly: each of their trials still warming up had a warm-up until steady that ended
	// before its maximum, so a longer maximum would not help.
	endedEarly := true
	samples := make([][]float64, len(sc.Targets))
	for i, t := range sc.Targets {
		left := map[string]int{}
		cells := t.trustedCells(left)
		for _, d := range results.DistrustCounts(left) {
			distrusted = append(distrusted, t.Name+" "+d)
		}
		if len(cells) < MinTrialsToRank {
			short = append(short, fmt.Sprintf("%s %d", t.Name, len(cells)))
			fewTrials = fewTrials || t.Trials <= MinTrialsToRank
			for k, n := range left {
				why[k] += n
			}
			for _, c := range t.validCells() {
				if c.Row.StillWarming() && !c.Row.WarmupEndedEarly() {
					endedEarly = false
				}
			}
		}
		for _, c := range cells {
			samples[i] = append(samples[i], by.Value(c.Row))
		}
	}
	if len(short) > 0 {
		sc.Unranked = short
		sc.RankNote = fmt.Sprintf("not ranked: a ranking needs %d valid trials per target that the self-checks trust (%s)", MinTrialsToRank, strings.Join(short, ", "))
		if r := rankRemedies(fewTrials, why, endedEarly); len(r) > 0 {
			sc.RankNote += "; " + strings.Join(r, "; ")
		}
		sc.Notes = append(sc.Notes, sc.RankNote)
		return
	}
	sc.RankedBy = by
	order, ranks := rank(samples, by.HigherIsBetter)
	ranked := make([]Target, len(order))
	for i, j := range order {
		ranked[i] = sc.Targets[j]
		ranked[i].Rank = ranks[j]
	}
	sc.Targets = ranked
	better := "lower"
	if by.HigherIsBetter {
		better = "higher"
	}
	sc.RankNote = fmt.Sprintf("rank: by median %s, %s is better; \"=\" marks targets whose difference is not significant (Mann–Whitney, p ≥ %g)", by.Name, better, stats.DefaultAlpha)
	if len(distrusted) > 0 {
		sc.RankNote += fmt.Sprintf("; without the valid trials the self-checks distrust (%s)", strings.Join(distrusted, ", "))
	}
	sc.Notes = append(sc.Notes, sc.RankNote)
}

// distrustRemedies are what would make each reason of results.Distrust go (docs/selfcheck.md).
var distrustRemedies = map[string]string{
	results.DistrustNotSteady:   "a trial not steady says which figure moved: a longer warm-up, or a leak",
	results.DistrustCalibration: "the calibration missed its limits: measure again on a quiet machine",
	results.DistrustWarming:     "a target still warming up needs a longer warm-up (warmup: auto:15m)",
}

// fixedWarmupRemedy replaces DistrustWarming's remedy when every warm-up until steady of the
// trials still warming up ended on its own before its maximum: the steady-state test was met
// while the JIT still compiled, so only a fixed warm-up outlasts it.
const fixedWarmupRemedy = "a target still warming up after a warm-up until steady that ended before its maximum needs a fixed warm-up past its JIT's compilation (warmup: 10m)"

// rankRemedies say what would give the targets short of trusted trials enough: more trials when
// one has no spare, and the remedy of each reason the self-checks distrusted some for;
// endedEarly as results.Row.WarmupEndedEarly says of all the trials still warming up.
func rankRemedies(fewTrials bool, distrusted map[string]int, endedEarly bool) []string {
	var out []string
	if fewTrials {
		out = append(out, fmt.Sprintf("run with --trials %d or more", MinTrialsToRank+1))
	}
	for _, why := range results.DistrustReasons {
		switch {
		case distrusted[why] == 0:
		case why == results.DistrustWarming && endedEarly:
			out = append(out, fixedWarmupRemedy)
		default:
			out = append(out, distrustRemedies[why])
		}
	}
	return out
}
