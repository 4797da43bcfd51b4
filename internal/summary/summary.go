// Package summary is the one model of what results files say: per scenario and target, the
// trials and their verdicts, medians with 95% intervals, the latency distribution of the trials
// pooled (their histograms merged, never their percentiles averaged), each cell's timeline, the
// targets ranked with ties, and for --find-max runs each target's maximum sustainable rate, ranked.
// Every output renders this model and computes nothing of its own: the terminal table,
// markdown, JSON and HTML (internal/overview), so two formats cannot disagree.
package summary

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/profile"
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
	// FindMax: the rows are --find-max steps, each at its own rate. Its targets are ranked by
	// their maxima, and their figures are those of the steps at each search's maximum.
	FindMax bool
	// SLO is what a find-max step had to meet, from its rows' slo column; empty when not known
	// (files older than the column).
	SLO      string
	Settings Settings
	// Targets by name; ranked ones by rank.
	Targets []Target
	// Rows are the scenario's rows in the order of their files.
	Rows []results.Row
	// RankedBy is the metric a fixed-rate scenario's targets are ranked on; Unranked names the
	// targets with too few valid trials (a find-max scenario's: searches with a maximum) the
	// self-checks trust ("name n") when they are not ranked. RankNote says how they are ranked or
	// why not, and what would rank them: one of Notes, or of a find-max scenario's MaxNotes.
	RankedBy results.Metric
	Unranked []string
	RankNote string
	Notes    []string
	// Checks are the instrument's self-checks over the rows, at a glance.
	Checks []Check
	// Protocols are each target's figures per protocol when the rows hold several (plaintext
	// beside TLS and h2); nil otherwise, and in a find-max scenario.
	Protocols []OverProtocol
	// Profiles are the CPU profiles the scenario's searches took at their maxima (run --profile),
	// in the order of their files.
	Profiles []profile.Record
	label    func(results.Row) string
}

// Settings are what the scenario's cells were measured with (from its first row).
type Settings struct {
	Mode            string
	RequestedRPS    int
	Connections     int
	Duration        time.Duration
	Warmup          time.Duration
	WarmupAuto      bool // Warmup is the most a warm-up until steady could last
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
	// Streams and Request are a mix's layout and, in a request's scenario, its name
	// (results.Row's); empty for a cell of one request.
	Streams, Request string
}

// Target is one target of a scenario over its trials.
type Target struct {
	Name          string
	Trials, Valid int
	// Medians over the valid trials, with their 95% intervals; nil without a valid trial.
	Throughput, P50, P99, P999, CPUCores, MemoryPeakMiB, RPSPerCore, RPSPerGiB *Estimate
	// The PostgreSQL server's, beside the target's; nil on the embedded store.
	DBCPUCores, DBMemoryPeakMiB *Estimate
	// Pooled is the latency distribution of the valid trials' histograms merged; nil when
	// no histogram could be read.
	Pooled *Pooled
	// Rank is "1", "2=" (a tie: not told apart from the first of its group); empty when not ranked.
	Rank  string
	Cells []Cell
	// A find-max target: its searches in order, the median of their maxima (nil when none found
	// one), and its figures above are those of the valid steps at each search's maximum.
	Searches []Search
	Max      *Estimate
	// AtLeast is, for a target no search found a maximum of, the highest rate one of its steps
	// met the SLO at.
	AtLeast int
	// Ramps are the seconds of its searches' ramps (unmeasured: each a cell's warm-up), by
	// search, each search's in order; docs/timeline.md.
	Ramps []timeline.Cell
}

// Estimate is a median with its 95% interval (Lo, Hi infinite with too few trials). With Range,
// Lo and Hi are the least and greatest value instead: too few values for an interval.
type Estimate struct {
	Median, Lo, Hi float64
	N              int
	Range          bool
}

// Stats is the estimate as stats has it.
func (e Estimate) Stats() stats.Summary {
	return stats.Summary{N: e.N, Median: e.Median, Lo: e.Lo, Hi: e.Hi}
}

// Noisy says the interval reaches beyond ±NoisyCI of the median.
func (e Estimate) Noisy() bool {
	s := e.Stats()
	return !e.Range && s.Finite() && s.Spread() > NoisyCI
}

// Finite says the interval is bounded.
func (e Estimate) Finite() bool { return e.Range || e.Stats().Finite() }

// NoisyCI is the relative half-width of a 95% interval above which a median is flagged as noisy.
const NoisyCI = 0.10

// Spread is the interval as text: ±2.1%, ±∞; a range as [lo–hi].
func (e Estimate) Spread() string {
	if e.Range {
		return fmt.Sprintf("[%.0f–%.0f]", e.Lo, e.Hi)
	}
	return e.Stats().PlusMinus()
}

// estimate is the median of values with its interval; nil without values.
func estimate(values []float64) *Estimate {
	if len(values) == 0 {
		return nil
	}
	s := stats.Summarize(values)
	return &Estimate{Median: s.Median, Lo: s.Lo, Hi: s.Hi, N: s.N}
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
	Verdict string // valid, invalid, verify-failed, disturbed, not-steady
	// Warmup and Measure are the cell's seconds; empty when its timeline was not found.
	Warmup, Measure []timeline.Second
	src             int // the source it was read from
}

