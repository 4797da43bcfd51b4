package overview

import (
	"html/template"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Trend is a series of a performance history (internal/history) to draw: its points in order,
// the points that were no measurement, and its levels between change points.
type Trend struct {
	Title, YLabel string
	// Points are the usable points (x: their position in the series); Unusable are drawn as
	// crosses where they stood.
	Points, Unusable plotter.XYs
	// Levels are the series' medians between change points; a change point is where one starts.
	Levels []Level
}

// Level is a median from point From to point To (exclusive).
type Level struct {
	From, To float64
	Median   float64
}

// TrendChart draws t with the report's chart code: points joined by a line, unusable points as
// red crosses, each level a grey line, each change point a dashed vertical line.
func TrendChart(t Trend) (template.HTML, error) {
	p := newPlot(t.Title, "point (oldest first)", t.YLabel)
	if len(t.Points) > 0 {
		l, s, err := plotter.NewLinePoints(t.Points)
		if err != nil {
			return "", err
		}
		l.Color, s.Color = colorOf(0), colorOf(0) // blue: red marks what is wrong
		s.Shape, s.Radius = draw.CircleGlyph{}, vg.Points(1.8)
		p.Add(l, s)
	}
	if len(t.Unusable) > 0 {
		s, err := plotter.NewScatter(t.Unusable)
		if err != nil {
			return "", err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}, Shape: draw.CrossGlyph{}, Radius: vg.Points(3)}
		p.Add(s)
		p.Legend.Add("not a measurement (invalid, disturbed, not loaded)", s)
	}
	for i, lv := range t.Levels {
		l, err := plotter.NewLine(plotter.XYs{{X: lv.From, Y: lv.Median}, {X: lv.To - 1, Y: lv.Median}})
		if err != nil {
			return "", err
		}
		l.Color, l.Width = color.Gray{Y: 90}, vg.Points(1.5)
		p.Add(l)
		if i > 0 {
			p.Add(changeLine(lv.From - 0.5))
		}
	}
	return render([][]*plot.Plot{{p}}, vg.Points(760), vg.Points(240))
}

// changeLine marks a change point between two points: x.
type changeLine float64

func (x changeLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	cx := trX(float64(x))
	c.StrokeLine2(draw.LineStyle{Color: color.RGBA{R: 0xcf, G: 0x22, B: 0x2e, A: 0xff}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, cx, c.Min.Y, cx, c.Max.Y)
}
