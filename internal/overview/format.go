// Package overview renders the one summary of results files (internal/summary) in every format:
// terminal tables (table.go: a find-max scenario's answer first, then one row per cell, then one
// line per target over its valid trials), markdown ready for a pull request, JSON of a versioned
// schema, and a self-contained HTML report with charts (gonum/plot SVG, no script, nothing
// fetched). A find-max scenario opens with its answer in each. It computes nothing of its own:
// the formats cannot disagree.
package overview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/limit"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/units"
)

// SchemaVersion is the version of the JSON this package writes (docs/report.md documents it);
// every document records it in "schema_version".
const SchemaVersion = 4

// Formats are the text forms Write knows: table is the terminal table (table.go), written by the
// caller.
var Formats = []string{"table", "markdown", "json"}

type jsonDoc struct {
	SchemaVersion int            `json:"schema_version"`
	Sources       []string       `json:"sources"`
	Host          jsonHost       `json:"host"`
	Scenarios     []jsonScenario `json:"scenarios"`
	Notes         []string       `json:"notes"`
}

type jsonHost struct {
	CPU     string `json:"cpu"`
	Kernel  string `json:"kernel"`
	Docker  string `json:"docker"`
	Version string `json:"iotbench_version"`
	Commit  string `json:"git_commit"`
}

type jsonScenario struct {
	Name    string `json:"name"`
	FindMax bool   `json:"find_max"`
	// A find-max scenario's answer first: its question, the maxima ranked, the finding.
	Question string        `json:"question,omitempty"`
	SLO      string        `json:"slo,omitempty"`
	Maxima   []jsonMaximum `json:"maxima,omitempty"`
	Finding  string        `json:"finding,omitempty"`

	// SelfChecks are the instrument's checks over the rows, at a glance (docs/selfcheck.md).
	SelfChecks []summary.Check `json:"self_checks"`

	Settings jsonSettings `json:"settings"`
	Targets  []jsonTarget `json:"targets"`
	// Protocols are each target's figures over each protocol, when the rows hold several.
	Protocols []jsonProtocol `json:"protocols,omitempty"`
	Notes     []string       `json:"notes"`
}

// jsonProtocol is summary.OverProtocol: one target's figures over one protocol.
type jsonProtocol struct {
	Target        string        `json:"target"`
	Protocol      string        `json:"protocol"`
	Trials        int           `json:"trials"`
	Valid         int           `json:"valid_trials"`
	Throughput    *jsonEstimate `json:"throughput_rps"`
	P99           *jsonEstimate `json:"latency_p99_ms"`
	CPUPerRequest *jsonEstimate `json:"cpu_us_per_request"`
	// CPUChange is a fraction (0.18: 18% more CPU a request than over http1); null when unknown.
	CPUChange *float64 `json:"cpu_per_request_change"`
	Cipher    string   `json:"tls_cipher,omitempty"`
}

type jsonSettings struct {
	Mode            string  `json:"mode"`
	RequestedRPS    int     `json:"requested_rps"`
	Connections     int     `json:"connections"`
	DurationS       float64 `json:"duration_s"`
	WarmupS         float64 `json:"warmup_s"`
	CPUSet          string  `json:"cpuset"`
	GeneratorCPUSet string  `json:"generator_cpuset"`
	Memory          string  `json:"memory"`
	Fingerprint     string  `json:"fingerprint"`
	Seed            int64   `json:"seed"`
	DB              string  `json:"db,omitempty"`
	DBPoolSize      int     `json:"db_pool_size,omitempty"`
	DBCPUSet        string  `json:"db_cpuset,omitempty"`
	// A mix's layout and, in a request's scenario, its name (docs/results.md: streams, request).
	Streams string `json:"streams,omitempty"`
	Request string `json:"request,omitempty"`
}

type jsonEstimate struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"` // null: too few trials for a 95% interval
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
	// Range: lo and hi are the least and greatest value, too few for an interval.
	Range bool `json:"range,omitempty"`
}

// jsonMaximum is a find-max target's answer; its figures at the maximum are its target's
// (medians over the valid steps at each search's maximum).
type jsonLimit struct {
	Kind     string   `json:"kind"`
	Evidence string   `json:"evidence"`
	RuledOut []string `json:"ruled_out"`
}

