package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/overview"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/spf13/pflag"
)

// htmlBeside is --html without a path: the report goes beside the results CSV.
const htmlBeside = "auto"

// addOutputFlags adds run's --format, --html and --quiet.
func addOutputFlags(f *pflag.FlagSet, o *RunOptions) {
	f.StringVar(&o.Format, "format", "table", "what the run prints at its end: "+strings.Join(overview.Formats, ", "))
	f.StringVar(&o.HTML, "html", "", "also write the HTML report: to FILE, or beside the CSV (--html alone)")
	f.Lookup("html").NoOptDefVal = htmlBeside
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress: only the output at the end, warnings and errors")
}

func (o *RunOptions) checkOutputFlags() error {
	if !slices.Contains(overview.Formats, o.Format) {
		return usagef("--format %q: one of %s", o.Format, strings.Join(overview.Formats, ", "))
	}
	return nil
}

// writeOutcome prints what the run answers, as --format asks, and writes --html; then, last,
// that the calibration after the last cell missed its limits, or decided nothing, when so: its
// rows say a miss among others, the run's end says either alone.
func (o *RunOptions) writeOutcome(out *run.Outcome) error {
	if err := o.writeAnswer(out); err != nil {
		return err
	}
	if cal := out.LastCalibrationMissed; cal != "" {
		fmt.Fprintf(o.Streams.ErrOut, "CALIBRATION AFTER THE LAST CELL MISSED ITS LIMITS: %s: %s: run again on a quieter machine\n", cal, run.SuspectSinceLast)
	}
	if why := out.LastCalibrationUndecided; why != "" {
		fmt.Fprintf(o.Streams.ErrOut, "the calibration after the last cell decided nothing: %s: the rows keep the calibration before it\n", why)
	}
	return nil
}

// writeAnswer is writeOutcome's answer: a find-max run's maxima, else the table of its cells and
// a sentence.
func (o *RunOptions) writeAnswer(out *run.Outcome) error {
	if m := out.FindMax; m != nil {
		if len(out.Found) == 0 {
			return nil
		}
		name := out.Plan.Name
		ranked := o.rankedRun(out)
		return o.writeRunOutput(out.Path, func(w io.Writer) error {
			if err := overview.WriteMax(w, name, name+results.FindMaxSuffix, m.SLO, m.Step, m.Search.Resolution, m.Search.LatencyAt, out.Found); err != nil {
				return err
			}
			for _, sc := range summary.FromRows(out.Rows).Scenarios {
				if err := overview.WriteMaxima(w, sc); err != nil {
					return err
				}
			}
			if ranked != "" {
				fmt.Fprintf(w, "\n%s\n", safetext.Terminal(ranked))
			}
			return nil
		}, ranked)
	}
	if err := o.writeRunOutput(out.Path, func(w io.Writer) error { return overview.Write(w, out.Rows) }, ""); err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.ErrOut, "%s; results: %s\n", overview.Summary(out.Rows), out.Path)
	return nil
}

// verdictStreams and verdictFormat place a paired run's verdicts after the run's output: a
// table under the table, markdown under the markdown; beside JSON, whose reader expects one
// document, they go to stderr (iotbench compare --format json gives them as JSON).
func (o *RunOptions) verdictStreams() Streams {
	s := o.Streams
	if o.Format == "json" {
		s.Out = s.ErrOut
	}
	fmt.Fprintln(s.Out)
	return s
}

func (o *RunOptions) verdictFormat() string {
	if o.Format == "markdown" {
		return "markdown"
	}
	return "table"
}

// writeRunOutput prints the run's table (--format table) or its overview as --format asks, and
// writes --html; the overview is built from the files the run left, as `iotbench report` would,
// with note, when there is one, among its notes (what the run did not tell, as a ranked run).
func (o *RunOptions) writeRunOutput(csvPath string, table func(io.Writer) error, note string) error {
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
	if note != "" {
		ov.Notes = append(ov.Notes, note)
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
	if o.History != "" {
		if ov.History, err = writeRunHistoryPage(o.History, path, src.Rows); err != nil {
			return err
		}
	}
	size, err := writeHTMLFile(path, ov, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.ErrOut, "report: %s (%s); open it in a browser, e.g. xdg-open %s\n", path, sizeText(size), path)
	return nil
}
