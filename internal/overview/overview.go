// Package overview gathers one or more results files into what a reader wants to see: per
// scenario and target, the trials and their verdicts, medians with 95% intervals, the latency
// distribution of the trials pooled (their histograms merged, never their percentiles averaged),
// and each cell's timeline. It writes that as markdown, as JSON (a versioned schema) and as a
// self-contained HTML report with charts (gonum/plot SVG, no script, nothing fetched).
//
// The terminal table of the same rows is internal/report's.
package overview

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/timeline"
)

// Overview is what the report shows.
type Overview struct {
	Sources   []string
	Scenarios []Scenario
	Host      Host
	// Notes say what could not be read (a timeline or histogram missing) and what that leaves out.
	Notes []string
	// History, when set, is the address of the performance history page of these rows' series
	// (run --history --html), which the HTML report links to.
	History string
}

// Host is the machine and iotbench that measured, from the rows.
type Host struct {
	CPU, Kernel, Docker, Version, Commit string
}

// Scenario is one scenario's cells.
type Scenario struct {
	Name string
	// FindMax: the rows are --find-max steps, each at its own rate.
	FindMax  bool
	Settings Settings
	Targets  []Target
	Notes    []string
}

// Settings are what the scenario's cells were measured with (from its first row).
type Settings struct {
	Mode            string
	RequestedRPS    int
	Connections     int
	Duration        time.Duration
	Warmup          time.Duration
	CPUSet          string
	GeneratorCPUSet string
	Memory          string
	Fingerprint     string
	Seed            int64
	// DB is the targets' store (results.DBEmbedded, DBPostgres; empty for a service iotbench did
	// not start), DBPoolSize their pool, DBCPUSet the PostgreSQL server's CPUs.
	DB         string
	DBPoolSize int
	DBCPUSet   string
}

// Target is one target of a scenario over its trials.
type Target struct {
	Name          string
	Trials, Valid int
	// Medians over the valid trials, with their 95% intervals; nil without a valid trial.
	Throughput, P50, P99, P999, CPUCores, MemoryPeakMiB, RPSPerCore, RPSPerGiB *Estimate
	// Pooled is the latency distribution of the valid trials' histograms merged; nil when
	// no histogram could be read.
	Pooled *Pooled
	Rank   string
	Cells  []Cell
}

// Estimate is a median with its 95% interval (Lo, Hi infinite with too few trials).
type Estimate struct {
	Median, Lo, Hi float64
	N              int
}

// Spread is the interval as text: ±2.1%, ±∞.
func (e Estimate) Spread() string {
	return stats.Summary{N: e.N, Median: e.Median, Lo: e.Lo, Hi: e.Hi}.PlusMinus()
}

// Pooled is a latency distribution of several trials, merged.
type Pooled struct {
	Trials                     int
	Count                      int64
	P50, P90, P99, P999, P9999 time.Duration
	Max                        time.Duration
	Spectrum                   []hdrlog.Row
	histogram                  *hdrhistogram.Histogram
}

// Cell is one measured cell: its row and, when read, its timeline.
type Cell struct {
	Row     results.Row
	Verdict string // valid, invalid, verify-failed, disturbed
	// Warmup and Measure are the cell's seconds; empty when its timeline was not found.
	Warmup, Measure []timeline.Second
}

// Verdict names how far a row can be trusted: valid, disturbed (valid, but other work took the
// CPUs), invalid, or why it was never loaded (verify-failed, build-failed, start-failed, skipped).
func Verdict(r results.Row) string {
	switch {
	case !r.Loaded():
		before, _, _ := strings.Cut(r.InvalidReason, ":")
		return before
	case !r.Valid:
		return "invalid"
	case strings.Contains(r.Warnings, "disturbed:"):
		return "disturbed"
	}
	return "valid"
}

// Source is one results file with what lies beside it.
type Source struct {
	Path string
	Rows []results.Row
	// Cells' timelines by key, and their measured histograms by key; missing ones are absent.
	Timelines  map[timeline.Key]timeline.Cell
	Histograms map[timeline.Key]*hdrhistogram.Histogram
	Notes      []string
}

