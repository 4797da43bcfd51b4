package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/texttab"
)

// WritePaired renders a paired run's verdicts in format (one of Formats), as Write does.
func WritePaired(w io.Writer, r PairedResult, format string) error {
	switch format {
	case "table":
		return writePairedText(w, r)
	case "markdown":
		return writePairedMarkdown(w, r)
	case "csv":
		return writePairedCSV(w, r)
	case "json":
		return writePairedJSON(w, r)
	}
	return fmt.Errorf("unknown format %q (formats: %s)", format, strings.Join(Formats, ", "))
}

func (r PairedResult) hasAA() bool {
	for _, c := range r.Cells {
		if c.AATrials > 0 {
			return true
		}
	}
	return false
}

func (r PairedResult) header() []string {
	h := []string{"cell", "metric", "base", "candidate", "change [90% CI]", "limit", "p (adj.)", "verdict"}
	if r.hasAA() {
		h = append(h, "A/A noise", "detectable")
	}
	return h
}

func (r PairedResult) tableRows() [][]string {
	var rows [][]string
	aa := r.hasAA()
	for _, c := range r.Cells {
		name := c.Name()
		if len(c.Changes) == 0 {
			if !c.Refused {
				row := []string{name, "—", trialsText(c.BaseValid, c.BaseTrials), trialsText(c.CandValid, c.CandTrials), "", "", "", "no verdict"}
				if aa {
					row = append(row, "", "")
				}
				rows = append(rows, row)
			}
			continue
		}
		for i, ch := range c.Changes {
			cell := ""
			if i == 0 {
				cell = name
			}
			verdict := string(ch.Decision)
			if ch.Decision == Inconclusive {
				verdict += fmt.Sprintf(" (~%d rounds)", ch.SuggestedRounds)
				if ch.SuggestedRounds >= MaxSuggestedRounds {
					verdict = string(ch.Decision) + " (at the limit)"
				}
			}
			row := []string{cell, ch.Metric.Name + " (" + ch.Metric.Unit + ")",
				formatValue(ch.Base.Median, ch.Metric.Unit), formatValue(ch.Candidate.Median, ch.Metric.Unit),
				formatPercent(ch.Percent) + " " + intervalText(ch), limitText(ch.Gate), fmt.Sprintf("%.3g n=%d", ch.PAdj, ch.Rounds), verdict}
			if aa {
				row = append(row, aaText(ch.NoiseFloor, ch.AARounds), aaText(ch.Detectable, ch.AARounds))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// limitText is a gate's limit without its metric: "+5%".
func limitText(g Gate) string {
	_, limit, _ := strings.Cut(g.String(), ":")
	return limit
}

func aaText(v float64, rounds int) string {
	if math.IsNaN(v) {
		if rounds > 0 {
			return fmt.Sprintf("(%d round)", rounds)
		}
		return "—"
	}
	return fmt.Sprintf("±%.1f%%", v)
}

func (r PairedResult) heading() string {
	return fmt.Sprintf("paired run %s: candidate against baseline, round by round; change = Hodges–Lehmann estimate of the per-round ratio with its 90%% interval; p: Wilcoxon signed-rank, adjusted over %d comparisons (Benjamini–Hochberg), alpha %g; equivalent = the interval inside ±limit (two one-sided tests)",
		r.File, r.Comparisons, r.Alpha)
}

// Notes are what the table cannot say: the verdict first, then what it rests on.
func (r PairedResult) Notes() []string {
	n := r.Counts()
	var parts []string
	for _, v := range []Decision{Equivalent, Improved, Regressed, Inconclusive, Untestable} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	var notes []string
	verdict := strings.ToUpper(string(r.Decision()))
	if len(parts) > 0 {
		verdict += ": " + strings.Join(parts, ", ")
	}
	notes = append(notes, "verdict "+verdict+" (gates "+GatesText(r.Gates)+")")
	for _, f := range r.Failures() {
		notes = append(notes, "FAIL "+f)
	}
	for _, u := range r.Undecided() {
		notes = append(notes, "UNDECIDED "+u)
	}
	if r.Until != "" {
		notes = append(notes, r.Until)
	}
	for _, c := range r.Cells {
		for _, side := range []struct {
			name          string
			valid, trials int
		}{{"baseline", c.BaseValid, c.BaseTrials}, {"candidate", c.CandValid, c.CandTrials}, {"A/A", c.AAValid, c.AATrials}} {
			what := "valid trials"
			if c.Search {
				what = "maxima"
			}
			left := c.LeftOut[side.name]
			switch invalid := side.trials - side.valid - sum(left); {
			case invalid > 0 && c.Search:
				notes = append(notes, fmt.Sprintf("%s: %d of %d %s searches found no maximum; their rounds are left out", c.Name(), invalid, side.trials, side.name))
			case invalid > 0:
				notes = append(notes, fmt.Sprintf("%s: %d of %d %s trials are invalid; their rounds are left out", c.Name(), invalid, side.trials, side.name))
			}
			if n := leftOutNote(c.Name(), what, "of the "+side.name, left); n != "" {
				notes = append(notes, n)
			}
		}
		if len(c.NotRecorded) > 0 && len(c.Changes) > 0 {
			notes = append(notes, fmt.Sprintf("%s: not recorded, not judged: %s", c.Name(), strings.Join(c.NotRecorded, ", ")))
		}
		var fields, allow []string
		for _, m := range c.Mismatches {
			fields = append(fields, fmt.Sprintf("%s (%s → %s)", m.Field, short(m.Old), short(m.New)))
			if m.Field != "image_id" {
				allow = append(allow, m.Field)
			}
		}
		switch {
		case c.Refused:
			notes = append(notes, fmt.Sprintf("REFUSED %s: the baseline and the candidate were measured differently: %s. Pass --allow-mismatch=%s to compare anyway",
				c.Name(), strings.Join(fields, ", "), strings.Join(allow, ",")))
		case len(fields) == 1 && c.Mismatches[0].Field == "image_id":
			notes = append(notes, fmt.Sprintf("%s: the baseline's and the candidate's images differ (%s), as a paired run's do", c.Name(), fields[0]))
		case len(fields) > 0:
			notes = append(notes, fmt.Sprintf("%s is compared although its sides differ in %s", c.Name(), strings.Join(fields, ", ")))
		}
	}
	var searches []string
	for _, c := range r.Cells {
		if c.Search && len(c.Changes) > 0 {
			searches = append(searches, c.Name())
		}
	}
	if len(searches) > 0 {
		notes = append(notes, fmt.Sprintf("max: --find-max cells %s are judged on their searches' maxima, round by round (a side's k-th search is its search of round k), with the tests of any metric; a maximum moves by the search's resolution, so a limit finer than --resolution is rarely equivalent", strings.Join(searches, ", ")))
	}
	return notes
}

func writePairedText(w io.Writer, r PairedResult) error {
	fmt.Fprintln(w, safetext.Terminal(r.heading()))
	if rows := r.tableRows(); len(rows) > 0 {
		t := texttab.New(w, r.header(), texttab.Layout{Left: []int{0, 1, 7}})
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
		fmt.Fprintf(w, "  • %s\n", safetext.Terminal(n)) // notes quote the file's values
	}
	return nil
}

// verdictMark is the markdown comment's sign for a verdict.
var verdictMark = map[Decision]string{Equivalent: "✅", Improved: "✅", Regressed: "❌", Inconclusive: "⚠️", Untestable: "⚠️"}

func writePairedMarkdown(w io.Writer, r PairedResult) error {
	v := r.Decision()
	h := r
	h.File = safetext.Markdown(r.File)
	fmt.Fprintf(w, "### %s iotbench: %s\n\n%s\n\n", verdictMark[v], v, h.heading())
	if rows := r.tableRows(); len(rows) > 0 {
		header := r.header()
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))
		for _, row := range rows {
			for i := range row {
				if i == 0 {
					row[i] = safetext.Markdown(row[i]) // the cell's name, from the file
				} else {
					row[i] = strings.ReplaceAll(row[i], "|", `\|`)
				}
			}
			if strings.HasPrefix(row[7], string(Regressed)) {
				row[7] = "**" + row[7] + "**"
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes() {
		fmt.Fprintf(w, "- %s\n", safetext.Markdown(n)) // notes quote the file's values
	}
	return nil
}

var pairedCSVHeader = []string{"scenario", "target", "metric", "unit", "base_median", "candidate_median", "rounds",
	"change_pct", "change_lo_pct", "change_hi_pct", "limit", "p_value", "p_adjusted", "p_equivalence", "p_equivalence_adjusted",
	"verdict", "suggested_rounds", "aa_rounds", "aa_noise_pct", "detectable_pct"}

func writePairedCSV(w io.Writer, r PairedResult) error {
	cw := csv.NewWriter(w)
	cw.Write(pairedCSVHeader)
	num := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, c := range r.Cells {
		for _, ch := range c.Changes {
			cw.Write([]string{c.Scenario, c.Target, ch.Metric.Name, ch.Metric.Unit, num(ch.Base.Median), num(ch.Candidate.Median),
				strconv.Itoa(ch.Rounds), num(ch.Percent), num(ch.Lo), num(ch.Hi), ch.Gate.String(), num(ch.P), num(ch.PAdj),
				num(ch.PEquivalent), num(ch.PEquivalentAdj), string(ch.Decision), strconv.Itoa(ch.SuggestedRounds),
				strconv.Itoa(ch.AARounds), num(ch.NoiseFloor), num(ch.Detectable)})
		}
	}
	cw.Flush()
	return cw.Error()
}

type jsonPairedChange struct {
	Metric          string   `json:"metric"`
	Unit            string   `json:"unit"`
	Limit           string   `json:"limit"`
	BaseMedian      *float64 `json:"base_median"`
	CandidateMedian *float64 `json:"candidate_median"`
	Rounds          int      `json:"rounds"`
	ChangePct       *float64 `json:"change_pct"`
	LoPct           *float64 `json:"change_lo_pct"` // null when infinite
	HiPct           *float64 `json:"change_hi_pct"`
	P               float64  `json:"p"`
	PAdjusted       float64  `json:"p_adjusted"`
	PEquivalence    float64  `json:"p_equivalence"`
	PEquivalenceAdj float64  `json:"p_equivalence_adjusted"`
	Decision        Decision `json:"verdict"`
	SuggestedRounds int      `json:"suggested_rounds,omitempty"`
	AARounds        int      `json:"aa_rounds"`
	AANoisePct      *float64 `json:"aa_noise_pct"`
	DetectablePct   *float64 `json:"detectable_pct"`
}

type jsonPairedCell struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	FindMax  bool   `json:"find_max"`
	// LeftOut counts by side and reason the valid trials (maxima) no verdict rests on.
	LeftOut     map[string]map[string]int `json:"left_out"`
	BaseTrials  int                       `json:"base_trials"`
	BaseValid   int                       `json:"base_valid"`
	CandTrials  int                       `json:"candidate_trials"`
	CandValid   int                       `json:"candidate_valid"`
	AATrials    int                       `json:"aa_trials"`
	AAValid     int                       `json:"aa_valid"`
	Mismatches  []Mismatch                `json:"mismatches"`
	Refused     bool                      `json:"refused"`
	NotRecorded []string                  `json:"not_recorded"`
	Changes     []jsonPairedChange        `json:"changes"`
}

func writePairedJSON(w io.Writer, r PairedResult) error {
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	out := struct {
		File        string           `json:"file"`
		Paired      bool             `json:"paired"`
		Alpha       float64          `json:"alpha"`
		Gates       []string         `json:"gates"`
		Comparisons int              `json:"comparisons"`
		Decision    Decision         `json:"verdict"`
		Cells       []jsonPairedCell `json:"cells"`
		Failed      []string         `json:"failed"`
		Undecided   []string         `json:"undecided"`
		Notes       []string         `json:"notes"`
	}{File: r.File, Paired: true, Alpha: r.Alpha, Gates: []string{}, Comparisons: r.Comparisons, Decision: r.Decision(),
		Cells: []jsonPairedCell{}, Failed: nonNil(r.Failures()), Undecided: nonNil(r.Undecided()), Notes: nonNil(r.Notes())}
	for _, g := range r.Gates {
		out.Gates = append(out.Gates, g.String())
	}
	for _, c := range r.Cells {
		jc := jsonPairedCell{Scenario: c.Scenario, Target: c.Target, FindMax: c.Search, LeftOut: c.LeftOut, BaseTrials: c.BaseTrials, BaseValid: c.BaseValid,
			CandTrials: c.CandTrials, CandValid: c.CandValid, AATrials: c.AATrials, AAValid: c.AAValid,
			Mismatches: slices.Clip(c.Mismatches), Refused: c.Refused, NotRecorded: nonNil(c.NotRecorded), Changes: []jsonPairedChange{}}
		if jc.Mismatches == nil {
			jc.Mismatches = []Mismatch{}
		}
		if jc.LeftOut == nil {
			jc.LeftOut = map[string]map[string]int{}
		}
		for _, ch := range c.Changes {
			jc.Changes = append(jc.Changes, jsonPairedChange{Metric: ch.Metric.Name, Unit: ch.Metric.Unit, Limit: ch.Gate.String(),
				BaseMedian: finite(ch.Base.Median), CandidateMedian: finite(ch.Candidate.Median), Rounds: ch.Rounds,
				ChangePct: finite(ch.Percent), LoPct: finite(ch.Lo), HiPct: finite(ch.Hi), P: ch.P, PAdjusted: ch.PAdj,
				PEquivalence: ch.PEquivalent, PEquivalenceAdj: ch.PEquivalentAdj, Decision: ch.Decision, SuggestedRounds: ch.SuggestedRounds,
				AARounds: ch.AARounds, AANoisePct: finite(ch.NoiseFloor), DetectablePct: finite(ch.Detectable)})
		}
		out.Cells = append(out.Cells, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
