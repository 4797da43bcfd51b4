package history

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/overview"
	"gonum.org/v1/plot/plotter"
)

var reportPage = template.Must(template.New("history").Funcs(template.FuncMap{
	"short":  short,
	"level":  levelText,
	"change": changeText,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>iotbench history</title>
<style>
body { font: 14px/1.45 "Liberation Sans", Arial, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em 1.5em 3em; color: #1d1d1f; }
h2 { font-size: 1.2em; border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .25em .6em; text-align: left; }
th { background: #f5f5f7; }
figure { margin: .6em 0; } figure svg { max-width: 100%; height: auto; }
.muted { color: #777; font-size: 12px; }
.regressed { color: #cf222e; font-weight: bold; } .improved { color: #1a7f37; }
code { font-size: 12px; }
</style>
</head>
<body>
<h1>iotbench history</h1>
<p class="muted">Generated {{.Generated}} from <code>{{.Store}}</code>, branch <code>{{.Branch}}</code>.
Change points: E-Divisive means on ranks, significance {{.Alpha}} (permutation test), windows of {{.Window}} points,
at least {{.MinPoints}} points each side. Grey lines are the levels (medians) between change points, dashed red
lines the change points, red crosses rows that were no measurement (invalid, disturbed, not loaded): stored, never used.</p>
{{if not .Trends}}<p>No series on this branch.</p>{{end}}
{{range .Trends}}
<section>
<h2>{{.Title}}</h2>
<p class="muted">{{.Testbed}}; {{.Settings}}</p>
<figure>{{.SVG}}</figure>
{{if .Changes}}<table>
<tr><th>commits</th><th>started</th><th>before</th><th>after</th><th>change</th><th>p</th></tr>
{{range .Changes}}<tr><td><code>{{short .Since}}..{{short .Commit}}</code></td><td>{{.At.Format "2006-01-02 15:04"}}</td><td>{{level .Before .Unit}}</td><td>{{level .After .Unit}}</td><td class="{{if .Regression}}regressed{{else}}improved{{end}}">{{change .}}</td><td>{{printf "%.3f" .P}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No change point.</p>{{end}}
</section>
{{end}}
</body>
</html>
`))

type htmlTrend struct {
	Title, Testbed, Settings string
	SVG                      template.HTML
	Changes                  []Change
}

// WriteHTML writes trends as one self-contained page (inline SVG, no script): each series and
// metric drawn with its levels, change points and unusable points. store and branch name what
// it shows; now stamps it.
func WriteHTML(w io.Writer, trends []Trend, d Detection, store, branch string, now time.Time) error {
	page := struct {
		Generated, Store, Branch string
		Alpha                    float64
		Window, MinPoints        int
		Trends                   []htmlTrend
	}{now.UTC().Format(time.RFC3339), store, branch, d.Alpha, d.Window, d.MinPoints, nil}
	for _, t := range trends {
		svg, err := overview.TrendChart(chartOf(t))
		if err != nil {
			return fmt.Errorf("%s, %s: %w", t.Series, t.Metric.Name, err)
		}
		page.Trends = append(page.Trends, htmlTrend{Title: t.Series.String() + ": " + t.Metric.Name, Testbed: t.Series.Testbed,
			Settings: t.Series.Settings, SVG: svg, Changes: t.Changes})
	}
	return reportPage.Execute(w, page)
}

// chartOf is t as the report's chart draws it: x is a point's position in the series.
func chartOf(t Trend) overview.Trend {
	c := overview.Trend{Title: t.Series.String() + ": " + t.Metric.Name, YLabel: t.Metric.Name + " (" + t.Metric.Unit + ")"}
	for i, v := range t.Values {
		c.Points = append(c.Points, plotter.XY{X: float64(t.Pos[i]), Y: v})
	}
	low := slices.Min(t.Values)
	for i, p := range t.Unusable {
		// A row never loaded has no value: its cross sits at the series' lowest.
		y, ok := p.Values[t.Metric.Name]
		if !ok {
			y = low
		}
		c.Unusable = append(c.Unusable, plotter.XY{X: float64(t.UnusablePos[i]), Y: y})
	}
	bounds := []int{0}
	for _, ch := range t.Changes {
		bounds = append(bounds, ch.Index)
	}
	bounds = append(bounds, len(t.Values))
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]
		c.Levels = append(c.Levels, overview.Level{From: float64(t.Pos[from]), To: float64(t.Pos[to-1] + 1), Median: levelOf(t.Values[from:to]).Median})
	}
	return c
}
