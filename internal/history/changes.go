package history

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
)

// Change is a change point of a series' metric: where its new level starts.
type Change struct {
	Series Key    `json:"-"`
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// Commit is the first point's on the new level; Since is the last on the old one: the
	// change came in after Since, up to and including Commit (git's Since..Commit).
	Commit string    `json:"commit"`
	Since  string    `json:"since"`
	At     time.Time `json:"started_at"`
	// Index is the first point of the new level among the series' usable points.
	Index         int   `json:"index"`
	Before, After Level `json:"-"`
	// Percent is the change of the median, after against before.
	Percent float64 `json:"percent"`
	P       float64 `json:"p"`
	// Regression: the metric got worse.
	Regression bool `json:"regression"`
	// Newest: the change is in the newest window of the series (what a CI job gates on).
	Newest bool `json:"newest"`
}

// Trend is one metric of one series: its usable points and their change points.
type Trend struct {
	Series Key
	Metric results.Metric
	Points []Point // the usable points that have the metric
	Values []float64
	// Pos are the Points' positions among all the series' points; UnusablePos the Unusable's.
	Pos, UnusablePos []int
	Changes          []Change
	// Unusable are the series' other points (invalid, disturbed, not loaded): drawn, not used.
	Unusable []Point
}

// Trends finds the change points of every series' metrics (all of results.RowMetrics when
// metrics is empty); a series with no usable value of a metric has no trend of it.
func Trends(series []Series, metrics []results.Metric, d Detection) []Trend {
	if len(metrics) == 0 {
		metrics = results.RowMetrics()
	}
	var out []Trend
	for _, s := range series {
		for _, m := range metrics {
			if t, ok := trendOf(s, m, d); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

func trendOf(s Series, m results.Metric, d Detection) (Trend, bool) {
	t := Trend{Series: s.Key, Metric: m}
	for i, p := range s.Points {
		v, ok := p.Values[m.Name]
		switch {
		case !p.Usable():
			t.Unusable, t.UnusablePos = append(t.Unusable, p), append(t.UnusablePos, i)
		case ok:
			t.Points, t.Values, t.Pos = append(t.Points, p), append(t.Values, v), append(t.Pos, i)
		}
	}
	if len(t.Points) == 0 {
		return t, false
	}
	h := fnv.New64a()
	h.Write([]byte(s.Key.ID() + m.Name))
	splits := d.Detect(t.Values, h.Sum64())
	n := len(t.Values)
	for i, sp := range splits {
		from, to := 0, n
		if i > 0 {
			from = splits[i-1].Index
		}
		if i+1 < len(splits) {
			to = splits[i+1].Index
		}
		c := Change{Series: s.Key, Metric: m.Name, Unit: m.Unit, Index: sp.Index, P: sp.P,
			Commit: t.Points[sp.Index].Commit, Since: t.Points[sp.Index-1].Commit, At: t.Points[sp.Index].StartedAt,
			Before: levelOf(t.Values[from:sp.Index]), After: levelOf(t.Values[sp.Index:to]),
			Newest: sp.Index >= n-max(d.Window, 2*d.MinPoints)}
		if c.Before.Median != 0 {
			c.Percent = 100 * (c.After.Median - c.Before.Median) / math.Abs(c.Before.Median)
		}
		c.Regression = (c.After.Median > c.Before.Median) != m.HigherIsBetter && c.After.Median != c.Before.Median
		t.Changes = append(t.Changes, c)
	}
	return t, true
}

// Failing are the changes of trends in their newest window that regress by limit percent or more.
func Failing(trends []Trend, limit float64) []Change {
	var out []Change
	for _, t := range trends {
		for _, c := range t.Changes {
			if c.Newest && c.Regression && math.Abs(c.Percent) >= limit {
				out = append(out, c)
			}
		}
	}
	return out
}

// Undecided are the series on branch whose change points the search cannot find, one line each
// naming the series, the metrics and why: fewer usable points than a change point needs on its two
// sides (the others invalid, disturbed, on a calibration that missed its limits, …), or no series
// at all. A gate that cannot decide never passes: `history changes` exits 4 on any of these.
// Metrics are all of results.RowMetrics when empty; an optional metric no point records is no
// reason.
func Undecided(series []Series, metrics []results.Metric, d Detection, branch string) []string {
	if len(series) == 0 {
		return []string{fmt.Sprintf("no point on branch %s: nothing to judge", branch)}
	}
	if len(metrics) == 0 {
		metrics = results.RowMetrics()
	}
	need := 2 * d.MinPoints
	var out []string
	for _, s := range series {
		var few []string
		usable := 0
		for _, m := range metrics {
			n, recorded := 0, !m.Optional
			for _, p := range s.Points {
				_, ok := p.Values[m.Name]
				recorded = recorded || ok
				if ok && p.Usable() {
					n++
				}
			}
			if recorded && n < need {
				few = append(few, m.Name)
				usable = max(usable, n)
			}
		}
		if len(few) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %d usable point(s) of %d%s: a change point needs %d on each side, so none can be found: no verdict of %s",
			s.Key, usable, len(s.Points), unusableText(s.Points), d.MinPoints, strings.Join(few, ", ")))
	}
	return out
}

// unusableText counts the points that are no measurement by verdict: " (2 invalid, 1
// calibration-missed)"; empty when there are none.
func unusableText(points []Point) string {
	counts := map[string]int{}
	for _, p := range points {
		if !p.Usable() {
			counts[p.Verdict]++
		}
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Formats are the outputs of WriteChanges.
var Formats = []string{"table", "markdown", "json"}

// WriteChanges writes the change points of trends in format (one of Formats), and the lines of
// Undecided.
func WriteChanges(w io.Writer, trends []Trend, undecided []string, format string, d Detection) error {
	var all []Change
	points := 0
	for _, t := range trends {
		all = append(all, t.Changes...)
		points = max(points, len(t.Points))
	}
	switch format {
	case "json":
		type jsonChange struct {
			Change
			Testbed  string    `json:"testbed"`
			Scenario string    `json:"scenario"`
			Target   string    `json:"target"`
			Variant  string    `json:"variant,omitempty"`
			Settings string    `json:"settings"`
			Before   jsonLevel `json:"before"`
			After    jsonLevel `json:"after"`
		}
		out := []jsonChange{}
		for _, c := range all {
			k := c.Series
			out = append(out, jsonChange{c, k.Testbed, k.Scenario, k.Target, k.Variant, k.Settings, jsonLevelOf(c.Before), jsonLevelOf(c.After)})
		}
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(map[string]any{"alpha": d.Alpha, "window": d.Window, "series": len(trends), "changes": out, "undecided": append([]string{}, undecided...)})
	case "markdown":
		fmt.Fprintf(w, "### Change points\n\n%d series, significance %g, windows of %d points.\n\n", len(trends), d.Alpha, d.Window)
		if len(all) == 0 {
			fmt.Fprintln(w, "No change point.")
		} else {
			fmt.Fprintln(w, "| series | metric | commits | before | after | change | p |")
			fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
			for _, c := range all {
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.3f |\n", safetext.Markdown(c.Series.String()), c.Metric, safetext.MarkdownCode(short(c.Since)+".."+short(c.Commit)),
					levelText(c.Before, c.Unit), levelText(c.After, c.Unit), changeText(c), c.P)
			}
		}
		if len(undecided) > 0 {
			fmt.Fprintln(w, "\n**Undecided** (no verdict, so no pass):")
			for _, u := range undecided {
				fmt.Fprintf(w, "- %s\n", safetext.Markdown(u))
			}
		}
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintf(w, "no change point in %d series (significance %g, windows of %d points)\n", len(trends), d.Alpha, d.Window)
	}
	for _, c := range all {
		fmt.Fprintf(w, "%s, %s: %s from %s (came in %s..%s): %s → %s, p = %.3f\n", safetext.Terminal(c.Series.String()), c.Metric, changeText(c), safetext.Terminal(short(c.Commit)),
			safetext.Terminal(short(c.Since)), safetext.Terminal(short(c.Commit)), levelText(c.Before, c.Unit), levelText(c.After, c.Unit), c.P)
	}
	for _, u := range undecided {
		fmt.Fprintf(w, "UNDECIDED %s\n", safetext.Terminal(u))
	}
	return nil
}

type jsonLevel struct {
	N      int      `json:"n"`
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
}

// jsonLevelOf is l with an unknown bound as null (JSON has no infinity).
func jsonLevelOf(l Level) jsonLevel {
	j := jsonLevel{N: l.N, Median: l.Median}
	if !math.IsInf(l.Lo, 0) {
		j.Lo, j.Hi = &l.Lo, &l.Hi
	}
	return j
}

func changeText(c Change) string {
	word := "improved"
	if c.Regression {
		word = "regressed"
	}
	return fmt.Sprintf("%s %+.1f%%", word, c.Percent)
}

func levelText(l Level, unit string) string {
	if math.IsInf(l.Lo, 0) {
		return fmt.Sprintf("%.4g %s (n=%d)", l.Median, unit, l.N)
	}
	return fmt.Sprintf("%.4g %s [%.4g, %.4g] (n=%d)", l.Median, unit, l.Lo, l.Hi, l.N)
}

// short is a commit as git abbreviates it; "?" when unknown.
func short(commit string) string {
	switch {
	case commit == "":
		return "?"
	case len(commit) > 12:
		return commit[:12]
	}
	return commit
}
