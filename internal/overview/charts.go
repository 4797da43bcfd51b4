package overview

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/iotbench/iotbench/internal/units"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Charts are drawn with gonum/plot into SVG, inlined in the page: nothing to fetch, no script.

func init() {
	// Sans-serif reads better at chart sizes; the browser's own sans stands in when Liberation is absent.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// chart is one figure of the report.
type chart struct {
	Title string
	SVG   template.HTML
}

// render draws the plots as rows of panels, each panelH high, into one SVG.
func render(rows [][]*plot.Plot, w, panelH vg.Length) (template.HTML, error) {
	h := panelH * vg.Length(len(rows))
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(rows), Cols: len(rows[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(rows, tiles, dc)
	for i, row := range rows {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	// The XML prolog has no place inside HTML.
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return template.HTML(s), nil // gonum/plot escapes every text it writes
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(9)
		a.Tick.Label.Font.Size = vg.Points(8)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	// a browser draws the SVG's text in its own font, taller than the one gonum measured: without
	// the space between them, entries touch
	p.Legend.Padding = vg.Points(2)
	p.Legend.Top = true
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// colorOf gives each target (or trial) a stable colour: Tableau's ten categorical colours, each
// told from every other at a glance (gonum's default seven hold two reds, and a report of six
// targets drew two of them alike).
func colorOf(i int) color.Color { return palette[i%len(palette)] }

var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, // blue
	{0xf2, 0x8e, 0x2b, 0xff}, // orange
	{0xe1, 0x57, 0x59, 0xff}, // red
	{0x76, 0xb7, 0xb2, 0xff}, // teal
	{0x59, 0xa1, 0x4f, 0xff}, // green
	{0xed, 0xc9, 0x48, 0xff}, // yellow
	{0xb0, 0x7a, 0xa1, 0xff}, // purple
	{0xff, 0x9d, 0xa7, 0xff}, // pink
	{0x9c, 0x75, 0x5f, 0xff}, // brown
	{0xba, 0xb0, 0xac, 0xff}, // grey
}

// throughputChart: each target's median throughput with its 95% interval.
func throughputChart(sc summary.Scenario) (*chart, error) {
	var names []string
	var vals plotter.Values
	type bar struct {
		plotter.XYs
		plotter.YErrors
	}
	eb := bar{}
	for _, t := range sc.Targets {
		if t.Throughput == nil {
			continue
		}
		name := t.Name
		if d := t.Distrusted(); len(d) > 0 {
			name += " (" + strings.Join(d, ", ") + ")" // a median no ranking rests on
		}
		names = append(names, name)
		vals = append(vals, t.Throughput.Median)
		lo, hi := t.Throughput.Lo, t.Throughput.Hi
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			lo, hi = t.Throughput.Median, t.Throughput.Median
		}
		eb.XYs = append(eb.XYs, plotter.XY{X: float64(len(names) - 1), Y: t.Throughput.Median})
		eb.YErrors = append(eb.YErrors, struct{ Low, High float64 }{t.Throughput.Median - lo, hi - t.Throughput.Median})
	}
	if len(names) == 0 {
		return nil, nil
	}
	p := newPlot("Throughput: median of valid trials, 95% interval", "", "successful requests / s")
	bars, err := plotter.NewBarChart(vals, vg.Points(22))
	if err != nil {
		return nil, err
	}
	bars.Color = colorOf(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	e, err := plotter.NewYErrorBars(eb)
	if err != nil {
		return nil, err
	}
	e.LineStyle.Width = vg.Points(1.2)
	p.Add(e)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = -0.5
	p.X.Tick.Label.XAlign = draw.XLeft
	p.Y.Min = 0
	svg, err := render([][]*plot.Plot{{p}}, vg.Points(math.Max(360, float64(40*len(names)+120))), vg.Points(260))
	return &chart{Title: "throughput", SVG: svg}, err
}

// msTicks label a log axis of milliseconds at 1, 2 and 5 times the powers of ten; a range within
// one of those steps (p99s of 150.9–152 ms) gets its ends labelled, never a bare axis.
type msTicks struct{}

func (msTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, e); v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(ts) < 2 {
		ts = []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}, {Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)}}
	}
	return ts
}

