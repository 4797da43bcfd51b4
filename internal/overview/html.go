package overview

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/units"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"est":      func(e *summary.Estimate, prec int) string { return estText(e, prec) },
	"ms":       func(d time.Duration) string { return fmt.Sprintf("%.2f", ms(d)) },
	"pct":      func(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) },
	"reason":   reason,
	"settings": settingsLine,
	"checkClass": func(c summary.Check) string {
		switch {
		case !c.Judged:
			return "none"
		case c.OK:
			return "ok"
		}
		return "failed"
	},
	"mib": func(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) },
	// Counts with thousands separators, as the other tables write them.
	"count": units.Count,
	"rate":  func(rps int) string { return units.Count(float64(rps)) },
}).Parse(pageTemplate))

type htmlScenario struct {
	summary.Scenario
	// DB: the targets ran on a PostgreSQL server, whose CPU and memory are shown beside theirs.
	DB bool
	// Maxima are a find-max scenario's answer, best first.
	Maxima    []maxRow
	Charts    []*chart
	Timelines []*chart
	// Flames are the CPU profiles taken at the searches' maxima (run --profile).
	Flames []flameFigure
}

type htmlPage struct {
	*summary.Overview
	Title     string
	Generated string
	Scenarios []htmlScenario
}

// WriteHTML writes o as one self-contained HTML page: styles inline, charts as inline SVG,
// nothing fetched, no script. now stamps it.
func WriteHTML(w io.Writer, o *summary.Overview, now time.Time) error {
	pg := htmlPage{Overview: o, Title: "iotbench report", Generated: now.UTC().Format(time.RFC3339)}
	for _, sc := range o.Scenarios {
		hs := htmlScenario{Scenario: sc, DB: onServer(sc)}
		draws := []func(summary.Scenario) (*chart, error){throughputChart, spectrumChart, resourcesChart}
		if sc.FindMax {
			// The answer's figures first: at each target's maximum; then every step.
			hs.Maxima = maxRows(sc)
			draws = []func(summary.Scenario) (*chart, error){spectrumChart, resourcesChart, findMaxChart}
		}
		for _, d := range draws {
			c, err := d(sc)
			if err != nil {
				return fmt.Errorf("%s: %w", sc.Name, err)
			}
			if c != nil {
				hs.Charts = append(hs.Charts, c)
			}
		}
		for _, t := range sc.Targets {
			c, err := timelineChart(sc, t)
			if err != nil {
				return fmt.Errorf("%s, %s timeline: %w", sc.Name, t.Name, err)
			}
			if c != nil {
				hs.Timelines = append(hs.Timelines, c)
			}
		}
		for _, p := range sc.Profiles {
			hs.Flames = append(hs.Flames, newFlameFigure(p))
		}
		pg.Scenarios = append(pg.Scenarios, hs)
	}
	// html/template escapes markup, not control codes and bidirectional overrides: a reason
	// quoting them would still reorder or hide what the page shows.
	var b strings.Builder
	if err := page.Execute(&b, pg); err != nil {
		return err
	}
	_, err := io.WriteString(w, safetext.Document(b.String()))
	return err
}

// onServer says a cell of sc ran on a PostgreSQL server.
func onServer(sc summary.Scenario) bool {
	for _, t := range sc.Targets {
		if slices.ContainsFunc(t.Cells, func(c summary.Cell) bool { return c.Row.DB == results.DBPostgres }) {
			return true
		}
	}
	return false
}
