package history

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/iotbench/iotbench/internal/results"
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

// Formats are the outputs of WriteChanges.
var Formats = []string{"table", "markdown", "json"}

// WriteChanges writes the change points of trends in format (one of Formats).
func WriteChanges(w io.Writer, trends []Trend, format string, d Detection) error {
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
		return e.Encode(map[string]any{"alpha": d.Alpha, "window": d.Window, "series": len(trends), "changes": out})
	case "markdown":
		fmt.Fprintf(w, "### Change points\n\n%d series, significance %g, windows of %d points.\n\n", len(trends), d.Alpha, d.Window)
		if len(all) == 0 {
			fmt.Fprintln(w, "No change point.")
			return nil
		}
		fmt.Fprintln(w, "| series | metric | commits | before | after | change | p |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
		for _, c := range all {
			fmt.Fprintf(w, "| %s | %s | `%s..%s` | %s | %s | %s | %.3f |\n", mdEscape(c.Series.String()), c.Metric, inCode(short(c.Since)), inCode(short(c.Commit)),
				levelText(c.Before, c.Unit), levelText(c.After, c.Unit), changeText(c), c.P)
		}
		return nil
	}
	if len(all) == 0 {
		_, err := fmt.Fprintf(w, "no change point in %d series (significance %g, windows of %d points)\n", len(trends), d.Alpha, d.Window)
		return err
	}
	for _, c := range all {
		fmt.Fprintf(w, "%s, %s: %s from %s (came in %s..%s): %s → %s, p = %.3f\n", printable(c.Series.String()), c.Metric, changeText(c), printable(short(c.Commit)),
			printable(short(c.Since)), printable(short(c.Commit)), levelText(c.Before, c.Unit), levelText(c.After, c.Unit), c.P)
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

// printable is text from a results file with its control codes shown as '?', so that it cannot
// move a terminal's cursor or colour what follows.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// inCode is text for a code span in a table cell: only a backtick or a pipe can break out.
func inCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(printable(s))
}

// mdEscape keeps text from the results (names) from being read as markdown or HTML.
func mdEscape(s string) string {
	s = printable(s)
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "`", "'", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`)
	return r.Replace(s)
}
