package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/summary"
	"gonum.org/v1/plot/plotter"
)

// TestTrendChartMarksChangesAndUnusable: a history's series is drawn with a dashed line at each
// change point and a cross at each unusable point.
func TestTrendChartMarksChangesAndUnusable(t *testing.T) {
	svg, err := TrendChart(Trend{Title: "ingest / a: p50", YLabel: "p50 (ms)",
		Points:   plotter.XYs{{X: 0, Y: 20}, {X: 1, Y: 20}, {X: 3, Y: 24}, {X: 4, Y: 24}},
		Unusable: plotter.XYs{{X: 2, Y: 20}},
		Levels:   []Level{{From: 0, To: 2, Median: 20}, {From: 3, To: 5, Median: 24}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.HasPrefix(s, "<svg") || strings.Count(s, "stroke-dasharray:3,2") != 1 || !strings.Contains(s, "not a measurement") {
		t.Errorf("the chart lacks its change line or its unusable point:\n%.400s", s)
	}
}

// TestReportLinksToHistory: a report given a history page links to it.
func TestReportLinksToHistory(t *testing.T) {
	var b strings.Builder
	if err := WriteHTML(&b, &summary.Overview{History: "run.history.html"}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<a href="run.history.html">`) {
		t.Error("the report does not link to its history")
	}
}
