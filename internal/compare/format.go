package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/stats"
	"github.com/iotbench/iotbench/internal/texttab"
)

// Formats are the output formats of Write.
var Formats = []string{"table", "markdown", "csv", "json"}

// Write renders r in format. table and markdown carry the notes under the table; csv is the table
// alone (the caller shows Notes elsewhere); json carries them in its "notes" field.
func Write(w io.Writer, r Result, format string) error {
	switch format {
	case "table":
		return writeText(w, r)
	case "markdown":
		return writeMarkdown(w, r)
	case "csv":
		return writeCSV(w, r)
	case "json":
		return writeJSON(w, r)
	}
	return fmt.Errorf("unknown format %q (formats: %s)", format, strings.Join(Formats, ", "))
}

var tableHeader = []string{"cell", "metric", "old", "new", "change", "p"}

// tableRows are the cells of the text and markdown tables.
func tableRows(r Result) [][]string {
	var rows [][]string
	for _, c := range r.Cells {
		name := c.Name()
		if len(c.Mismatches) > 0 && !c.Refused {
			name += " (≠)"
		}
		if len(c.Changes) == 0 {
			if !c.Refused {
				rows = append(rows, []string{name, "—", trialsText(c.OldValid, c.OldTrials), trialsText(c.NewValid, c.NewTrials), "", ""})
			}
			continue
		}
		for i, ch := range c.Changes {
			cell := ""
			if i == 0 {
				cell = name
			}
			change := changeText(ch)
			if ch.Failed != nil {
				change += " FAIL"
			}
			rows = append(rows, []string{cell, ch.Metric.Name + " (" + ch.Metric.Unit + ")",
				sideText(ch.Old, ch.OldRange, ch.Metric.Unit), sideText(ch.New, ch.NewRange, ch.Metric.Unit), change, pText(ch.Comparison)})
		}
	}
	return rows
}

func trialsText(valid, all int) string { return fmt.Sprintf("%d/%d valid trials", valid, all) }

// spans says a range holds more than one value.
func spans(r *[2]float64) bool { return r != nil && r[0] != r[1] }

// sideText is a side's median with its interval, or with the range of its values when it has
// no interval and they were kept (a search's maxima).
func sideText(s stats.Summary, values *[2]float64, unit string) string {
	switch {
	case values == nil:
		return summaryText(s, unit)
	case values[0] == values[1]:
		return formatValue(s.Median, unit)
	}
	return fmt.Sprintf("%s [%s–%s]", formatValue(s.Median, unit), formatValue(values[0], unit), formatValue(values[1], unit))
}

func summaryText(s stats.Summary, unit string) string {
	return formatValue(s.Median, unit) + " " + s.PlusMinus()
}

func changeText(ch Change) string {
	switch {
	case !ch.Significant():
		return "~"
	case math.IsNaN(ch.Percent):
		return "?"
	}
	return formatPercent(ch.Percent)
}

func formatPercent(p float64) string { return fmt.Sprintf("%+.2f%%", p) }

func pText(c stats.Comparison) string {
	return fmt.Sprintf("p=%.3f n=%d+%d", c.P, c.N1, c.N2)
}