// Load reads a results file, its timeline file and its cells' histograms. A missing timeline or
// histogram is a note (older runs, --url runs have them too, but a copied CSV may not); an
// unreadable one is an error.
func Load(path string) (Source, error) {
	rows, warnings, err := results.ReadFile(path)
	if err != nil {
		return Source{}, err
	}
	src := Source{Path: path, Rows: rows, Notes: warnings, Timelines: map[timeline.Key]timeline.Cell{}, Histograms: map[timeline.Key]*hdrhistogram.Histogram{}}
	cells, err := timeline.ReadFile(timeline.Path(path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src.Notes = append(src.Notes, fmt.Sprintf("%s: no timeline (%s): cells are shown without their seconds", path, timeline.Path(path)))
	case err != nil:
		return Source{}, err
	}
	for _, c := range cells {
		src.Timelines[c.Key] = c
	}
	missing := 0
	for _, r := range rows {
		k := KeyOf(r)
		h, err := timeline.ReadHistogram(timeline.HistogramBase(path, k))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if r.Successes > 0 {
				missing++
			}
		case err != nil:
			return Source{}, err
		default:
			if h.TotalCount() != r.Successes {
				return Source{}, fmt.Errorf("%s: %s: its histogram holds %d latencies, its row %d successes: the files are not from the same run", path, k, h.TotalCount(), r.Successes)
			}
			src.Histograms[k] = h
		}
	}
	if missing > 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: %d cell(s) without their histogram (%s): latency distributions pool the others", path, missing, timeline.HistogramDir(path)))
	}
	return src, nil
}

// KeyOf is the timeline key of a row.
func KeyOf(r results.Row) timeline.Key {
	return timeline.Key{Scenario: r.Scenario, Target: timeline.SideTarget(r.Target, r.Variant), Trial: r.Trial, RequestedRPS: r.RequestedRPS}
}

// Build gathers sources into an overview: scenarios in the order they first appear, targets by
// name (by rank when ranked).
func Build(sources []Source) (*Overview, error) {
	o := &Overview{}
	type cellOf struct {
		src int
		row results.Row
	}
	byScenario := map[string][]cellOf{}
	var order []string
	for i, s := range sources {
		o.Sources = append(o.Sources, s.Path)
		o.Notes = append(o.Notes, s.Notes...)
		for _, r := range s.Rows {
			if _, ok := byScenario[r.Scenario]; !ok {
				order = append(order, r.Scenario)
			}
			byScenario[r.Scenario] = append(byScenario[r.Scenario], cellOf{i, r})
			if o.Host.CPU == "" {
				o.Host = Host{CPU: r.HostCPU, Kernel: r.Kernel, Docker: r.DockerVersion, Version: r.Version, Commit: r.GitCommit}
			}
		}
	}
	for _, name := range order {
		cells := byScenario[name]
		first := cells[0].row
		sc := Scenario{Name: name, FindMax: strings.HasSuffix(name, results.FindMaxSuffix), Settings: Settings{
			Mode: first.Mode, RequestedRPS: first.RequestedRPS, Connections: first.Connections,
			Duration: first.Duration, Warmup: first.Warmup, CPUSet: first.CPUSet,
			GeneratorCPUSet: first.GeneratorCPUSet, Memory: first.Memory, Fingerprint: first.Fingerprint(), Seed: first.Seed,
			DB: first.DB, DBPoolSize: first.DBPoolSize, DBCPUSet: first.DBCPUSet,
		}}
		targets := map[string]*Target{}
		var names []string
		hists := map[string][]*hdrhistogram.Histogram{}
		for _, c := range cells {
			r := c.row
			// A paired run's baseline and candidate of a target are shown apart.
			name := timeline.SideTarget(r.Target, r.Variant)
			t, ok := targets[name]
			if !ok {
				t = &Target{Name: name}
				targets[name] = t
				names = append(names, name)
			}
			k := KeyOf(r)
			tl := sources[c.src].Timelines[k]
			t.Cells = append(t.Cells, Cell{Row: r, Verdict: Verdict(r), Warmup: tl.Warmup, Measure: tl.Measure})
			t.Trials++
			if r.Valid {
				t.Valid++
				if h, ok := sources[c.src].Histograms[k]; ok {
					hists[name] = append(hists[name], h)
				}
			}
			// The fingerprint holds the target's image: trials are held to their target's first.
			if first := t.Cells[0].Row; r.Fingerprint() != first.Fingerprint() && !sc.FindMax {
				sc.Notes = append(sc.Notes, fmt.Sprintf("%s trial %d was measured with other settings than its trial %d (fingerprint %s, not %s): its figures are shown, but compare with care", name, r.Trial, first.Trial, r.Fingerprint(), first.Fingerprint()))
			}
		}
		slices.Sort(names)
		for _, n := range names {
			t := targets[n]
			if err := summarize(t, hists[n]); err != nil {
				return nil, fmt.Errorf("%s, %s: %w", name, n, err)
			}
			sc.Targets = append(sc.Targets, *t)
		}
		rankTargets(&sc)
		o.Scenarios = append(o.Scenarios, sc)
	}
	return o, nil
}

