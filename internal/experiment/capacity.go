package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
)

// Capacity is one target's answer to "how much load does it sustain under the SLO": the maximum
// of each search, and what the steps at that maximum cost.
type Capacity struct {
	Target string
	Max    Figure // max rps over the target's searches
	// At the maximum: the median over the steps that met the SLO at a search's maximum rate.
	P99        time.Duration
	CPUCores   float64
	MemoryPeak int64
	Rank       int
	TiesWith   string // the target ranked just above, when they cannot be told apart
	Unsearched string // why no search found a maximum
	// AtLeast is, for a target no search found a maximum of (it died, was OOM-killed), the highest
	// rate one of its steps met the SLO at: its capacity is at least that, by what was measured.
	AtLeast     int
	generatorAt bool
}

var maxRPS = results.MustMetric("max")

// Capacities ranks the targets searched by their maxima, with ties: a target ranks with the one
// above it when their maxima cannot be told apart (see better). rows are the searches' steps.
func Capacities(found []maxrate.Outcome, rows []results.Row) []Capacity {
	maxima := map[string][]float64{}
	var out []Capacity
	index := map[string]int{}
	for _, o := range found {
		i, ok := index[o.Target]
		if !ok {
			i = len(out)
			index[o.Target] = i
			out = append(out, Capacity{Target: o.Target})
		}
		c := &out[i]
		switch {
		case o.Failed != "":
			c.Unsearched = o.Failed
		case o.Max > 0:
			maxima[o.Target] = append(maxima[o.Target], float64(o.Max))
			c.generatorAt = c.generatorAt || o.GeneratorLimited
		}
	}
	for i := range out {
		c := &out[i]
		values := maxima[c.Target]
		if len(values) == 0 {
			if c.Unsearched == "" {
				c.Unsearched = "no rate met the SLO"
			}
			for _, r := range rows {
				if r.Target == c.Target && r.Valid {
					c.AtLeast = max(c.AtLeast, r.RequestedRPS)
				}
			}
			continue
		}
		c.Max = figureOf(c.Target, values)
		var p99, cpu, mem []float64
		for _, r := range rows {
			if r.Target == c.Target && r.Valid && slices.Contains(values, float64(r.RequestedRPS)) {
				p99 = append(p99, float64(r.LatencyP99))
				cpu = append(cpu, r.CPUCores)
				mem = append(mem, float64(r.MemoryPeak))
			}
		}
		if len(p99) > 0 {
			c.P99 = time.Duration(stats.Summarize(p99).Median)
			c.CPUCores = stats.Summarize(cpu).Median
			c.MemoryPeak = int64(stats.Summarize(mem).Median)
		}
	}
	slices.SortStableFunc(out, func(a, b Capacity) int {
		switch {
		case len(a.Max.Values) == 0 && len(b.Max.Values) == 0:
			return 0
		case len(a.Max.Values) == 0:
			return 1
		case len(b.Max.Values) == 0:
			return -1
		case a.Max.Median > b.Max.Median:
			return -1
		case a.Max.Median < b.Max.Median:
			return 1
		}
		return 0
	})
	for i := range out {
		if len(out[i].Max.Values) == 0 {
			continue
		}
		out[i].Rank = i + 1
		if i > 0 && len(out[i-1].Max.Values) > 0 {
			if o, _ := better(out[i-1].Max, out[i].Max); o == 0 {
				out[i].Rank, out[i].TiesWith = out[i-1].Rank, out[i-1].Target
			}
		}
	}
	return out
}

func figureOf(target string, values []float64) Figure {
	f := Figure{Target: target, Metric: &maxRPS, Values: values, Valid: len(values)}
	s := stats.Summarize(values)
	f.Median = s.Median
	if len(values) >= stats.MinTrialsForCI && s.Finite() {
		f.Lo, f.Hi = s.Lo, s.Hi
	} else {
		f.Lo, f.Hi, f.Range = slices.Min(values), slices.Max(values), true
	}
	return f
}

