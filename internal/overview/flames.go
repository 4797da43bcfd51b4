package overview

import (
	"fmt"
	"html/template"
	"time"

	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/profile"
)

// flameFigure is one profile as the report shows it: what was profiled and how, the flame graph,
// and the functions that used the most CPU themselves.
type flameFigure struct {
	Title, Facts string
	SVG          template.HTML
	Top          []flameShare
}

type flameShare struct {
	Function   string
	Self, Incl string
}

// flameTop is how many functions the table beside a flame graph lists.
const flameTop = 10

func newFlameFigure(p profile.Record) flameFigure {
	title := fmt.Sprintf("%s at %d rps, its maximum in search %d", p.Target, p.Rate, p.Search)
	f := flameFigure{Title: title, SVG: p.Stacks.SVG(title)}
	f.Facts = fmt.Sprintf("%d samples at %d Hz over %s, in a container of its own started with the runtimes' profiling options (V8's perf map; the JVM's frame pointers and perf map), after the search: "+
		"it sent %.0f rps, p50 %.2f ms, p99 %.2f ms (the search's own steps are the figures that rank). perf used %.3f cores of the generator's CPUs.",
		p.Stacks.Total, profile.Hz, p.Duration.Round(time.Millisecond), p.Achieved, ms(p.P50), ms(p.P99), p.Cost.Cores())
	if p.Named < p.Processes {
		f.Facts += fmt.Sprintf(" %d of %d processes left no symbol map: their JIT-compiled frames are unnamed (Bun's JavaScriptCore writes none).", p.Processes-p.Named, p.Processes)
	}
	for _, sh := range p.Stacks.Top(flameTop) {
		f.Top = append(f.Top, flameShare{Function: flame.Label(sh.Frame), Self: pctText(sh.Self), Incl: pctText(sh.Total)})
	}
	return f
}

func pctText(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