type jsonMaximum struct {
	Target string `json:"target"`
	Rank   string `json:"rank,omitempty"`
	// MaxRPS is the median of the searches' maxima; null when no search found one.
	MaxRPS   *jsonEstimate `json:"max_rps"`
	Searches []int         `json:"search_maxima"`
	// Limit is what limited the target at its maximum (internal/limit); absent without one.
	Limit            *jsonLimit    `json:"limit,omitempty"`
	GeneratorLimited bool          `json:"generator_limited,omitempty"`
	AtLeastRPS       int           `json:"at_least_rps,omitempty"`
	Unsearched       string        `json:"unsearched,omitempty"`
	P99AtMax         *jsonEstimate `json:"latency_p99_ms_at_max"`
	CPUAtMax         *jsonEstimate `json:"cpu_cores_at_max"`
	MemoryAtMax      *jsonEstimate `json:"memory_peak_mib_at_max"`
}

type jsonPooled struct {
	Trials int     `json:"trials"`
	Count  int64   `json:"count"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p999_ms"`
	P9999  float64 `json:"p9999_ms"`
	Max    float64 `json:"max_ms"`
}

type jsonTarget struct {
	Name          string        `json:"name"`
	Trials        int           `json:"trials"`
	Valid         int           `json:"valid_trials"`
	Distrusted    []string      `json:"distrusted_trials,omitempty"`
	Rank          string        `json:"rank,omitempty"`
	Throughput    *jsonEstimate `json:"throughput_rps"`
	P50           *jsonEstimate `json:"latency_p50_ms"`
	P99           *jsonEstimate `json:"latency_p99_ms"`
	P999          *jsonEstimate `json:"latency_p999_ms"`
	CPUCores      *jsonEstimate `json:"cpu_cores"`
	MemoryPeakMiB *jsonEstimate `json:"memory_peak_mib"`
	RPSPerCore    *jsonEstimate `json:"rps_per_core"`
	RPSPerGiB     *jsonEstimate `json:"rps_per_gib"`
	Pooled        *jsonPooled   `json:"pooled_latency"`
	Cells         []jsonCell    `json:"cells"`
}

