package overview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
)

// agreeRows: a fixed-rate scenario of three targets, six trials each (ranked, with a tie), and a
// find-max scenario of two targets searched twice each, their searches interleaved.
func agreeRows() []results.Row {
	var rows []results.Row
	p99 := map[string][]float64{
		"spring":  {55.2, 54.1, 56.9, 55.8, 54.9, 56.1},
		"javalin": {55.5, 54.6, 56.2, 55.1, 57.0, 54.4},
		"fastify": {61.7, 69.0, 60.2, 75.3, 62.8, 64.1},
	}
	for trial := 1; trial <= 6; trial++ {
		for i, t := range []string{"javalin", "fastify", "spring"} {
			v := p99[t][trial-1]
			rows = append(rows, results.Row{Scenario: "io", Target: t, Trial: trial, Mode: "open", RequestedRPS: 1000, Connections: 300,
				ThroughputRPS: 990 + float64(trial*(i+1)), SuccessRatio: 1, LatencyP50: time.Duration(v*6e5) + time.Duration(trial)*time.Microsecond*37,
				LatencyP99: time.Duration(v * 1e6), LatencyP999: time.Duration(v * 1.7e6), Duration: 20 * time.Second, Valid: true,
				CPUCores: 0.3 + 0.01*float64(trial), MemoryPeak: int64(200+trial) << 20})
		}
	}
	step := 0
	for search, maxima := range [][2]int{{4000, 2000}, {4400, 2100}, {4200, 1900}, {4100, 2050}, {4300, 2000}} { // enough to rank
		for i, t := range []string{"fast", "slow"} {
			m := maxima[i]
			for _, s := range []struct {
				rate  int
				valid bool
			}{{m / 2, true}, {m, true}, {m + m/10, false}, {m + m/10, false}, {m, true}} {
				step++
				r := results.Row{Scenario: "io" + results.FindMaxSuffix, Target: t, Trial: step, Search: search + 1, Mode: "open", RequestedRPS: s.rate, Connections: 300,
					Startup: time.Duration(1000+10*search+i) * time.Millisecond, Valid: s.valid, ThroughputRPS: float64(s.rate),
					LatencyP50: 20 * time.Millisecond, LatencyP99: time.Duration(40+search+i) * time.Millisecond, LatencyP999: 90 * time.Millisecond,
					CPUCores: float64(s.rate) / 2000, MemoryPeak: 300 << 20, Duration: 10 * time.Second}
				if !s.valid {
					r.SetFault(fault.SLONotMet, "slo not met: p99 300ms ≥ 100ms")
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

var number = regexp.MustCompile(`-?[0-9][0-9,]*(\.[0-9]+)?`)

// firstNumber is the first number of a cell ("4,200 [4,100–4,300]" → 4200); NaN without one.
func firstNumber(cell string) float64 {
	m := number.FindString(cell)
	v, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

var (
	tableRow = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	tag      = regexp.MustCompile(`<[^>]*>`)
)

// rowsOf are the rows of every table of a rendered text, each a list of its cells' text.
func rowsOf(text, format string) [][]string {
	var rows [][]string
	if format == "html" {
		for _, m := range tableRow.FindAllStringSubmatch(text, -1) {
			cells := strings.Split(strings.ReplaceAll(m[1], "</td>", "\x1f"), "\x1f")
			for i := range cells {
				cells[i] = strings.TrimSpace(html.UnescapeString(tag.ReplaceAllString(cells[i], "")))
			}
			rows = append(rows, cells)
		}
		return rows
	}
	sep := map[string]string{"table": "│", "markdown": "|"}[format]
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, sep)
		if len(cells) < 3 {
			continue
		}
		cells = cells[1:]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// rowWith is the first row whose cell at is name and that ok accepts; nil when there is none.
func rowWith(rows [][]string, at int, name string, ok func([]string) bool) []string {
	for _, r := range rows {
		if len(r) > at && r[at] == name && ok(r) {
			return r
		}
	}
	return nil
}

// TestEveryFormatPrintsTheModel: the table, markdown, JSON and HTML of one results file print the
// same figures, those of the one summary model: each target's medians and rank, each find-max
// target's maximum and rank.
func TestEveryFormatPrintsTheModel(t *testing.T) {
	o := summary.FromRows(agreeRows())
	var table, md, js, page bytes.Buffer
	if err := WriteTable(&table, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, o, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []struct {
			Targets []struct {
				Name          string
				Rank          string
				RawThroughput struct{ Median float64 } `json:"throughput_rps"`
				RawP50        struct{ Median float64 } `json:"latency_p50_ms"`
				RawP99        struct{ Median float64 } `json:"latency_p99_ms"`
				RawP999       struct{ Median float64 } `json:"latency_p999_ms"`
			} `json:"targets"`
			Maxima []struct {
				Target string
				Rank   string
				MaxRPS struct{ Median float64 } `json:"max_rps"`
			} `json:"maxima"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// within says a printed figure is the model's at the precision it was printed with.
	within := func(printed, model float64) bool { return math.Abs(printed-model) <= 0.005*math.Abs(model)+0.006 }
	fixed, search := o.Scenarios[0], o.Scenarios[1]
	if fixed.FindMax || !search.FindMax {
		t.Fatalf("scenarios %s, %s: want the fixed-rate one first", fixed.Name, search.Name)
	}
	htmlText := page.String()
	for i, tg := range fixed.Targets {
		model := []float64{tg.Throughput.Median, tg.P50.Median, tg.P99.Median, tg.P999.Median}
		j := doc.Scenarios[0].Targets[i]
		formats := map[string][]float64{
			"json": {j.RawThroughput.Median, j.RawP50.Median, j.RawP99.Median, j.RawP999.Median},
		}
		ranks := map[string]string{"json": j.Rank}
		if j.Name != tg.Name {
			t.Errorf("json: target %d is %s, the model's %s", i, j.Name, tg.Name)
		}
		// Every format's summary line: target, valid trials "6/6", the medians, …, the rank last.
		summaryLine := func(r []string) bool { return strings.Contains(r[1], "/") }
		for f, text := range map[string]string{"table": table.String(), "markdown": md.String(), "html": htmlText} {
			c := rowWith(rowsOf(text, f), 0, tg.Name, summaryLine)
			if c == nil {
				continue
			}
			if c[len(c)-1] == "" { // after the closing separator
				c = c[:len(c)-1]
			}
			formats[f] = []float64{firstNumber(c[2]), firstNumber(c[3]), firstNumber(c[4]), firstNumber(c[5])}
			ranks[f] = c[len(c)-1]
		}
		for _, f := range []string{"table", "markdown", "json", "html"} {
			got, ok := formats[f]
			if !ok {
				t.Errorf("%s: no summary line of %s", f, tg.Name)
				continue
			}
			for k := range model {
				if !within(got[k], model[k]) {
					t.Errorf("%s: %s figure %d is %v, the model's %v", f, tg.Name, k, got[k], model[k])
				}
			}
			if ranks[f] != tg.Rank {
				t.Errorf("%s: %s ranked %q, the model %q", f, tg.Name, ranks[f], tg.Rank)
			}
		}
	}
	if fixed.Targets[0].Rank == "" || search.Targets[0].Rank == "" {
		t.Fatal("the fixed-rate or the find-max targets are not ranked: the test checks no rank")
	}
	for i, tg := range search.Targets {
		j := doc.Scenarios[1].Maxima[i]
		got := map[string][2]string{"json": {fmt.Sprint(j.MaxRPS.Median), j.Rank}}
		// Every format's answer line: rank, target, max rps, ….
		for f, text := range map[string]string{"table": table.String(), "markdown": md.String(), "html": htmlText} {
			if c := rowWith(rowsOf(text, f), 1, tg.Name, func([]string) bool { return true }); c != nil {
				got[f] = [2]string{fmt.Sprint(firstNumber(c[2])), c[0]}
			}
		}
		want := [2]string{fmt.Sprint(tg.Max.Median), tg.Rank}
		for _, f := range []string{"table", "markdown", "json", "html"} {
			if got[f] != want {
				t.Errorf("%s: %s maximum and rank %v, the model's %v", f, tg.Name, got[f], want)
			}
		}
	}
}

// TestFindMaxOpensWithItsAnswer: in every format a find-max scenario's answer (the question, the
// ranked maxima, the finding) comes before its steps and charts.
func TestFindMaxOpensWithItsAnswer(t *testing.T) {
	o := summary.FromRows(agreeRows()[18:])
	o.Scenarios[0].SLO = "p99<100ms"
	var table, md, js, page bytes.Buffer
	if err := WriteTable(&table, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, o, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format, text string
		before       string // what comes after the answer
	}{
		{"table", table.String(), "generator delay p99"},
		{"markdown", md.String(), "| target | rate (rps) |"},
		{"json", js.String(), `"settings"`},
		{"html", page.String(), "<figure"},
	} {
		// As each format writes "<": JSON, HTML and markdown escape it.
		lt := map[string]string{"json": `\u003c`, "html": "&lt;", "markdown": `\<`}[c.format]
		if lt == "" {
			lt = "<"
		}
		q := strings.Index(c.text, "Which target sustains the most io load under p99"+lt+"100ms?")
		f := strings.Index(c.text, "Finding: fast sustains the most io load under p99"+lt+"100ms, 4,200 rps")
		after := strings.Index(c.text, c.before)
		if q < 0 || f < 0 || after < 0 || !(q < f && f < after) {
			t.Errorf("%s: question at %d, finding at %d, %q at %d: want the answer first", c.format, q, f, c.before, after)
		}
	}
}