// countTicks mark an axis of counts as gonum would, labelled by barTick.
var countTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = barTick(ts[i].Value)
		}
	}
	return ts
})

// barTick labels a bar chart's value axis: thousands with their separators, as the tables write
// them (25,000 rps per core, not 2.5e+04), smaller values to 4 digits (0.4 cores).
func barTick(v float64) string {
	if math.Abs(v) >= 1000 {
		return units.Count(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// spectrumTicks label a 1/(1−p) axis with percentiles, as HdrHistogram's plotter does.
type spectrumTicks struct{}

func (spectrumTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	for i, l := range labels {
		v := math.Pow(10, float64(i))
		if v >= lo && v <= hi*1.0001 {
			ts = append(ts, plot.Tick{Value: v, Label: l})
		}
	}
	if v := 2.0; v >= lo && v <= hi {
		ts = append(ts, plot.Tick{Value: v, Label: "50%"})
	}
	return ts
}

// spectrumChart: each target's pooled latency by percentile, percentiles on a log axis.
func spectrumChart(sc summary.Scenario) (*chart, error) {
	title := "Latency by percentile: every valid trial's histogram pooled"
	if sc.FindMax {
		title = "Latency by percentile at each target's maximum: its steps there pooled"
	}
	p := newPlot(title, "percentile", "latency (ms)")
	pooledOf := "trials"
	if sc.FindMax {
		pooledOf = "steps"
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = spectrumTicks{}
	n := 0
	for i, t := range sc.Targets {
		if t.Pooled == nil {
			continue
		}
		var xys plotter.XYs
		for _, r := range t.Pooled.Spectrum {
			if r.Percentile < 1 {
				xys = append(xys, plotter.XY{X: 1 / (1 - r.Percentile), Y: r.Value})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = colorOf(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d %s, %s requests)", t.Name, t.Pooled.Trials, pooledOf, units.Count(float64(t.Pooled.Count))), l)
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Legend.Left = true
	p.Y.Min = 0
	svg, err := render([][]*plot.Plot{{p}}, vg.Points(620), vg.Points(300))
	return &chart{Title: "latency spectrum", SVG: svg}, err
}

// timelineChart: a target's cells second by second, warm-up at negative seconds, every trial a
// line of its own colour: answers, latency, CPU and memory.
func timelineChart(sc summary.Scenario, t summary.Target) (*chart, error) {
	tl := timelinePanels{
		rps:    newPlot(t.Name+": answers per second (— successes, - - errors)", "", "per second"),
		lat:    newPlot("latency p99 of each second (— target, - - generator's own delay)", "", "ms (log)"),
		cpu:    newPlot("target CPU", "", "cores"),
		mem:    newPlot("target memory", "seconds (warm-up before 0)", "MiB"),
		latMin: math.Inf(1), xMin: 0, xMax: 1,
	}
	tl.lat.Y.Scale = plot.LogScale{}
	tl.lat.Y.Tick.Marker = msTicks{}
	for i, c := range t.Cells {
		if len(c.Measure) == 0 {
			continue
		}
		label := fmt.Sprintf("trial %d", c.Row.Trial)
		if sc.FindMax {
			label = fmt.Sprintf("trial %d, %s rps", c.Row.Trial, units.Count(float64(c.Row.RequestedRPS)))
		}
		if c.Verdict != "valid" {
			label += " (" + c.Verdict + ")"
		}
		if err := tl.addCell(c, colorOf(i), label); err != nil {
			return nil, err
		}
	}
	if !tl.any {
		return nil, nil
	}
	// A panel as tall as its legend needs (a search's steps are many cells), with room for its
	// title and axis: the legend is drawn inside it.
	legend := tl.rps.Legend.Rectangle(draw.Canvas{})
	svg, err := render(tl.rows(), vg.Points(620), max(vg.Points(150), legend.Size().Y+vg.Points(50)))
	return &chart{Title: t.Name + " timeline", SVG: svg}, err
}

// timelinePanels are a target's timeline chart as its cells are drawn into it: answers, latency,
// and the target's CPU and memory, over one time axis.
type timelinePanels struct {
	rps, lat, cpu, mem *plot.Plot
	any, anyResources  bool
	latMin, xMin, xMax float64
}

// panelLine is a line of a panel.
type panelLine struct {
	p      *plot.Plot
	xys    plotter.XYs
	dashed bool
	label  string
}

// cellLines are one cell's lines, second by second.
type cellLines struct{ ok, bad, p99, own, cores, mib plotter.XYs }

// add puts a phase's seconds, the first at offset, on the lines; length is the phase's length in
// seconds: a warm-up until steady's as taken (a fraction more than whole ones), a measured
// phase's as measuredLength says.
func (l *cellLines) add(tl *timelinePanels, offset, length float64, seconds []timeline.Second) {
	for _, s := range seconds {
		// Only whole seconds of the phase. The one it ended in, and the one after it that holds
		// only the answers still on their way (often one or two), are counted in the file and
		// the cell's percentiles; drawn, each is a drop on the rate lines and, on the p99 line,
		// a few requests' latency standing for a second's.
		if float64(s.Index)+1 > length {
			break
		}
		x := offset + float64(s.Index)
		l.ok = append(l.ok, plotter.XY{X: x, Y: float64(s.Successes)})
		l.bad = append(l.bad, plotter.XY{X: x, Y: float64(s.Errors())})
		if s.P99 > 0 {
			l.p99 = append(l.p99, plotter.XY{X: x, Y: ms(s.P99)})
			tl.latMin = math.Min(tl.latMin, ms(s.P99))
		}
		if s.OwnDelayP99 > 0 {
			l.own = append(l.own, plotter.XY{X: x, Y: ms(s.OwnDelayP99)})
			tl.latMin = math.Min(tl.latMin, ms(s.OwnDelayP99))
		}
		if s.MemoryBytes > 0 {
			l.cores = append(l.cores, plotter.XY{X: x, Y: s.CPUCores})
			l.mib = append(l.mib, plotter.XY{X: x, Y: float64(s.MemoryBytes) / (1 << 20)})
		}
	}
}

// measuredLength is how many seconds a measured phase lasted: as set, or fewer when a find-max
// step ended early. Such a row keeps its whole step (the settings it was run with), but its
// requests over its achieved rate are how long it ran, a whole number of seconds; the seconds
// after hold only the answers still on their way.
func measuredLength(row results.Row, seconds []timeline.Second) float64 {
	length := float64(len(seconds))
	if row.Duration > 0 {
		length = row.Duration.Seconds()
	}
	if row.Requests > 0 && row.AchievedRPS > 0 {
		length = math.Min(length, math.Round(float64(row.Requests)/row.AchievedRPS))
	}
	return length
}

// addCell draws cell c's warm-up and measured phase in col, its label on the answers' line.
func (tl *timelinePanels) addCell(c summary.Cell, col color.Color, label string) error {
	tl.any = true
	warm := float64(len(c.Warmup))
	if w := cmp.Or(c.Row.WarmupTaken, c.Row.Warmup); w > 0 { // taken: a warm-up until steady lasts what it lasts
		warm = w.Seconds()
	}
	var l cellLines
	measured := measuredLength(c.Row, c.Measure)
	l.add(tl, -math.Ceil(warm), warm, c.Warmup)
	l.add(tl, 0, measured, c.Measure)
	tl.xMin, tl.xMax = math.Min(tl.xMin, -math.Ceil(warm)), math.Max(tl.xMax, math.Ceil(measured))
	// Solid: successes, the target's p99, CPU, memory; dashed: errors, the generator's own delay.
	lines := []panelLine{{tl.rps, l.ok, false, label}, {tl.rps, l.bad, true, ""}, {tl.lat, l.p99, false, ""}, {tl.lat, l.own, true, ""}}
	if len(l.mib) > 0 {
		tl.anyResources = true
		lines = append(lines, panelLine{tl.cpu, l.cores, false, ""}, panelLine{tl.mem, l.mib, false, ""})
	}
	for _, ln := range lines {
		if err := addLine(ln.p, ln.xys, col, ln.dashed, ln.label); err != nil {
			return err
		}
	}
	return nil
}

// rows are the chart's panels, one a row, on one time axis: the resources' only when measured.
func (tl *timelinePanels) rows() [][]*plot.Plot {
	if math.IsInf(tl.latMin, 0) {
		// No second had an answer (a target dead from its first step): no latency to draw, and
		// a log scale cannot hold the empty axis's 0.
		tl.lat.Y.Scale, tl.lat.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
	} else {
		tl.lat.Y.Min = math.Max(tl.latMin/2, 0.001)
	}
	panels := []*plot.Plot{tl.rps, tl.lat}
	if tl.anyResources {
		panels = append(panels, tl.cpu, tl.mem)
	} else {
		tl.lat.X.Label.Text = "seconds (warm-up before 0)"
	}
	var rows [][]*plot.Plot
	for _, p := range panels {
		p.Add(phaseLine{})
		// One time axis for every panel, the warm-up's included where a panel has none.
		p.X.Min, p.X.Max = tl.xMin, tl.xMax
		if p != tl.lat {
			p.Y.Min = 0
		}
		rows = append(rows, []*plot.Plot{p})
	}
	return rows
}

// phaseLine marks where the warm-up ends and the measured phase begins: x = 0.
type phaseLine struct{}

func (phaseLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(0)
	if x < c.Min.X || x > c.Max.X {
		return
	}
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
}

func addLine(p *plot.Plot, xys plotter.XYs, col color.Color, dashed bool, legend string) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = col
	l.Width = vg.Points(1)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	p.Add(l)
	if legend != "" {
		p.Legend.Add(legend, l)
	}
	return nil
}

// findMaxChart: latency p99 against the offered rate, every step of every search.
func findMaxChart(sc summary.Scenario) (*chart, error) {
	p := newPlot("Find-max: p99 latency against the offered rate (○ valid step, × invalid; - - a ramp, second by second)", "offered rate (requests / s)", "p99 (ms, log)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = msTicks{}
	p.X.Tick.Marker = countTicks
	n := 0
	for i, t := range sc.Targets {
		trials := map[int]plotter.XYs{}
		var valid, invalid plotter.XYs
		for _, c := range t.Cells {
			if c.Row.LatencyP99 <= 0 {
				continue
			}
			xy := plotter.XY{X: float64(c.Row.RequestedRPS), Y: ms(c.Row.LatencyP99)}
			// A search's steps are a line: each step is a trial of its own.
			line := cmp.Or(c.Row.Search, c.Row.Trial)
			trials[line] = append(trials[line], xy)
			if c.Row.Valid {
				valid = append(valid, xy)
			} else {
				invalid = append(invalid, xy)
			}
		}
		keys := make([]int, 0, len(trials))
		for k := range trials {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for j, k := range keys {
			xys := trials[k]
			slices.SortFunc(xys, func(a, b plotter.XY) int { return int(a.X - b.X) })
			legend := ""
			if j == 0 {
				legend = t.Name
			}
			if err := addLine(p, xys, colorOf(i), false, legend); err != nil {
				return nil, err
			}
			n++
		}
		for _, r := range t.Ramps {
			if err := addLine(p, rampPoints(r.Warmup), colorOf(i), true, ""); err != nil {
				return nil, err
			}
		}
		for _, pts := range []struct {
			xys   plotter.XYs
			shape draw.GlyphDrawer
		}{{valid, draw.RingGlyph{}}, {invalid, draw.CrossGlyph{}}} {
			if len(pts.xys) == 0 {
				continue
			}
			s, err := plotter.NewScatter(pts.xys)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle.Color = colorOf(i)
			s.GlyphStyle.Shape = pts.shape
			s.GlyphStyle.Radius = vg.Points(3)
			p.Add(s)
		}
	}
	if n == 0 {
		return nil, nil
	}
	p.Legend.Left = true
	w, h := vg.Points(620), vg.Points(300)
	legendRoom(p, w, h)
	svg, err := render([][]*plot.Plot{{p}}, w, h)
	return &chart{Title: "find-max latency", SVG: svg}, err
}

// legendRoom lifts the top of p's log Y axis so that its legend, drawn at the top inside the data
// area of a w × h chart, lies above every line: a ramp's p99 climbs to seconds at rates far below
// another target's, where the legend is.
func legendRoom(p *plot.Plot, w, h vg.Length) {
	legend := p.Legend.Rectangle(draw.Canvas{}).Size().Y + 2*p.Legend.Padding
	area := p.DataCanvas(draw.New(vgsvg.New(w, h))).Size().Y
	if p.Y.Min <= 0 || p.Y.Max <= p.Y.Min || area <= 2*legend {
		return
	}
	// The data keep the lower 1 − f of the axis, in log units.
	f := float64(legend / area)
	p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, f/(1-f))
}

// rampPoints are a ramp's seconds as points of the find-max chart: the rate due in each, and its
// p99. Only the ramp's own seconds, while what was due rose: after them come those in which its
// last requests were answered, with little or nothing due.
func rampPoints(seconds []timeline.Second) plotter.XYs {
	var xys plotter.XYs
	for i, s := range seconds {
		if i > 0 && s.Due < seconds[i-1].Due {
			break
		}
		if s.Successes > 0 && s.P99 > 0 {
			xys = append(xys, plotter.XY{X: float64(s.Due), Y: ms(s.P99)})
		}
	}
	return xys
}

// barPanel is a panel of the resources chart: a bar a target, named below it, from 0 up to a
// little above the tallest, so that no bar runs into the panel's top as if cut off.
func barPanel(title string, names []string, vals plotter.Values) (*plot.Plot, error) {
	p := newPlot(title, "", "")
	b, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, err
	}
	b.Color = colorOf(1)
	b.LineStyle.Width = 0
	p.Add(b)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = -0.6
	p.X.Tick.Label.XAlign = draw.XLeft
	p.Y.Min, p.Y.Max = 0, barHeadroom*p.Y.Max
	p.Y.Tick.Marker = countTicks
	return p, nil
}

// barHeadroom is how far a bar panel's axis reaches past its tallest bar.
const barHeadroom = 1.1

// resourcesChart: each target's median CPU and peak memory, and throughput per core and per GiB.
func resourcesChart(sc summary.Scenario) (*chart, error) {
	type metric struct {
		title string
		get   func(summary.Target) *summary.Estimate
	}
	at := ""
	if sc.FindMax {
		at = " at max"
	}
	metrics := []metric{
		{"CPU (cores)" + at, func(t summary.Target) *summary.Estimate { return t.CPUCores }},
		{"peak memory (MiB)" + at, func(t summary.Target) *summary.Estimate { return t.MemoryPeakMiB }},
		{"throughput per core" + at, func(t summary.Target) *summary.Estimate { return t.RPSPerCore }},
		{"throughput per GiB" + at, func(t summary.Target) *summary.Estimate { return t.RPSPerGiB }},
		{"database CPU (cores)" + at, func(t summary.Target) *summary.Estimate { return t.DBCPUCores }},
		{"database peak memory (MiB)" + at, func(t summary.Target) *summary.Estimate { return t.DBMemoryPeakMiB }},
	}
	var row []*plot.Plot
	var counts []int // names in each panel of row
	longest := 0     // the longest name, in characters
	for _, m := range metrics {
		var names []string
		var vals plotter.Values
		for _, t := range sc.Targets {
			if e := m.get(t); e != nil {
				names = append(names, t.Name)
				vals = append(vals, e.Median)
			}
		}
		if len(vals) == 0 {
			continue
		}
		for _, n := range names {
			longest = max(longest, utf8.RuneCountInString(n))
		}
		counts = append(counts, len(names))
		p, err := barPanel(m.title, names, vals)
		if err != nil {
			return nil, err
		}
		row = append(row, p)
	}
	if len(row) == 0 {
		return nil, nil
	}
	width := math.Max(620, float64(200*len(row)))
	height := 260.0
	for i, p := range row {
		// Slanted names need about 40 points each side by side: closer, they overlap (9 targets
		// over three protocols did), so they stand upright, and the panels grow to hold them.
		if width/float64(len(row))/float64(counts[i]) < 40 {
			p.X.Tick.Label.Rotation = -math.Pi / 2
			height = 200 + 5*float64(longest)
		}
	}
	svg, err := render([][]*plot.Plot{row}, vg.Points(width), vg.Points(math.Max(260, height)))
	return &chart{Title: "resources", SVG: svg}, err
}
