package overview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
)

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func fixtureOverview(t *testing.T) *summary.Overview {
	t.Helper()
	src, err := summary.Load(fixtureCSV)
	if err != nil {
		t.Fatal(err)
	}
	o, err := summary.Build([]summary.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPoolingMergesTheValidTrials(t *testing.T) {
	o := fixtureOverview(t)
	if len(o.Scenarios) != 1 || len(o.Scenarios[0].Targets) != 2 {
		t.Fatalf("%d scenarios, want 1 with 2 targets", len(o.Scenarios))
	}
	for _, tg := range o.Scenarios[0].Targets {
		var successes int64
		valid := 0
		for _, c := range tg.Cells {
			if c.Row.Valid {
				successes += c.Row.Successes
				valid++
			}
			if len(c.Measure) == 0 {
				t.Errorf("%s trial %d: no timeline read", tg.Name, c.Row.Trial)
			}
		}
		if tg.Pooled == nil || tg.Pooled.Count != successes || tg.Pooled.Trials != valid {
			t.Errorf("%s: pooled %+v, want %d latencies from %d valid trials", tg.Name, tg.Pooled, successes, valid)
			continue
		}
		// A pooled percentile lies within the trials' own.
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for _, c := range tg.Cells {
			if c.Row.Valid {
				lo, hi = min(lo, c.Row.LatencyP99), max(hi, c.Row.LatencyP99)
			}
		}
		if tg.Pooled.P99 < lo || tg.Pooled.P99 > hi {
			t.Errorf("%s: pooled p99 %v outside its trials' [%v, %v]", tg.Name, tg.Pooled.P99, lo, hi)
		}
	}
}

// TestLoadSkipsWhatItCannotUse: a histogram or timeline that a full disk tore, or that belongs
// to another run, is skipped with a note naming it; the rows are all still there, and the other
// cells keep their histograms.
func TestLoadSkipsWhatItCannotUse(t *testing.T) {
	fixture, err := summary.Load(fixtureCSV)
	if err != nil {
		t.Fatal(err)
	}
	k := summary.KeyOf(fixture.Rows[0])
	log, err := os.ReadFile(timeline.HistogramBase(fixtureCSV, k) + ".hlog")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(log), "\n"), "\n")
	torn := func(b []byte) []byte { return b[:len(b)*2/3] }
	cases := []struct {
		name string
		file string // under the timeline folder
		text []byte
		note string
		// cell whose histogram is skipped; none when the timeline is
		skipped bool
	}{
		{"a log without its last second (another run's)", "hlog", []byte(strings.Join(lines[:len(lines)-1], "")),
			".hlog holds 1799 latencies, its row (" + k.String() + ") 1800 successes", true},
		{"a log cut off after its header (a full disk)", "hlog", []byte(strings.Join(lines[:4], "")),
			"holds 0 latencies", true},
		{"a log cut off mid-line", "hlog", torn(log), "histogram skipped: ", true},
		{"a timeline cut off mid-line", "timeline", nil, "timeline skipped: ", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), filepath.Base(fixtureCSV))
			copyFile(t, fixtureCSV, csv)
			copyDir(t, timeline.Dir(fixtureCSV), timeline.Dir(csv))
			path := timeline.HistogramBase(csv, k) + ".hlog"
			text := c.text
			if c.file == "timeline" {
				path = timeline.Path(csv)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				text = torn(b)
			}
			if err := os.WriteFile(path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := summary.Load(csv)
			if err != nil {
				t.Fatalf("Load: %v, want the rows read with a note", err)
			}
			if len(src.Rows) != len(fixture.Rows) {
				t.Errorf("%d rows, want %d", len(src.Rows), len(fixture.Rows))
			}
			notes := strings.Join(src.Notes, "\n")
			if !strings.Contains(notes, c.note) || !strings.Contains(notes, path) {
				t.Errorf("notes %q lack %q naming %s", notes, c.note, path)
			}
			_, kept := src.Histograms[k]
			if kept == c.skipped {
				t.Errorf("cell %s: histogram kept %v", k, kept)
			}
			if len(src.Histograms) < len(fixture.Histograms)-1 {
				t.Errorf("%d histograms kept, want the %d others", len(src.Histograms), len(fixture.Histograms)-1)
			}
			if _, err := summary.Build([]summary.Source{src}); err != nil {
				t.Errorf("Build: %v", err)
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
	}
}

func TestLoadNotesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "r.csv")
	copyFile(t, fixtureCSV, csv)
	src, err := summary.Load(csv)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(src.Notes, "\n")
	for _, want := range []string{"no timeline", "6 cell(s) without their histogram"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes %q lack %q", got, want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresShowsTheServer: a run on PostgreSQL names its server in the settings, and each cell
// gives the server's CPU and memory beside the target's; the embedded fixture shows none of it.
func TestPostgresShowsTheServer(t *testing.T) {
	o := fixtureOverview(t)
	var plain bytes.Buffer
	if err := WriteJSON(&plain, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "db_") {
		t.Errorf("a run without a server has db fields:\n%s", plain.String())
	}
	sc := &o.Scenarios[0]
	sc.Settings.DB, sc.Settings.DBPoolSize, sc.Settings.DBCPUSet = results.DBPostgres, 20, "1"
	cell := &sc.Targets[0].Cells[0]
	cell.Row.DB, cell.Row.DBCPUCores, cell.Row.DBMemoryPeak = results.DBPostgres, 0.42, 123<<20
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"db": "postgres"`, `"db_pool_size": 20`, `"db_cpuset": "1"`, `"db_cpu_cores": 0.42`, `"db_memory_peak_bytes": 128974848`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	if !strings.Contains(md.String(), "PostgreSQL server on cpuset 1, pool 20") {
		t.Errorf("markdown does not name the server:\n%s", md.String())
	}
	// The HTML gives the server's CPU and memory beside the target's, in the cells' table.
	var page, plainPage bytes.Buffer
	if err := WriteHTML(&page, o, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<th>database CPU (cores)</th>", "<td>0.42</td><td>123</td>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	if err := WriteHTML(&plainPage, fixtureOverview(t), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plainPage.String(), "database CPU") {
		t.Error("the HTML of a run without a server shows the server's columns")
	}
}

func TestMarkdownAndJSON(t *testing.T) {
	o := fixtureOverview(t)
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "fixture.md", md.Bytes())
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "fixture.json", js.Bytes())
}

func TestHTMLIsSelfContained(t *testing.T) {
	o := fixtureOverview(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, o, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	// Charts: throughput, the spectrum, and a timeline per target (no resources in-process).
	figures := regexp.MustCompile(`<figure class="chart" data-chart="([^"]+)"><svg`).FindAllStringSubmatch(html, -1)
	var names []string
	for _, f := range figures {
		names = append(names, f[1])
	}
	if want := "throughput,latency spectrum,pausing timeline,steady timeline"; strings.Join(names, ",") != want {
		t.Errorf("charts %v, want %s", names, want)
	}
	// Nothing to fetch: no script, no external reference.
	for _, bad := range []string{"<script", "src=\"http", "href=\"http", "url(http", "@import", "<link"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page contains %q: it must open without network", bad)
		}
	}
	for _, want := range []string{"invalid", "generator delayed requests", "Every cell and its verdict"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A paired run's rows share their target's name: its baseline and its candidate are two
// targets of the overview, not one target's trials mixed.
func TestPairedSidesApart(t *testing.T) {
	var rows []results.Row
	for trial := 1; trial <= 2; trial++ {
		for _, v := range []string{results.VariantBase, results.VariantCandidate} {
			rows = append(rows, results.Row{Scenario: "s", Target: "t", Trial: trial, Variant: v, Valid: true, ThroughputRPS: 100})
		}
	}
	o, err := summary.Build([]summary.Source{{Path: "run.csv", Rows: rows}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range o.Scenarios[0].Targets {
		names = append(names, fmt.Sprintf("%s:%d", tg.Name, tg.Trials))
	}
	if got := strings.Join(names, " "); got != "t (base):2 t (candidate):2" {
		t.Errorf("targets %s, want each side apart with its 2 trials", got)
	}
}

// A target's medians take in every valid trial; the trials the self-checks distrust are named
// beside them, in the markdown and the HTML alike, not only in a note under the cells.
func TestDistrustedTrialsBesideTheMedians(t *testing.T) {
	var rows []results.Row
	for trial := 1; trial <= 3; trial++ {
		for _, name := range []string{"jvm", "node"} {
			r := results.Row{Scenario: "s", Target: name, Trial: trial, Mode: "closed", Valid: true, ThroughputRPS: 100,
				Duration: 30 * time.Second, JITJudged: name == "jvm"}
			if name == "jvm" && trial < 3 {
				r.JITBusy = 20 * time.Second // two thirds of the phase: still warming up
			}
			rows = append(rows, r)
		}
	}
	o, err := summary.Build([]summary.Source{{Path: "run.csv", Rows: rows}})
	if err != nil {
		t.Fatal(err)
	}
	var md, page, js bytes.Buffer
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, o, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []struct {
			Targets []struct {
				Name       string
				Distrusted []string `json:"distrusted_trials"`
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tg := range doc.Scenarios[0].Targets {
		if want := map[string]string{"jvm": "2 still warming up"}[tg.Name]; strings.Join(tg.Distrusted, ", ") != want {
			t.Errorf("JSON: %s's distrusted_trials %q, want %q", tg.Name, tg.Distrusted, want)
		}
	}
	for _, f := range []struct{ format, text, jvm, node string }{
		{"markdown", md.String(), "| jvm | 3/3 (2 still warming up) |", "| node | 3/3 |"},
		{"HTML", page.String(), ">3/3 (2 still warming up)</td>", "<td>node</td><td>3/3</td>"},
		{"the throughput chart", page.String(), ">jvm (2 still warming up)</text>", ">node</text>"},
	} {
		if !strings.Contains(f.text, f.jvm) || !strings.Contains(f.text, f.node) {
			t.Errorf("%s does not name jvm's 2 trials still warming up beside its medians, and none of node's (want %q, %q):\n%s", f.format, f.jvm, f.node, f.text)
		}
	}
}

// The Markdown's footer says what the HTML's Host table says of the CPU count: it is of the CPUs
// iotbench could use (×1 under taskset on a 2-CPU host), not the host's; a name without a count
// (an in-process run's) gets no such words.
func TestMarkdownFooterSaysWhoseCPUCount(t *testing.T) {
	for _, tc := range []struct{ cpu, want string }{
		{"Intel Xeon ×1", "on Intel Xeon ×1 (× the CPUs iotbench could use), kernel"},
		{"in-process", "on in-process, kernel"},
	} {
		o := fixtureOverview(t)
		o.Host.CPU = tc.cpu
		var md bytes.Buffer
		if err := WriteMarkdown(&md, o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), tc.want) {
			t.Errorf("CPU %q: footer lacks %q:\n%s", tc.cpu, tc.want, md.String()[strings.LastIndex(md.String(), "<sub>"):])
		}
	}
}

// The table of every cell writes rates and throughput as the other tables do, thousands apart.
func TestTheCellsTableWritesThousandsAsTheOtherTablesDo(t *testing.T) {
	rows := []results.Row{
		{Scenario: "s", Target: "t", Trial: 1, Valid: true, RequestedRPS: 30000, ThroughputRPS: 28568.04, SuccessRatio: 1},
		{Scenario: "s", Target: "t", Trial: 2, Valid: true, RequestedRPS: 500, ThroughputRPS: 499.5, SuccessRatio: 1},
	}
	o, err := summary.Build([]summary.Source{{Path: "run.csv", Rows: rows}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, o, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	start := strings.Index(html, `<table class="cells">`)
	if start < 0 {
		t.Fatal("no table of every cell")
	}
	table := html[start : start+strings.Index(html[start:], "</table>")]
	for _, want := range []string{"<td>30,000</td>", "<td>28,568</td>", "<td>500</td>", "<td>500</td>"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table of every cell lacks %s:\n%s", want, table)
		}
	}
	if strings.Contains(table, "28568") || strings.Contains(table, "30000") {
		t.Errorf("the table of every cell writes a count without its separators:\n%s", table)
	}
}