// Verdict names how far a row can be trusted: valid, disturbed (valid, but other work took the
// CPUs), not-steady (valid, but a per-second figure trended through the measured phase),
// still-warming (valid, but its JIT compiled through the measured phase), invalid, or why it was
// never loaded (verify-failed, build-failed, start-failed, skipped).
func Verdict(r results.Row) string {
	switch {
	case !r.Loaded():
		return string(r.Fault)
	case !r.Valid:
		return "invalid"
	case r.Disturbed:
		return "disturbed"
	case r.NotSteady():
		return "not-steady"
	case r.StillWarming():
		return "still-warming"
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
	// Profiles are the run's CPU profiles (internal/profile); none when it took none.
	Profiles []profile.Record
	Notes    []string
}

// Load reads a results file, its timeline file and its cells' histograms. What lies beside the
// CSV only adds to its rows: a missing timeline or histogram is a note (older runs; a copied CSV),
// and so is one that cannot be read or does not match its row (a run stopped by a full disk
// leaves them torn), naming the file skipped, so the rows that were saved are still shown.
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
		src.Notes = append(src.Notes, fmt.Sprintf("%s: timeline skipped: %v: cells are shown without their seconds", path, err))
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
			src.Notes = append(src.Notes, fmt.Sprintf("histogram skipped: %v: latency distributions pool the others", err))
		case h.TotalCount() != r.Successes:
			src.Notes = append(src.Notes, fmt.Sprintf("histogram skipped: %s.hlog holds %d latencies, its row (%s) %d successes: not written whole, or of another run; latency distributions pool the others",
				timeline.HistogramBase(path, k), h.TotalCount(), k, r.Successes))
		default:
			src.Histograms[k] = h
		}
	}
	if missing > 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: %d cell(s) without their histogram (%s): latency distributions pool the others", path, missing, timeline.HistogramDir(path)))
	}
	if src.Profiles, err = profile.Read(timeline.Dir(path)); err != nil {
		src.Notes = append(src.Notes, fmt.Sprintf("profiles skipped: %v: no flame graph is shown", err))
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
		sc := Scenario{Name: name, FindMax: first.Search > 0, SLO: first.SLO, Settings: Settings{
			Mode: first.Mode, RequestedRPS: first.RequestedRPS, Connections: first.Connections,
			Duration: first.Duration, Warmup: first.Warmup, WarmupAuto: first.WarmupAuto, CPUSet: first.CPUSet,
			GeneratorCPUSet: first.GeneratorCPUSet, Memory: first.Memory, Fingerprint: first.Fingerprint(), Seed: first.Seed,
			DB: first.DB, DBPoolSize: first.DBPoolSize, DBCPUSet: first.DBCPUSet,
			Streams: first.Streams, Request: first.Request,
		}}
		targets := map[string]*Target{}
		var names []string
		for _, c := range cells {
			sc.Rows = append(sc.Rows, c.row)
		}
		name := groupName(sc.Rows)
		sc.label = name
		for _, c := range cells {
			r := c.row
			name := name(r)
			t, ok := targets[name]
			if !ok {
				t = &Target{Name: name}
				targets[name] = t
				names = append(names, name)
			}
			k := KeyOf(r)
			tl := sources[c.src].Timelines[k]
			t.Cells = append(t.Cells, Cell{Row: r, Verdict: Verdict(r), Warmup: tl.Warmup, Measure: tl.Measure, src: c.src})
			t.Trials++
			if r.Valid {
				t.Valid++
			}
			// The fingerprint holds the target's image: trials are held to their target's first.
			if first := t.Cells[0].Row; r.Fingerprint() != first.Fingerprint() && !sc.FindMax {
				sc.Notes = append(sc.Notes, fmt.Sprintf("%s trial %d was measured with other settings than its trial %d (fingerprint %s, not %s): its figures are shown, but compare with care", name, r.Trial, first.Trial, r.Fingerprint(), first.Fingerprint()))
			}
		}
		slices.Sort(names)
		var searches map[string][]Search
		if sc.FindMax {
			searches = searchesOf(sc.Rows, name, func(i int) int { return cells[i].src })
		}
		for _, n := range names {
			t := targets[n]
			pooled := t.validCells()
			if sc.FindMax {
				t.Searches = searches[n]
				t.Ramps = rampsOf(t.Cells, sources)
				pooled = t.atMax()
			}
			var hists []*hdrhistogram.Histogram
			for _, c := range pooled {
				if h, ok := sources[c.src].Histograms[KeyOf(c.Row)]; ok {
					hists = append(hists, h)
				}
			}
			if err := summarize(t, pooled, hists); err != nil {
				return nil, fmt.Errorf("%s, %s: %w", sc.Name, n, err)
			}
			sc.Targets = append(sc.Targets, *t)
		}
		if sc.FindMax {
			rankMaxima(&sc)
		} else {
			rankTargets(&sc)
		}
		sc.Notes = append(sc.Notes, CalibrationNotes(sc.Rows)...)
		sc.Checks = SelfChecks(sc.Rows)
		if !sc.FindMax {
			sc.Protocols = overProtocols(sc.Rows)
		}
		for _, src := range sources {
			for _, p := range src.Profiles {
				if p.Scenario == sc.Name {
					sc.Profiles = append(sc.Profiles, p)
				}
			}
		}
		o.Scenarios = append(o.Scenarios, sc)
	}
	return o, nil
}

