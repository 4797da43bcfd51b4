package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/overview"
	"github.com/iotbench/iotbench/internal/progress"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/spf13/pflag"
)

// htmlBeside is --html without a path: the report goes beside the results CSV.
const htmlBeside = "auto"

// addOutputFlags adds run's --format, --html and --quiet.
func addOutputFlags(f *pflag.FlagSet, o *RunOptions) {
	f.StringVar(&o.Format, "format", "table", "what the run prints at its end: "+strings.Join(overview.Formats, ", "))
	f.StringVar(&o.HTML, "html", "", "also write the HTML report: to this file, or alone (--html) beside the results CSV as <time>.html")
	f.Lookup("html").NoOptDefVal = htmlBeside
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress while running: only the table (or --format) at the end, warnings and errors")
}

func (o *RunOptions) checkOutputFlags() error {
	if !slices.Contains(overview.Formats, o.Format) {
		return usagef("--format %q: one of %s", o.Format, strings.Join(overview.Formats, ", "))
	}
	return nil
}

// progressOutput is where the run's log lines go and who hears its status: a status line on a
// terminal, plain lines elsewhere, nothing with --quiet. done takes the status line away.
func (o *RunOptions) progressOutput() (log io.Writer, status bench.Status, done func()) {
	switch {
	case o.Quiet:
		return io.Discard, nil, func() {}
	case o.Streams.ErrWidth != nil:
		l := progress.New(o.Streams.ErrOut, o.Streams.ErrWidth)
		return l, l, l.Close
	}
	return o.Streams.ErrOut, nil, func() {}
}

// runFiles opens the run's timeline file beside its results CSV and returns what keeps each
// measured phase's timeline and histograms (docs/timeline.md).
func runFiles(csvPath string) (func(results.Row, bench.Detail) error, func(), error) {
	tw, err := timeline.Append(timeline.Path(csvPath))
	if err != nil {
		return nil, nil, err
	}
	keep := func(row results.Row, d bench.Detail) error {
		if err := tw.Write(d.Cell); err != nil {
			return err
		}
		return timeline.WriteHistograms(timeline.HistogramBase(csvPath, d.Cell.Key), d.Cell, row.StartedAt, row.Warmup, d.Latencies)
	}
	return keep, func() { tw.Close() }, nil
}

// writeRunOutput prints the run's table (--format table) or its overview as --format asks, and
// writes --html; the overview is built from the files the run left, as `iotbench report` would,
// and completed by what the run knows beyond them (tune: a search's SLO).
func (o *RunOptions) writeRunOutput(csvPath string, table func(io.Writer) error, tune ...func(*summary.Overview)) error {
	if o.Format == "table" {
		if err := table(o.Streams.Out); err != nil {
			return err
		}
	}
	if o.Format == "table" && o.HTML == "" {
		return nil
	}
	src, err := summary.Load(csvPath)
	if err != nil {
		return err
	}
	ov, err := summary.Build([]summary.Source{src})
	if err != nil {
		return err
	}
	for _, f := range tune {
		f(ov)
	}
	if o.Format != "table" {
		if err := writeOverview(o.Streams.Out, o.Streams.ErrOut, ov, o.Format); err != nil {
			return err
		}
	}
	if o.HTML == "" {
		return nil
	}
	path := o.HTML
	if path == htmlBeside {
		path = strings.TrimSuffix(csvPath, ".csv") + ".html"
	}
	size, err := writeHTMLFile(path, ov, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.ErrOut, "report: %s (%s); open it in a browser, e.g. xdg-open %s\n", path, sizeText(size), path)
	return nil
}
