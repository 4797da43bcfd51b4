package overview

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

func TestMsTicksNeverLeaveAnAxisBare(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.1, 1000, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"}},
		{3, 40, []string{"5", "10", "20"}},
		{150.9, 152.1, []string{"151", "152"}},
		{120, 210, []string{"120", "210"}}, // one round tick in range: the ends instead
	} {
		var got []string
		for _, tk := range (msTicks{}).Ticks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Ticks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// A target whose measured seconds hold no answer (dead from its first step: make run's
// spring-mvc-virtual, out of memory) still gets its timeline: the latency panel is empty, not a
// log scale asked to hold 0 (which panicked the run's HTML report).
func TestATimelineWithoutAnAnswerIsDrawn(t *testing.T) {
	row := results.Row{Scenario: "io", Target: "dead", Trial: 1, Mode: "open", RequestedRPS: 1856, Duration: 4 * time.Second, Fault: fault.TargetDied, InvalidReason: "target died"}
	var seconds []timeline.Second
	for i := range 4 {
		seconds = append(seconds, timeline.Second{Index: i, Due: 1856, Sent: 139, Timeouts: 139})
	}
	sc := summary.Scenario{Name: "io"}
	tg := summary.Target{Name: "dead", Cells: []summary.Cell{{Row: row, Verdict: "invalid", Measure: seconds}}}
	c, err := timelineChart(sc, tg)
	if err != nil || c == nil || !strings.Contains(string(c.SVG), "<svg") {
		t.Fatalf("chart %v, %v: want an SVG", c, err)
	}
}

// A phase's whole seconds are drawn, and no others: the second after a 3 s phase at 2,000 rps,
// holding the one answer still on its way (the request due at 3.000 s), is neither a drop to one
// answer on the rate lines nor a p99 of 0.1 ms on the latency line; nor is the last, partial
// second of a warm-up until steady that took 2.5 s.
func TestOnlyAPhasesWholeSecondsAreDrawn(t *testing.T) {
	full := timeline.Second{Successes: 2000, P99: 2 * time.Millisecond, OwnDelayP99: 100 * time.Microsecond, CPUCores: 0.5, MemoryBytes: 1 << 26}
	part := timeline.Second{Successes: 1, P99: 100 * time.Microsecond, OwnDelayP99: 10 * time.Microsecond, CPUCores: 0.1, MemoryBytes: 1 << 26}
	phase := func(seconds ...timeline.Second) []timeline.Second {
		for i := range seconds {
			seconds[i].Index = i
		}
		return seconds
	}
	tl := timelinePanels{latMin: math.Inf(1)}
	var l cellLines
	l.add(&tl, -3, 2.5, phase(full, full, part, part)) // a warm-up until steady of 2.5 s, drawn from -3
	l.add(&tl, 0, 3, phase(full, full, full, part))
	for name, xys := range map[string]plotter.XYs{"successes": l.ok, "errors": l.bad, "p99": l.p99, "own delay": l.own, "cores": l.cores, "memory": l.mib} {
		var xs []float64
		for _, p := range xys {
			xs = append(xs, p.X)
		}
		if want := []float64{-3, -2, 0, 1, 2}; !slices.Equal(xs, want) {
			t.Errorf("%s drawn at seconds %v, want %v", name, xs, want)
		}
	}
	if tl.latMin != 0.1 {
		t.Errorf("latency axis from %v ms, want 0.1 (the own delay of the phase's seconds)", tl.latMin)
	}
}

// A measured phase is drawn for as long as it lasted: a find-max step that ended after 2 of its
// 4 s, at 4,568 rps, is drawn without its drain second (holding the request due at 2.000 s and
// the answers on their way) and the seconds it never ran. The figures are of a make run's
// spring-mvc-virtual search.
func TestAMeasuredPhaseIsDrawnForAsLongAsItLasted(t *testing.T) {
	seconds := func(due ...int64) []timeline.Second {
		var s []timeline.Second
		for i, d := range due {
			s = append(s, timeline.Second{Index: i, Due: d, Successes: d})
		}
		return s
	}
	step := func(rate int, requests int64, achieved float64) results.Row {
		return results.Row{Mode: "open", RequestedRPS: rate, Duration: 4 * time.Second, Requests: requests, AchievedRPS: achieved}
	}
	for _, tc := range []struct {
		name    string
		row     results.Row
		seconds []timeline.Second
		want    float64
	}{
		{"a whole step and its drain second", step(3368, 13472, 3368), seconds(3367, 3368, 3368, 3368, 1), 4},
		{"a step ended after 2 s", step(4568, 6936, 3468), seconds(4567, 4568, 1), 2},
		{"a step ended after 3 s, fewer sent than due", step(3768, 9129, 3043), seconds(3767, 3768, 3768, 1), 3},
		{"closed loop", results.Row{Mode: "closed", Connections: 8, Duration: 4 * time.Second, Requests: 800, AchievedRPS: 200}, seconds(0, 0, 0, 0, 0), 4},
		{"nothing sent: as set", step(100, 0, 0), seconds(100, 100, 100, 100), 4},
		{"a row without its duration: the seconds recorded", results.Row{Mode: "open", RequestedRPS: 100}, seconds(100, 100, 100), 3},
	} {
		if got := measuredLength(tc.row, tc.seconds); got != tc.want {
			t.Errorf("%s: drawn %v s, want %v", tc.name, got, tc.want)
		}
	}
}

// A timeline's legend, drawn inside its answers panel, fits there however many cells it names (a
// search's steps are many), its entries at least their font's size (8 pt) apart, as a browser
// draws them without touching, beside the panel's title and axis; two trials keep the usual height.
func TestATimelinesLegendFitsItsPanel(t *testing.T) {
	height := func(cells int) float64 {
		t.Helper()
		tg := summary.Target{Name: "spring-mvc-virtual"}
		for i := range cells {
			row := results.Row{Scenario: "io.find-max", Target: tg.Name, Trial: i + 1, Mode: "open", RequestedRPS: 2000 + 100*i, Duration: 4 * time.Second}
			var seconds []timeline.Second
			for s := range 4 {
				seconds = append(seconds, timeline.Second{Index: s, Due: 2000, Successes: 2000, P99: 60 * time.Millisecond, CPUCores: 0.8, MemoryBytes: 1 << 29})
			}
			tg.Cells = append(tg.Cells, summary.Cell{Row: row, Verdict: "valid", Measure: seconds})
		}
		c, err := timelineChart(summary.Scenario{Name: "io", FindMax: true}, tg)
		if err != nil || c == nil {
			t.Fatalf("%d cells: chart %v, %v", cells, c, err)
		}
		m := regexp.MustCompile(`height="([0-9.]+)pt"`).FindStringSubmatch(string(c.SVG))
		if m == nil {
			t.Fatalf("%d cells: no height in %.80q", cells, c.SVG)
		}
		pt, _ := strconv.ParseFloat(m[1], 64)
		return pt / 4 // answers, latency, CPU, memory
	}
	if h := height(2); h != 150 {
		t.Errorf("2 cells: panels %v pt tall, want the usual 150", h)
	}
	for _, n := range []int{15, 40} {
		if h, need := height(n), float64(n)*8+40; h < need {
			t.Errorf("%d cells: panels %v pt tall, under the %v pt their legend and title need", n, h, need)
		}
	}
}

// A bar chart's axis reads as the tables do: 25,000 rps per core, never 2.5e+04.
func TestBarTicksWriteThousandsAsTheTablesDo(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.4, "0.4"}, {0.125, "0.125"}, {300, "300"}, {999.5, "999.5"},
		{1000, "1,000"}, {25000, "25,000"}, {400000, "400,000"}, {2e6, "2,000,000"},
	} {
		if got := barTick(tc.v); got != tc.want {
			t.Errorf("barTick(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// A bar panel's axis reaches past its tallest bar, which would otherwise touch the panel's top
// as if cut off there; it starts at 0.
func TestABarPanelLeavesRoomAboveItsTallestBar(t *testing.T) {
	for _, vals := range []plotter.Values{{0.98}, {0.5, 0.98}, {25000, 400000, 1200}, {3}} {
		p, err := barPanel("CPU (cores)", make([]string, len(vals)), vals)
		if err != nil {
			t.Fatal(err)
		}
		tallest := slices.Max(vals)
		if p.Y.Min != 0 || p.Y.Max < 1.05*tallest {
			t.Errorf("bars %v: axis from %v to %v, want from 0 to 5%% or more above the tallest, %v", vals, p.Y.Min, p.Y.Max, tallest)
		}
	}
}

// A ramp is drawn from its own seconds, while what was due rose (those after it only answer its
// last requests), at the rate due in each: seconds without an answer have no p99 to draw.
func TestARampIsDrawnFromItsOwnSeconds(t *testing.T) {
	sec := func(due, ok int64, p99 time.Duration) timeline.Second {
		return timeline.Second{Due: due, Successes: ok, P99: p99}
	}
	seconds := []timeline.Second{
		sec(500, 480, 51*time.Millisecond), sec(600, 0, 0), sec(700, 690, 52*time.Millisecond),
		sec(900, 700, 300*time.Millisecond), sec(1, 1500, 900*time.Millisecond), sec(0, 200, time.Second),
	}
	got := rampPoints(seconds)
	want := plotter.XYs{{X: 500, Y: 51}, {X: 700, Y: 52}, {X: 900, Y: 300}}
	if !slices.Equal(got, want) {
		t.Errorf("points %v, want %v", got, want)
	}
}

// The find-max chart's legend sits at the top left, inside the data area, where a ramp's p99
// climbs to seconds at a rate far below another target's: the axis reaches far enough above the
// highest p99 that no line runs under the legend, however many targets it names.
func TestTheFindMaxLegendLiesAboveEveryLine(t *testing.T) {
	for _, targets := range []int{1, 3, 6} {
		p := newPlot("find-max", "rate", "p99 (ms, log)")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = msTicks{}
		for i := range targets {
			ramp := plotter.XYs{{X: 500, Y: 50}, {X: 3000, Y: 4000}, {X: 40000, Y: 90}}
			if err := addLine(p, ramp, colorOf(i), false, fmt.Sprintf("target %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		p.Legend.Left = true
		w, h := vg.Points(620), vg.Points(300)
		legendRoom(p, w, h)
		dc := p.DataCanvas(draw.New(vgsvg.New(w, h)))
		room := dc.Max.Y - dc.Y(p.Y.Norm(4000))
		if legend := p.Legend.Rectangle(draw.Canvas{}).Size().Y; room < legend {
			t.Errorf("%d targets: %.1f pt above the highest p99, under the legend's %.1f pt", targets, room, legend)
		}
	}
}

// TestSeriesColoursAreToldApart: every two series among as many as the palette holds differ by a
// redmean distance (a cheap approximation of perceived difference) of at least 90; gonum's
// default palette, which drew two targets in alike reds, has a pair at 75.
func TestSeriesColoursAreToldApart(t *testing.T) {
	distance := func(a, b color.Color) float64 {
		x, y := color.RGBAModel.Convert(a).(color.RGBA), color.RGBAModel.Convert(b).(color.RGBA)
		r := (float64(x.R) + float64(y.R)) / 2
		dr, dg, db := float64(x.R)-float64(y.R), float64(x.G)-float64(y.G), float64(x.B)-float64(y.B)
		return math.Sqrt((2+r/256)*dr*dr + 4*dg*dg + (2+(255-r)/256)*db*db)
	}
	for i := range len(palette) {
		for j := range i {
			if d := distance(colorOf(i), colorOf(j)); d < 90 {
				t.Errorf("series %d and %d: colours %v and %v differ by %.0f, want 90 or more", j, i, colorOf(j), colorOf(i), d)
			}
		}
	}
	if colorOf(len(palette)) != colorOf(0) {
		t.Errorf("past the palette, series %d is %v, want it to start over at %v", len(palette), colorOf(len(palette)), colorOf(0))
	}
}
