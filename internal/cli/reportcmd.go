package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/overview"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/spf13/cobra"
)

// ReportOptions are the arguments and flags of `iotbench report`.
type ReportOptions struct {
	Streams Streams

	Files  []string
	HTML   string
	Format string
	// Now stamps the HTML page; tests fix it.
	Now func() time.Time
}

// NewCmdReport builds `iotbench report`; runF replaces the behaviour in tests.
func NewCmdReport(s Streams, runF func(*ReportOptions) error) *cobra.Command {
	o := &ReportOptions{Streams: s, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "report RESULTS.csv [MORE.csv...]",
		Short: "Tables, markdown, JSON or a self-contained HTML report of one or more results files",
		Long: `Report on results files: per scenario and target, the medians of the valid trials with their
95% intervals, the latency distribution of the trials pooled (their HDR histograms merged, never
their percentiles averaged; the histograms lie beside each file, docs/timeline.md), every cell's
verdict with its reason, and the settings, fingerprint and host.

--format table is the terminal table iotbench run prints; markdown is ready to paste into a pull
request; json is a document of a documented, versioned schema (docs/report.md).

--html writes one HTML file that opens with no network (styles and charts inline, no script): the
throughput of each target with its 95% interval, the latency percentile spectrum of the pooled
histograms, each cell's timeline second by second (answers, errors, p99, the generator's own
delay, CPU, memory), find-max's latency against offered rate, and CPU and memory per target.

Exit status: 0 reported; 2 a file that cannot be read, or a bad flag.`,
		Example: `  iotbench report results/20261123T181500Z.csv --html report.html
  iotbench report --format markdown base.csv candidate.csv
  iotbench report --format json results/*.csv | jq '.scenarios[].targets[] | {name, p99: .pooled_latency.p99_ms}'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report takes one or more results files (results/<time>.csv)")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			o.Files = args
			if runF != nil {
				return runF(o)
			}
			return runReport(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.HTML, "html", "", "also write the HTML report to this file")
	f.StringVar(&o.Format, "format", "table", "output: "+strings.Join(overview.Formats, ", "))
	return cmd
}

func runReport(o *ReportOptions) error {
	if !slices.Contains(overview.Formats, o.Format) {
		return usagef("--format %q: one of %s", o.Format, strings.Join(overview.Formats, ", "))
	}
	if err := checkHTMLPath(o.HTML); err != nil {
		return err
	}
	var sources []summary.Source
	for _, path := range o.Files {
		src, err := summary.Load(path)
		if err != nil {
			return usageError(err)
		}
		if len(src.Rows) == 0 {
			return usagef("%s has no rows: nothing to report", path)
		}
		sources = append(sources, src)
	}
	ov, err := summary.Build(sources)
	if err != nil {
		return usageError(err)
	}
	if err := writeOverview(o.Streams.Out, o.Streams.ErrOut, ov, o.Format); err != nil {
		return err
	}
	if o.HTML != "" {
		size, err := writeHTMLFile(o.HTML, ov, o.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.ErrOut, "report: %s (%s)\n", o.HTML, sizeText(size))
	}
	return nil
}

// writeOverview writes ov in format to out; notes go to errOut with the table, inside the
// document with markdown and JSON.
func writeOverview(out, errOut io.Writer, ov *summary.Overview, format string) error {
	switch format {
	case "markdown":
		return overview.WriteMarkdown(out, ov)
	case "json":
		return overview.WriteJSON(out, ov)
	}
	if err := overview.WriteTable(out, ov); err != nil {
		return err
	}
	for _, n := range ov.Notes {
		fmt.Fprintln(errOut, "note:", n)
	}
	return nil
}

// writeHTMLFile writes the HTML report to path and returns its size.
func writeHTMLFile(path string, ov *summary.Overview, now time.Time) (int, error) {
	var b bytes.Buffer
	if err := overview.WriteHTML(&b, ov, now); err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return 0, err
	}
	return b.Len(), nil
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)/1024)
}

// checkHTMLPath refuses an --html path that is no .html (or .htm) file: `report --html a.csv
// b.csv` takes a.csv for the page's path, and writing there would destroy a result (or, for
// history report, the history itself).
func checkHTMLPath(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); path != "" && ext != ".html" && ext != ".htm" {
		return usagef("--html %s: give the HTML file to write, ending in .html (e.g. --html report.html); nothing was written, so that no results file is overwritten", path)
	}
	return nil
}