// validCells are t's valid cells.
func (t *Target) validCells() []Cell {
	var out []Cell
	for _, c := range t.Cells {
		if c.Row.Valid {
			out = append(out, c)
		}
	}
	return out
}

// trustedCells are t's valid cells the self-checks trust, the ones a ranking may treat as
// steady-state figures (rows older than the checks count as trusted); distrusted counts the
// others by reason.
func (t *Target) trustedCells(distrusted map[string]int) []Cell {
	var out []Cell
	for _, c := range t.validCells() {
		if why := c.Row.Distrust(); why != "" {
			distrusted[why]++
			continue
		}
		out = append(out, c)
	}
	return out
}

// Distrusted counts t's valid trials the self-checks distrust, by reason ("6 still warming up"),
// in the order results.DistrustReasons gives; none when it trusts them all.
func (t Target) Distrusted() []string {
	why := map[string]int{}
	t.trustedCells(why)
	return results.DistrustCounts(why)
}

// ValidText is t's valid trials out of its trials, with those the self-checks distrust:
// "6/6 (6 still warming up)". Its medians are over every valid trial; a distrusted one is no
// steady-state figure.
func (t Target) ValidText() string {
	text := fmt.Sprintf("%d/%d", t.Valid, t.Trials)
	if d := t.Distrusted(); len(d) > 0 {
		text += " (" + strings.Join(d, ", ") + ")"
	}
	return text
}

// nameOf is the target a row counts for: a paired run's baseline and candidate of a target are
// shown apart, by the row's variant.
func nameOf(r results.Row) string { return timeline.SideTarget(r.Target, r.Variant) }

// Label is the target r counts for in sc: its target, apart by protocol when sc's rows hold
// several (groupName).
func (sc Scenario) Label(r results.Row) string {
	if sc.label == nil {
		return nameOf(r)
	}
	return sc.label(r)
}

// groupName is how a scenario's rows are grouped into targets: by nameOf, and by protocol too
// when the rows hold several (files of one scenario run over http1, https and h2, reported
// together): trials over different protocols are different settings, never pooled or ranked as
// one target's. The figures side by side are the scenario's Protocols.
func groupName(rows []results.Row) func(results.Row) string {
	for _, r := range rows {
		if r.ProtocolName() != rows[0].ProtocolName() {
			return func(r results.Row) string { return nameOf(r) + " (" + r.ProtocolName() + ")" }
		}
	}
	return nameOf
}

// summarize fills t's medians from cells, valid ones, and pools their histograms.
func summarize(t *Target, cells []Cell, hists []*hdrhistogram.Histogram) error {
	if len(cells) == 0 {
		return nil
	}
	est := func(name string) *Estimate {
		m := results.MustMetric(name)
		var v []float64
		for _, c := range cells {
			if x := m.Value(c.Row); !m.Optional || x != 0 {
				v = append(v, x)
			}
		}
		return estimate(v)
	}
	t.Throughput, t.P50, t.P99, t.P999 = est("throughput"), est("p50"), est("p99"), est("p99.9")
	t.CPUCores, t.MemoryPeakMiB, t.RPSPerCore, t.RPSPerGiB = est("cpu"), est("memory"), est("rps-per-core"), est("rps-per-gib")
	t.DBCPUCores, t.DBMemoryPeakMiB = est("db-cpu"), est("db-memory")
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

// FromRows is the summary of rows without the files beside them (no timelines, no histograms):
// what a run prints at its end.
func FromRows(rows []results.Row) *Overview {
	o, err := Build([]Source{{Rows: rows}})
	if err != nil {
		// Only merging histograms fails, and rows alone have none.
		panic(err)
	}
	return o
}

// rampsOf finds, in the timelines of cells' sources, the ramps of the searches cells are steps
// of (timeline.RampKey), by search, each search's in order.
func rampsOf(cells []Cell, sources []Source) []timeline.Cell {
	type search struct {
		src      int
		scenario string
		target   string
		number   int
	}
	seen := map[search]bool{}
	var out []timeline.Cell
	for _, c := range cells {
		s := search{c.src, c.Row.Scenario, KeyOf(c.Row).Target, c.Row.Search}
		if seen[s] {
			continue
		}
		seen[s] = true
		var ramps []timeline.Cell
		for k, tl := range sources[s.src].Timelines {
			if k.RampOf(s.scenario, s.target, s.number) {
				ramps = append(ramps, tl)
			}
		}
		slices.SortFunc(ramps, func(a, b timeline.Cell) int { return strings.Compare(a.Scenario, b.Scenario) })
		out = append(out, ramps...)
	}
	return out
}