type jsonCell struct {
	Trial          int     `json:"trial"`
	RequestedRPS   int     `json:"requested_rps"`
	Verdict        string  `json:"verdict"`
	Reason         string  `json:"invalid_reason,omitempty"`
	Warnings       string  `json:"warnings,omitempty"`
	Throughput     float64 `json:"throughput_rps"`
	SuccessRatio   float64 `json:"success_ratio"`
	P50            float64 `json:"latency_p50_ms"`
	P99            float64 `json:"latency_p99_ms"`
	P999           float64 `json:"latency_p999_ms"`
	GeneratorDelay float64 `json:"generator_delay_p99_ms"`
	CPUCores       float64 `json:"cpu_cores"`
	MemoryPeak     int64   `json:"memory_peak_bytes"`
	// The PostgreSQL server's, beside the target's; absent on the embedded store.
	DBCPUCores   float64 `json:"db_cpu_cores,omitempty"`
	DBMemoryPeak int64   `json:"db_memory_peak_bytes,omitempty"`
	Seconds      int     `json:"timeline_seconds"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func jsonEst(e *summary.Estimate) *jsonEstimate {
	if e == nil {
		return nil
	}
	return &jsonEstimate{Median: e.Median, Lo: finite(e.Lo), Hi: finite(e.Hi), N: e.N, Range: e.Range}
}

// WriteJSON writes o as a JSON document of schema SchemaVersion.
func WriteJSON(w io.Writer, o *summary.Overview) error {
	doc := jsonDoc{SchemaVersion: SchemaVersion, Sources: o.Sources, Notes: nonNil(o.Notes),
		Host: jsonHost{CPU: o.Host.CPU, Kernel: o.Host.Kernel, Docker: o.Host.Docker, Version: o.Host.Version, Commit: o.Host.Commit}}
	for _, sc := range o.Scenarios {
		s := sc.Settings
		js := jsonScenario{Name: sc.Name, FindMax: sc.FindMax, Notes: nonNil(sc.Notes), SelfChecks: append([]summary.Check{}, sc.Checks...), Settings: jsonSettings{
			Mode: s.Mode, RequestedRPS: s.RequestedRPS, Connections: s.Connections, DurationS: s.Duration.Seconds(),
			WarmupS: s.Warmup.Seconds(), CPUSet: s.CPUSet, GeneratorCPUSet: s.GeneratorCPUSet, Memory: s.Memory,
			Fingerprint: s.Fingerprint, Seed: s.Seed, DB: s.DB, DBPoolSize: s.DBPoolSize, DBCPUSet: s.DBCPUSet,
			Streams: s.Streams, Request: s.Request}}
		if sc.FindMax {
			js.Question, js.SLO, js.Finding = sc.Question(), sc.SLO, sc.Finding()
			for _, t := range sc.Targets {
				m := jsonMaximum{Target: t.Name, Rank: t.Rank, MaxRPS: jsonEst(t.Max), Searches: []int{}, GeneratorLimited: t.GeneratorLimitedMax(),
					AtLeastRPS: t.AtLeast, Unsearched: t.Unsearched(), P99AtMax: jsonEst(t.P99), CPUAtMax: jsonEst(t.CPUCores), MemoryAtMax: jsonEst(t.MemoryPeakMiB)}
				if l := t.Limit(); l.Kind != limit.None {
					m.Limit = &jsonLimit{Kind: string(l.Kind), Evidence: l.Evidence, RuledOut: nonNil(l.RuledOut)}
				}
				for _, s := range t.Searches {
					m.Searches = append(m.Searches, s.Max)
				}
				js.Maxima = append(js.Maxima, m)
			}
		}
		for _, t := range sc.Targets {
			jt := jsonTarget{Name: t.Name, Trials: t.Trials, Valid: t.Valid, Distrusted: t.Distrusted(), Rank: t.Rank,
				Throughput: jsonEst(t.Throughput), P50: jsonEst(t.P50), P99: jsonEst(t.P99), P999: jsonEst(t.P999),
				CPUCores: jsonEst(t.CPUCores), MemoryPeakMiB: jsonEst(t.MemoryPeakMiB), RPSPerCore: jsonEst(t.RPSPerCore), RPSPerGiB: jsonEst(t.RPSPerGiB)}
			if p := t.Pooled; p != nil {
				jt.Pooled = &jsonPooled{Trials: p.Trials, Count: p.Count, P50: ms(p.P50), P90: ms(p.P90), P99: ms(p.P99), P999: ms(p.P999), P9999: ms(p.P9999), Max: ms(p.Max)}
			}
			for _, c := range t.Cells {
				r := c.Row
				jt.Cells = append(jt.Cells, jsonCell{Trial: r.Trial, RequestedRPS: r.RequestedRPS, Verdict: c.Verdict, Reason: r.InvalidReason,
					Warnings: r.Warnings, Throughput: r.ThroughputRPS, SuccessRatio: r.SuccessRatio, P50: ms(r.LatencyP50), P99: ms(r.LatencyP99),
					P999: ms(r.LatencyP999), GeneratorDelay: ms(r.GeneratorDelayP99), CPUCores: r.CPUCores, MemoryPeak: r.MemoryPeak,
					DBCPUCores: r.DBCPUCores, DBMemoryPeak: r.DBMemoryPeak, Seconds: len(c.Measure)})
			}
			js.Targets = append(js.Targets, jt)
		}
		for _, p := range sc.Protocols {
			js.Protocols = append(js.Protocols, jsonProtocol{Target: p.Target, Protocol: p.Protocol, Trials: p.Trials, Valid: p.Valid,
				Throughput: jsonEst(p.Throughput), P99: jsonEst(p.P99), CPUPerRequest: jsonEst(p.CPUPerRequest), CPUChange: p.CPUChange, Cipher: p.Cipher})
		}
		doc.Scenarios = append(doc.Scenarios, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteMarkdown writes o as GitHub-flavoured markdown, ready to paste into a pull request: a
// table per scenario, its notes, and every cell that is not valid with its reason.
func WriteMarkdown(w io.Writer, o *summary.Overview) error {
	var b strings.Builder
	for _, sc := range o.Scenarios {
		fmt.Fprintf(&b, "### %s\n\n", mdText(sc.Name))
		if sc.FindMax {
			writeMaximaMarkdown(&b, sc)
		}
		if len(sc.Checks) > 0 {
			fmt.Fprintf(&b, "%s\n\n", mdText(summary.ChecksText(sc.Checks)))
		}
		fmt.Fprintf(&b, "%s\n\n", settingsText(sc, mdText))
		if sc.FindMax {
			b.WriteString("| target | rate (rps) | trial | verdict | throughput (rps) | p99 (ms) |\n|---|--:|--:|---|--:|--:|\n")
			for _, t := range sc.Targets {
				for _, c := range t.Cells {
					fmt.Fprintf(&b, "| %s | %d | %d | %s | %.1f | %.2f |\n", mdText(t.Name), c.Row.RequestedRPS, c.Row.Trial, mdText(c.Verdict), c.Row.ThroughputRPS, ms(c.Row.LatencyP99))
				}
			}
		} else {
			b.WriteString("| target | valid trials | throughput (rps) | p50 (ms) | p99 (ms) | p99.9 (ms) | pooled p99 / p99.99 (ms) | CPU (cores) | peak memory (MiB) | rank |\n")
			b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
			for _, t := range sc.Targets {
				pooled := "—"
				if t.Pooled != nil {
					pooled = fmt.Sprintf("%.2f / %.2f", ms(t.Pooled.P99), ms(t.Pooled.P9999))
				}
				rank := t.Rank
				if rank == "" {
					rank = "—"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(t.Name), t.ValidText(),
					estText(t.Throughput, 1), estText(t.P50, 2), estText(t.P99, 2), estText(t.P999, 2), pooled,
					estText(t.CPUCores, 2), estText(t.MemoryPeakMiB, 0), rank)
			}
		}
		b.WriteString("\n")
		writeProtocolsMarkdown(&b, sc.Protocols)
		for _, n := range sc.Notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n))
		}
		for _, t := range sc.Targets {
			for _, c := range t.Cells {
				if c.Verdict != "valid" {
					fmt.Fprintf(&b, "- %s trial %d is **%s**: %s\n", mdText(t.Name), c.Row.Trial, mdText(c.Verdict), mdText(reason(c)))
				}
			}
		}
		b.WriteString("\n")
	}
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "- %s\n", mdText(n))
	}
	cpu := o.Host.CPU
	if strings.Contains(cpu, "×") { // the count is of the CPUs iotbench could use, not the host's
		cpu += " (× the CPUs iotbench could use)"
	}
	fmt.Fprintf(&b, "<sub>iotbench %s on %s, kernel %s, Docker %s; medians of valid trials ± their 95%% interval.</sub>\n", mdText(o.Host.Version), mdText(cpu), mdText(o.Host.Kernel), mdText(o.Host.Docker))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdText is every free text of the markdown (names, notes, reasons) as it is written: the one
// place where what the text may not carry into markdown is dealt with.
func mdText(s string) string { return safetext.Markdown(s) }

// writeMaximaMarkdown writes a find-max scenario's answer: the question, the targets' maxima
// ranked, the notes that say how to read them, and the finding.
func writeMaximaMarkdown(b *strings.Builder, sc summary.Scenario) {
	fmt.Fprintf(b, "**%s**\n\n", mdText(sc.Question()))
	b.WriteString("| rank | target | max rps | p99 at max (ms) | CPU cores at max | peak memory at max (MiB) | rps per core | stopped above max by (at the first failing rate) |\n|--:|---|--:|--:|--:|--:|--:|---|\n")
	for _, m := range maxRows(sc) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Rank, mdText(m.Target), m.Max, m.P99, m.CPU, m.Memory, m.PerCore, mdText(m.Limit))
	}
	b.WriteString("\n")
	for _, n := range sc.MaxNotes() {
		fmt.Fprintf(b, "- %s\n", mdText(n))
	}
	fmt.Fprintf(b, "\n**%s**\n\n", mdText(sc.Finding()))
}

// writeProtocolsMarkdown puts each target's figures over each protocol side by side, as the
// terminal and HTML reports do: the cost of TLS (and h2) to its runtime against its http1.
func writeProtocolsMarkdown(b *strings.Builder, over []summary.OverProtocol) {
	if len(over) == 0 {
		return
	}
	b.WriteString("Over each protocol:\n\n| target | protocol | valid trials | throughput (rps) | p99 (ms) | CPU per request (µs) | CPU per request vs http1 | cipher |\n|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, o := range over {
		fmt.Fprintf(b, "| %s | %s | %d/%d | %s | %s | %s | %s | %s |\n", mdText(o.Target), mdText(o.Protocol), o.Valid, o.Trials,
			estText(o.Throughput, 1), estText(o.P99, 2), estText(o.CPUPerRequest, 0), o.CPUChangeText(), mdText(o.CipherText()))
	}
	b.WriteString("\n")
}

// maxRow is a find-max target's line of the answer, as markdown and HTML write it.
type maxRow struct{ Rank, Target, Max, P99, CPU, Memory, PerCore, Limit string }

// maxRows are the lines of a find-max scenario's answer, best first.
func maxRows(sc summary.Scenario) []maxRow {
	var out []maxRow
	for _, t := range sc.Targets {
		r := maxRow{Rank: "—", Target: t.Name, Max: "—", P99: medianText(t.P99, 2), CPU: medianText(t.CPUCores, 2), Memory: medianText(t.MemoryPeakMiB, 0), PerCore: "—", Limit: "—"}
		if l := t.Limit(); l.Kind != limit.None {
			r.Limit = l.Evidence
		}
		switch {
		case t.Max != nil:
			r.Rank, r.Max = cmp.Or(t.Rank, "—"), MaxText(*t.Max, t.AtLeastMax())
			if t.CPUCores != nil && t.CPUCores.Median > 0 {
				r.PerCore = units.Count(t.Max.Median / t.CPUCores.Median)
			}
		case t.AtLeast > 0:
			r.Max = "≥ " + units.Count(float64(t.AtLeast)) + " (no maximum)"
		}
		out = append(out, r)
	}
	return out
}

// reason is why a cell is not valid.
func reason(c summary.Cell) string {
	switch c.Verdict {
	case "disturbed":
		return strings.TrimPrefix(c.Row.Warnings, "disturbed: ")
	case "not-steady", "still-warming":
		return c.Row.Warnings
	}
	return c.Row.InvalidReason
}

func settingsLine(sc summary.Scenario) string {
	return settingsText(sc, func(s string) string { return s })
}

// settingsText is a scenario's settings, each value from the rows passed through esc.
func settingsText(sc summary.Scenario, esc func(string) string) string {
	s := sc.Settings
	load := fmt.Sprintf("open loop at %d rps", s.RequestedRPS)
	switch {
	case sc.FindMax:
		load = findMaxLoad
	case s.Mode == "closed":
		load = fmt.Sprintf("closed loop, %d connections", s.Connections)
	}
	if mix := summary.MixText(s.Streams, s.Request); mix != "" {
		load += "; " + esc(mix)
	}
	or := func(v, none string) string {
		if v == "" {
			return none
		}
		return esc(v)
	}
	store := ""
	if s.DB == results.DBPostgres {
		store = fmt.Sprintf("; PostgreSQL server on cpuset %s, pool %d", esc(s.DBCPUSet), s.DBPoolSize)
	}
	return fmt.Sprintf("%s; %s measured after %s; target cpuset %s, memory %s; generator cpuset %s%s; fingerprint `%s`",
		load, s.Duration, summary.WarmupText(s.Warmup, s.WarmupAuto), or(s.CPUSet, "none (not pinned)"), or(s.Memory, "unlimited"), or(s.GeneratorCPUSet, "none (not pinned)"), store, s.Fingerprint)
}

// medianText is an estimate's median alone.
func medianText(e *summary.Estimate, prec int) string {
	if e == nil {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, e.Median)
}

func estText(e *summary.Estimate, prec int) string {
	if e == nil {
		return "—"
	}
	return fmt.Sprintf("%.*f %s", prec, e.Median, e.Spread())
}

// finite maps ±Inf to NaN-free values for charts and JSON: nil for an infinite bound.
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
