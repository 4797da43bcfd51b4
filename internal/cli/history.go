package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/history"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/spf13/cobra"
)

// HistoryOptions are the arguments and flags of `iotbench history add|changes|report`.
type HistoryOptions struct {
	Streams Streams

	// Command is add, changes or report.
	Command string
	Store   string
	Branch  string
	// add
	Files  []string
	Commit string
	// changes, report
	Metrics []string
	Format  string
	Limit   float64
	Alpha   float64
	Window  int
	HTML    string
	// Now stamps the HTML page; tests fix it.
	Now func() time.Time
}

// NewCmdHistory builds `iotbench history` and its commands; runF replaces the behaviour in tests.
func NewCmdHistory(s Streams, runF func(context.Context, *HistoryOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Keep every run in a performance history; find the commits where a series changed; draw it",
		Long: `A performance history keeps every results row of every run (docs/history.md): an SQLite file
by default, or a PostgreSQL database given by URL (postgres://user:password@host/db) for a team.
A series is one scenario, target and variant measured with equal settings on one kind of host;
its points are ordered by started_at within a branch. Invalid, disturbed and never-loaded rows
are stored and marked, never used as points.

  history add       adds results files (a file added twice is one set of points)
  history changes   finds the change points of every series (E-Divisive means on ranks, with a
                    permutation test), and fails (exit 1) when a regression past --limit is in a
                    series' newest window
  history report    draws every series with its levels, change points and unusable rows

run --history STORE adds a run's rows as it goes.`,
		Args: noArgs,
	}
	sub := func(name, use, short, example string, args cobra.PositionalArgs, flags func(*HistoryOptions, *cobra.Command)) *cobra.Command {
		o := &HistoryOptions{Streams: s, Command: name, Now: time.Now}
		c := &cobra.Command{Use: use, Short: short, Long: historyLong[name], Example: example, Args: args,
			RunE: func(c *cobra.Command, args []string) error {
				o.Files = args
				if runF != nil {
					return runF(c.Context(), o)
				}
				return historyRun(c.Context(), o)
			}}
		f := c.Flags()
		f.StringVar(&o.Store, "store", "iotbench-history.db", "the history: an SQLite `FILE` or a postgres:// URL [$IOTBENCH_HISTORY]")
		if env := os.Getenv("IOTBENCH_HISTORY"); env != "" {
			o.Store = env
			f.Lookup("store").DefValue = "$IOTBENCH_HISTORY"
		}
		f.StringVar(&o.Branch, "branch", history.DefaultBranch, "the branch the points are on")
		flags(o, c)
		return c
	}
	detection := func(o *HistoryOptions, c *cobra.Command) {
		f := c.Flags()
		f.StringSliceVar(&o.Metrics, "metric", nil, "only these metrics (default: all), e.g. p99,throughput")
		f.Float64Var(&o.Alpha, "alpha", history.DefaultDetection.Alpha, "significance of a change point")
		f.IntVar(&o.Window, "window", history.DefaultDetection.Window, "points a window of the search holds")
	}
	cmd.AddCommand(
		sub("add", "add RESULTS.csv...", "Add results files to the history",
			"  iotbench history add --store history.db --commit \"$GITHUB_SHA\" results/*.csv",
			func(_ *cobra.Command, args []string) error {
				if len(args) == 0 {
					return usagef("history add takes one or more results files")
				}
				return nil
			},
			func(o *HistoryOptions, c *cobra.Command) {
				c.Flags().StringVar(&o.Commit, "commit", "", "the commit the rows measured (default: each row's git_commit)")
			}),
		sub("changes", "changes", "Find change points; exit 1 on a regression past --limit in the newest window",
			"  iotbench history changes --store history.db --limit 5\n  iotbench history changes --metric p99 --format markdown",
			noArgs, func(o *HistoryOptions, c *cobra.Command) {
				detection(o, c)
				c.Flags().StringVar(&o.Format, "format", "table", "output: "+strings.Join(history.Formats, ", "))
				c.Flags().Float64Var(&o.Limit, "limit", 5, "percent: a regression this large in a newest window fails")
			}),
		sub("report", "report --html FILE", "Draw every series with its change points into an HTML page",
			"  iotbench history report --store history.db --html history.html",
			noArgs, func(o *HistoryOptions, c *cobra.Command) {
				detection(o, c)
				c.Flags().StringVar(&o.HTML, "html", "", "write the page to this file")
			}),
	)
	return cmd
}

// historyLong are the subcommands' long help.
var historyLong = map[string]string{
	"add": `Add results files to the history: each row a point of its series on --branch, at --commit
(default: the row's own git_commit). A row stored already is left as it was, so a file added twice
is one set of points. Invalid, disturbed and never-loaded rows are stored and marked, never used.

Exit status: 0 added; 2 a file that cannot be read, or a bad flag; 3 a store that cannot be opened.`,
	"changes": `Find the change points of every series and metric on --branch: E-Divisive means on ranks,
each split tested against 499 random orders of its values (significant at --alpha), searched in
overlapping windows of --window points (docs/history.md). For each: the commit the new level
starts at and the range it came in (SINCE..COMMIT), the levels before and after (median and 95%
interval), the change in percent, and p.

Exit status: 0 no regression of --limit percent or more starts in a series' newest window (its
last --window points), and every series could be searched; 1 one does; 4 the search cannot
decide: a series with fewer usable points than a change point needs on each side (the others
invalid, disturbed, not steady, still warming up, or on a calibration that missed its limits), or
no point on --branch; 2 a bad flag; 3 a store that cannot be opened. A gate that cannot decide
never passes.`,
	"report": `Draw every series and metric on --branch into one self-contained HTML page: its points,
the level between change points, each change point, and the rows that were no measurement.

Exit status: 0 drawn; 2 a bad flag; 3 a store that cannot be opened, or a page that cannot be written.`,
}