// formatValue writes a figure with about three significant digits, as the run table does.
func formatValue(v float64, unit string) string {
	switch {
	case unit == "%":
		return strconv.FormatFloat(v, 'f', 2, 64)
	case unit == "rps" || math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Notes are what the table cannot say: warnings first, then the gate's verdict.
func (r Result) Notes() []string {
	var notes []string
	var cannot, searches []string
	infinite, ranges := false, false
	for _, c := range r.Cells {
		if len(c.Changes) == 0 {
			continue
		}
		if c.Search {
			searches = append(searches, fmt.Sprintf("%s (%d+%d)", c.Name(), c.OldValid, c.NewValid))
		} else if !c.Changes[0].Comparison.CanDiffer() {
			cannot = append(cannot, fmt.Sprintf("%s (%d+%d)", c.Name(), c.OldValid, c.NewValid))
		}
		for _, ch := range c.Changes {
			if ch.OldRange != nil || ch.NewRange != nil {
				ranges = ranges || spans(ch.OldRange) || spans(ch.NewRange)
				continue
			}
			infinite = infinite || !ch.Old.Finite() || !ch.New.Finite()
		}
	}
	if len(cannot) > 0 {
		notes = append(notes, fmt.Sprintf("WARNING: no difference can be significant for %s valid trials: the Mann–Whitney test needs %d or more valid trials on each side to reach p < %g; nothing here is a measured change (run with --trials %d or more)",
			strings.Join(cannot, ", "), stats.TrialsToDiffer(r.Alpha), r.Alpha, max(5, stats.TrialsToDiffer(r.Alpha))))
	}
	if infinite {
		notes = append(notes, fmt.Sprintf("±∞: with fewer than %d valid trials the median has no %.0f%% confidence interval", stats.MinTrialsForCI, 100*stats.Confidence))
	}
	if len(searches) > 0 {
		notes = append(notes, fmt.Sprintf("max: --find-max cells %s are compared on the maxima of their searches (those that found one), with the Mann–Whitney test of any metric; it needs %d searches a side to reach p < %g, and under %d a side a median has no %.0f%% interval",
			strings.Join(searches, ", "), stats.TrialsToDiffer(r.Alpha), r.Alpha, stats.MinTrialsForCI, 100*stats.Confidence))
	}
	if ranges {
		notes = append(notes, "[least–greatest]: too few searches for an interval, the range of their maxima instead")
	}
	for _, c := range r.Cells {
		for _, side := range []struct {
			file          string
			valid, trials int
			left          map[string]int
		}{{r.OldFile, c.OldValid, c.OldTrials, c.LeftOld}, {r.NewFile, c.NewValid, c.NewTrials, c.LeftNew}} {
			left := side.left
			what := "valid trials"
			if c.Search {
				what = "maxima"
			}
			if n := leftOutNote(c.Name(), what, "of "+side.file, left); n != "" {
				notes = append(notes, n)
			}
			if invalid := side.trials - side.valid - sum(left); invalid > 0 && c.Search {
				notes = append(notes, fmt.Sprintf("%s: %d of %d searches in %s found no maximum; the maxima are those of the others", c.Name(), invalid, side.trials, side.file))
			} else if invalid > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d of %d trials in %s are invalid; statistics use the valid ones only", c.Name(), invalid, side.trials, side.file))
			}
		}
		if c.Refused {
			var fields, allow []string
			for _, m := range c.Mismatches {
				fields = append(fields, fmt.Sprintf("%s differs (%s in %s, %s in %s)", m.Field, short(m.Old), r.OldFile, short(m.New), r.NewFile))
				allow = append(allow, m.Field)
			}
			notes = append(notes, fmt.Sprintf("REFUSED %s: %s. Rows measured differently are not compared: rerun with the same settings, or pass --allow-mismatch=%s to compare anyway",
				c.Name(), strings.Join(fields, "; "), strings.Join(allow, ",")))
		} else if len(c.Mismatches) > 0 {
			var fields []string
			for _, m := range c.Mismatches {
				fields = append(fields, fmt.Sprintf("%s (%s → %s)", m.Field, short(m.Old), short(m.New)))
			}
			notes = append(notes, fmt.Sprintf("%s (≠) is compared although its rows differ in %s", c.Name(), strings.Join(fields, ", ")))
		}
	}
	if len(r.OnlyOld) > 0 {
		notes = append(notes, fmt.Sprintf("only in %s: %s", r.OldFile, strings.Join(r.OnlyOld, ", ")))
	}
	if len(r.OnlyNew) > 0 {
		notes = append(notes, fmt.Sprintf("only in %s: %s", r.NewFile, strings.Join(r.OnlyNew, ", ")))
	}
	if len(r.Gates) > 0 {
		failures, undecided := r.Failures(), r.Undecided()
		for _, f := range failures {
			notes = append(notes, "FAIL "+f)
		}
		for _, u := range undecided {
			notes = append(notes, "UNDECIDED "+u)
		}
		switch {
		case len(failures) == 0 && len(undecided) > 0:
			notes = append(notes, fmt.Sprintf("gate %s: inconclusive (%d verdict(s) it could not give; a gate that cannot decide does not pass)", GatesText(r.Gates), len(undecided)))
		case len(failures) == 0:
			notes = append(notes, "gate "+GatesText(r.Gates)+": passed (no significant change past a limit)")
		}
	}
	return notes
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// GatesText is gates as --fail-on takes them: "p99:+10%,throughput:-5%".
func GatesText(gates []Gate) string {
	var s []string
	for _, g := range gates {
		s = append(s, g.String())
	}
	return strings.Join(s, ",")
}

// short cuts long values (image ids) to what tells them apart in a message. The values come from
// the files: their control codes are shown, not obeyed, wherever the notes are printed.
func short(v string) string {
	if v == "" {
		return "(none)"
	}
	v = safetext.Terminal(v)
	if len(v) > 22 {
		cut := 19
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut-- // not inside a character
		}
		return v[:cut] + "…"
	}
	return v
}

func heading(r Result) string {
	return fmt.Sprintf("old %s, new %s: median ± 95%% confidence interval of the valid trials; ~ no significant difference (Mann–Whitney, alpha %g) or a change under the %g%% noise threshold", r.OldFile, r.NewFile, r.Alpha, r.NoisePct)
}

func writeText(w io.Writer, r Result) error {
	fmt.Fprintln(w, safetext.Terminal(heading(r)))
	if rows := tableRows(r); len(rows) > 0 {
		t := texttab.New(w, tableHeader, texttab.Layout{Left: []int{0, 1, 5}})
		for _, row := range rows {
			if err := t.Append(texttab.Row(row)...); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	for _, n := range r.Notes() {
		fmt.Fprintf(w, "  • %s\n", safetext.Terminal(n)) // notes quote the files' values
	}
	return nil
}

func writeMarkdown(w io.Writer, r Result) error {
	h := r
	h.OldFile, h.NewFile = safetext.Markdown(r.OldFile), safetext.Markdown(r.NewFile)
	fmt.Fprintf(w, "**iotbench compare**: %s\n\n", heading(h))
	if rows := tableRows(r); len(rows) > 0 {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(tableHeader, " | "), strings.Repeat(" --- |", len(tableHeader)))
		for _, row := range rows {
			for i := range row {
				if i == 0 {
					row[i] = safetext.Markdown(row[i]) // the cell's name, from the files
				} else {
					row[i] = strings.ReplaceAll(row[i], "|", `\|`)
				}
				if strings.HasSuffix(row[i], " FAIL") {
					row[i] = "**" + row[i] + "**"
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes() {
		fmt.Fprintf(w, "- %s\n", safetext.Markdown(n)) // notes quote the files' values
	}
	return nil
}

// csvHeader is the layout of --format csv: one line per (cell, metric); an interval bound is
// empty when infinite, change_pct when the old median is 0.
var csvHeader = []string{"scenario", "target", "metric", "unit", "old_median", "old_lo", "old_hi", "old_n",
	"new_median", "new_lo", "new_hi", "new_n", "change_pct", "p_value", "significant", "within_noise", "gate_failed", "mismatch"}

func writeCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	num := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, c := range r.Cells {
		var mism []string
		for _, m := range c.Mismatches {
			mism = append(mism, m.Field)
		}
		for _, ch := range c.Changes {
			failed := ""
			if ch.Failed != nil {
				failed = ch.Failed.String()
			}
			cw.Write([]string{c.Scenario, c.Target, ch.Metric.Name, ch.Metric.Unit,
				num(ch.Old.Median), num(ch.Old.Lo), num(ch.Old.Hi), strconv.Itoa(ch.Old.N),
				num(ch.New.Median), num(ch.New.Lo), num(ch.New.Hi), strconv.Itoa(ch.New.N),
				num(ch.Percent), num(ch.Comparison.P), strconv.FormatBool(ch.Significant()), strconv.FormatBool(ch.WithinNoise), failed, strings.Join(mism, " ")})
		}
	}
	cw.Flush()
	return cw.Error()
}

type jsonSummary struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"` // null when infinite
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
	// Range is the least and greatest value where there is no interval (a search's maxima).
	Range *[2]float64 `json:"range,omitempty"`
}

type jsonChange struct {
	Metric      string      `json:"metric"`
	Unit        string      `json:"unit"`
	Old         jsonSummary `json:"old"`
	New         jsonSummary `json:"new"`
	ChangePct   *float64    `json:"change_pct"`
	P           float64     `json:"p"`
	Significant bool        `json:"significant"`
	WithinNoise bool        `json:"within_noise"`
	GateFailed  string      `json:"gate_failed,omitempty"`
}

type jsonCell struct {
	Scenario   string     `json:"scenario"`
	Target     string     `json:"target"`
	OldTrials  int        `json:"old_trials"`
	OldValid   int        `json:"old_valid"`
	NewTrials  int        `json:"new_trials"`
	NewValid   int        `json:"new_valid"`
	Mismatches []Mismatch `json:"mismatches"`
	Refused    bool       `json:"refused"`
	// FindMax: trials count searches, valid ones those that found a maximum.
	FindMax bool         `json:"find_max,omitempty"`
	Changes []jsonChange `json:"changes"`
}

func writeJSON(w io.Writer, r Result) error {
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	sum := func(s stats.Summary, r *[2]float64) jsonSummary {
		return jsonSummary{Median: s.Median, Lo: finite(s.Lo), Hi: finite(s.Hi), N: s.N, Range: r}
	}
	out := struct {
		Old     string     `json:"old"`
		New     string     `json:"new"`
		Alpha   float64    `json:"alpha"`
		Noise   float64    `json:"noise_pct"`
		Gates   []string   `json:"gates"`
		Cells   []jsonCell `json:"cells"`
		OnlyOld []string   `json:"only_old"`
		OnlyNew []string   `json:"only_new"`
		Failed  []string   `json:"failed"`
		// Undecided: the gate's verdicts it could not give (exit 4 when nothing failed).
		Undecided []string `json:"undecided"`
		Notes     []string `json:"notes"`
	}{Old: r.OldFile, New: r.NewFile, Alpha: r.Alpha, Noise: r.NoisePct, Gates: []string{}, Cells: []jsonCell{},
		OnlyOld: nonNil(r.OnlyOld), OnlyNew: nonNil(r.OnlyNew), Failed: nonNil(r.Failures()), Undecided: nonNil(r.Undecided()), Notes: nonNil(r.Notes())}
	for _, g := range r.Gates {
		out.Gates = append(out.Gates, g.String())
	}
	for _, c := range r.Cells {
		jc := jsonCell{Scenario: c.Scenario, Target: c.Target, OldTrials: c.OldTrials, OldValid: c.OldValid,
			NewTrials: c.NewTrials, NewValid: c.NewValid, Mismatches: c.Mismatches, Refused: c.Refused, FindMax: c.Search, Changes: []jsonChange{}}
		if jc.Mismatches == nil {
			jc.Mismatches = []Mismatch{}
		}
		for _, ch := range c.Changes {
			jch := jsonChange{Metric: ch.Metric.Name, Unit: ch.Metric.Unit, Old: sum(ch.Old, ch.OldRange), New: sum(ch.New, ch.NewRange),
				ChangePct: finite(ch.Percent), P: ch.Comparison.P, Significant: ch.Significant(), WithinNoise: ch.WithinNoise}
			if ch.Failed != nil {
				jch.GateFailed = ch.Failed.String()
			}
			jc.Changes = append(jc.Changes, jch)
		}
		out.Cells = append(out.Cells, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