// summarize fills t's medians from its valid cells and pools their histograms.
func summarize(t *Target, hists []*hdrhistogram.Histogram) error {
	var valid []results.Row
	for _, c := range t.Cells {
		if c.Row.Valid {
			valid = append(valid, c.Row)
		}
	}
	if len(valid) == 0 {
		return nil
	}
	est := func(f func(results.Row) float64, optional bool) *Estimate {
		var v []float64
		for _, r := range valid {
			if x := f(r); !optional || x != 0 {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return nil
		}
		s := stats.Summarize(v)
		return &Estimate{Median: s.Median, Lo: s.Lo, Hi: s.Hi, N: s.N}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	t.Throughput = est(func(r results.Row) float64 { return r.ThroughputRPS }, false)
	t.P50 = est(func(r results.Row) float64 { return ms(r.LatencyP50) }, false)
	t.P99 = est(func(r results.Row) float64 { return ms(r.LatencyP99) }, false)
	t.P999 = est(func(r results.Row) float64 { return ms(r.LatencyP999) }, false)
	t.CPUCores = est(func(r results.Row) float64 { return r.CPUCores }, true)
	t.MemoryPeakMiB = est(func(r results.Row) float64 { return float64(r.MemoryPeak) / (1 << 20) }, true)
	t.RPSPerCore = est(func(r results.Row) float64 { return r.RPSPerCore }, true)
	t.RPSPerGiB = est(func(r results.Row) float64 { return r.RPSPerGiB }, true)
	if len(hists) == 0 {
		return nil
	}
	pool, err := hdrlog.Merge(hists...)
	if err != nil {
		return err
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	t.Pooled = &Pooled{
		Trials: len(hists), Count: pool.TotalCount(),
		P50: us(pool.ValueAtPercentile(50)), P90: us(pool.ValueAtPercentile(90)), P99: us(pool.ValueAtPercentile(99)),
		P999: us(pool.ValueAtPercentile(99.9)), P9999: us(pool.ValueAtPercentile(99.99)), Max: us(pool.Max()),
		Spectrum: hdrlog.Percentiles(pool), histogram: pool,
	}
	return nil
}

// MinTrialsToRank is internal/report's: a ranking needs that many valid trials per target.
const MinTrialsToRank = 5

// rankTargets ranks a fixed-rate scenario's targets as the terminal report does: closed loop by
// throughput, open loop by p99; targets not significantly different share a rank.
func rankTargets(sc *Scenario) {
	if sc.FindMax || len(sc.Targets) < 2 {
		return
	}
	higher := sc.Settings.Mode == "closed"
	value := func(r results.Row) float64 {
		if higher {
			return r.ThroughputRPS
		}
		return float64(r.LatencyP99)
	}
	valid := func(t Target) []float64 {
		var v []float64
		for _, c := range t.Cells {
			if c.Row.Valid {
				v = append(v, value(c.Row))
			}
		}
		return v
	}
	var short []string
	for _, t := range sc.Targets {
		if t.Valid < MinTrialsToRank {
			short = append(short, fmt.Sprintf("%s %d", t.Name, t.Valid))
		}
	}
	if len(short) > 0 {
		sc.Notes = append(sc.Notes, fmt.Sprintf("not ranked: a ranking needs %d valid trials per target (%s)", MinTrialsToRank, strings.Join(short, ", ")))
		return
	}
	median := func(t Target) float64 { return stats.Summarize(valid(t)).Median }
	slices.SortStableFunc(sc.Targets, func(a, b Target) int {
		if higher {
			return cmp.Compare(median(b), median(a))
		}
		return cmp.Compare(median(a), median(b))
	})
	leader, pos := 0, 1
	size := map[int]int{}
	positions := make([]int, len(sc.Targets))
	for i := range sc.Targets {
		if i > 0 && stats.Compare(valid(sc.Targets[leader]), valid(sc.Targets[i]), stats.DefaultAlpha).Significant() {
			leader, pos = i, i+1
		}
		positions[i] = pos
		size[pos]++
	}
	for i := range sc.Targets {
		sc.Targets[i].Rank = fmt.Sprint(positions[i])
		if size[positions[i]] > 1 {
			sc.Targets[i].Rank += "="
		}
	}
	by := "p99, lower is better"
	if higher {
		by = "throughput, higher is better"
	}
	sc.Notes = append(sc.Notes, fmt.Sprintf("rank: by median %s; \"=\" marks targets whose difference is not significant (Mann–Whitney, p ≥ %g)", by, stats.DefaultAlpha))
}

// finite maps ±Inf to NaN-free values for charts and JSON: nil for an infinite bound.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