func historyRun(ctx context.Context, o *HistoryOptions) error {
	d := history.DefaultDetection
	d.Alpha, d.Window = o.Alpha, o.Window
	var metrics []results.Metric
	if o.Command != "add" {
		if !(d.Alpha > 0 && d.Alpha < 1) {
			return usagef("--alpha %v: give a level between 0 and 1, e.g. 0.01", d.Alpha)
		}
		if smallest := 1 / float64(d.Permutations+1); d.Alpha < smallest {
			return usagef("--alpha %v: under %.3g, the smallest p-value the permutation test's %d random orders can give, so no change point could ever be found; give %.3g or more", d.Alpha, smallest, d.Permutations, smallest)
		}
		if d.Window < 2*d.MinPoints {
			return usagef("--window %d: give %d points or more", d.Window, 2*d.MinPoints)
		}
		for _, name := range o.Metrics {
			m, ok := results.MetricNamed(name)
			if !ok || !m.OfRows() {
				return usagef("--metric %q: one of %s", name, strings.Join(metricNames(), ", "))
			}
			metrics = append(metrics, m)
		}
	}
	switch o.Command {
	case "changes":
		o.Format = tableFormat(o.Format, o.Streams.ErrOut)
		if !slices.Contains(history.Formats, o.Format) {
			return usagef("--format %q: one of %s", o.Format, strings.Join(history.Formats, ", "))
		}
		if !(o.Limit >= 0) {
			return usagef("--limit %v: give a percent, e.g. 5", o.Limit)
		}
	case "report":
		if o.HTML == "" {
			return usagef("history report draws an HTML page: give --html FILE")
		}
		if err := checkHTMLPath(o.HTML); err != nil {
			return err
		}
	}
	var rows [][]results.Row
	for _, path := range o.Files {
		r, warnings, err := results.ReadFile(path)
		if err != nil {
			return usageError(err)
		}
		for _, w := range warnings {
			fmt.Fprintln(o.Streams.ErrOut, "warning:", w)
		}
		rows = append(rows, r)
	}
	store, err := history.Open(ctx, o.Store)
	if err != nil {
		return err
	}
	defer store.Close()
	if o.Command == "add" {
		for i, path := range o.Files {
			a, err := store.Add(ctx, rows[i], o.Branch, o.Commit, path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			fmt.Fprintf(o.Streams.Out, "%s: %d new point(s) on %s (%d marked unusable), %d already stored\n", path, a.New, o.Branch, a.Unusable, a.Known)
		}
		return nil
	}
	series, err := store.Load(ctx, o.Branch)
	if err != nil {
		return err
	}
	trends := history.Trends(series, metrics, d)
	if o.Command == "report" {
		var buf bytes.Buffer
		if err := history.WriteHTML(&buf, trends, d, store.Where, o.Branch, o.Now()); err != nil {
			return err
		}
		if err := os.WriteFile(o.HTML, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.ErrOut, "%d series drawn in %s\n", len(trends), o.HTML)
		return nil
	}
	undecided := history.Undecided(series, metrics, d, o.Branch)
	if err := history.WriteChanges(o.Streams.Out, trends, undecided, o.Format, d); err != nil {
		return err
	}
	if failing := history.Failing(trends, o.Limit); len(failing) > 0 {
		return exitcode.With(exitcode.Invalid, fmt.Errorf("%d regression(s) of %g%% or more in the newest window of their series", len(failing), o.Limit))
	}
	if len(undecided) > 0 {
		return exitcode.With(exitcode.Inconclusive, fmt.Errorf("inconclusive: %d UNDECIDED line(s) say what the search cannot judge, and why; a gate that cannot decide does not pass", len(undecided)))
	}
	return nil
}

func metricNames() []string {
	var names []string
	for _, m := range results.RowMetrics() {
		names = append(names, m.Name)
	}
	return names
}

// writeRunHistoryPage draws the history of a run's series beside its HTML report (run --history
// --html) and returns the page's address relative to the report.
func writeRunHistoryPage(store, reportPath string, rows []results.Row) (string, error) {
	ctx := context.Background()
	s, err := history.Open(ctx, store)
	if err != nil {
		return "", err
	}
	defer s.Close()
	series, err := s.Load(ctx, history.DefaultBranch)
	if err != nil {
		return "", err
	}
	d := history.DefaultDetection
	var b bytes.Buffer
	if err := history.WriteHTML(&b, history.Trends(history.Of(series, rows), nil, d), d, s.Where, history.DefaultBranch, time.Now()); err != nil {
		return "", err
	}
	path := strings.TrimSuffix(reportPath, filepath.Ext(reportPath)) + ".history.html"
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return "", err
	}
	return filepath.Base(path), nil
}