// WriteCapacity answers the question of a --find-max run: which target sustains the most load of
// scenario under slo, at what latency and at what CPU and memory cost, ranked with ties, and in
// one sentence.
func WriteCapacity(w io.Writer, scenario string, slo maxrate.SLO, found []maxrate.Outcome, rows []results.Row) error {
	caps := Capacities(found, rows)
	d := &doc{format: Text}
	d.heading(3, fmt.Sprintf("Which target sustains the most %s load under %s?", scenario, slo))
	var table [][]string
	for _, c := range caps {
		if len(c.Max.Values) == 0 {
			least := "—"
			if c.AtLeast > 0 {
				least = "≥ " + count(float64(c.AtLeast)) + " (no maximum)"
			}
			table = append(table, []string{"—", c.Target, least, "—", "—", "—", "—"})
			continue
		}
		rank := fmt.Sprint(c.Rank)
		if c.TiesWith != "" {
			rank += "="
		}
		perCore := "—"
		if c.CPUCores > 0 {
			perCore = count(c.Max.Median / c.CPUCores)
		}
		table = append(table, []string{rank, c.Target, c.Max.Text(), millis(float64(c.P99) / 1e6), cores(c.CPUCores), mib(float64(c.MemoryPeak) / (1 << 20)), perCore})
	}
	d.table([]string{"rank", "target", "max rps [range]", "p99 at max", "CPU cores at max", "peak memory at max", "rps per core"}, table)
	var notes []string
	for _, c := range caps {
		if c.Unsearched != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", c.Target, c.Unsearched))
		}
		if c.generatorAt {
			notes = append(notes, fmt.Sprintf("%s: the generator could not send more on time: its maximum is at least this", c.Target))
		}
	}
	notes = append(notes, fmt.Sprintf("ties: maxima that cannot be told apart (with fewer than %d searches a target, ranges that overlap; else the Mann–Whitney test at p < 0.05)", stats.TrialsToDiffer(stats.DefaultAlpha)))
	for _, n := range notes {
		fmt.Fprintf(&d.b, "  • %s\n", n)
	}
	d.b.WriteString("\n" + Answer(scenario, slo, caps) + "\n")
	_, err := io.WriteString(w, d.String())
	return err
}

// Answer is the finding in one sentence.
func Answer(scenario string, slo maxrate.SLO, caps []Capacity) string {
	if len(caps) == 0 || len(caps[0].Max.Values) == 0 {
		return fmt.Sprintf("Finding: no search of %s under %s found a maximum.", scenario, slo)
	}
	top := caps[0]
	// A target whose searches ended without a maximum, but met the SLO above the top maximum, may
	// be the answer: say so rather than crown the top.
	var above []string
	for _, c := range caps {
		if len(c.Max.Values) == 0 && float64(c.AtLeast) > top.Max.Hi {
			above = append(above, fmt.Sprintf("%s met it at %s rps before its search ended (%s)", c.Target, count(float64(c.AtLeast)), brief(c.Unsearched)))
		}
	}
	if len(above) > 0 {
		return fmt.Sprintf("Finding: no answer yet: %s; of the targets with a maximum, %s sustains the most, %s rps. Give the others what ended their searches (memory: --memory), and run again.",
			strings.Join(above, "; "), top.Target, count(top.Max.Median))
	}
	var tied []string
	for _, c := range caps[1:] {
		if c.Rank == top.Rank {
			tied = append(tied, c.Target)
		}
	}
	s := fmt.Sprintf("Finding: %s sustains the most %s load under %s, %s rps (p99 %s at that rate, %s cores, %s)",
		top.Target, scenario, slo, count(top.Max.Median), millis(float64(top.P99)/1e6), cores(top.CPUCores), mib(float64(top.MemoryPeak)/(1<<20)))
	if len(tied) > 0 {
		s += fmt.Sprintf(", tied with %s within what %d search(es) a target can tell", strings.Join(tied, " and "), len(top.Max.Values))
	}
	for _, c := range caps[1:] {
		if c.Rank != top.Rank && len(c.Max.Values) > 0 {
			s += fmt.Sprintf("; next, %s at %s rps", c.Target, count(c.Max.Median))
			break
		}
	}
	return s + "."
}
