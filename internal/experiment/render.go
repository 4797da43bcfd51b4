package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/bounds"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/texttab"
)

// Format is how a report is written: Text for a terminal, Markdown for docs/experiments.md.
type Format int

const (
	Text Format = iota
	Markdown
)

// Measured is what a run of experiments produced: each experiment's rows by run name.
type Measured map[string]map[string][]results.Row

// Write reports the experiments named (in f's order) against measured: first the answers (per
// experiment, in plain words, whether the source was right, on which runs, with the figures that
// show it), then the rule of each verdict, then per experiment its claims, each run's table
// beside the published figures, and what differs. The text depends only on f, sf and measured,
// so that a page regenerates byte for byte from its files.
func Write(w io.Writer, format Format, f *File, sf *scenario.File, names []string, measured Measured) error {
	d := &doc{format: format}
	if format == Markdown {
		d.heading(1, "The published experiments, reproduced")
		var answers []string
		for _, name := range names {
			answers = append(answers, headline(d, f.Experiments[name], measured[name]))
		}
		d.para(strings.Join(answers, "\n"))
		d.para(header(measured))
		d.heading(2, "How to read a verdict")
		d.para(Legend)
		if f.Intro != "" {
			d.para(strings.TrimSpace(f.Intro))
		}
	}
	for _, name := range names {
		writeExperiment(d, f.Experiments[name], sf, measured[name])
	}
	if format == Text {
		// A terminal shows no page above the claims: the rule follows them.
		d.heading(2, "How to read a verdict")
		d.para(Legend)
	}
	_, err := io.WriteString(w, d.String())
	return err
}

// Legend is the rule of every verdict, as Check applies it: stated once, on the page.
var Legend = strings.Join([]string{
	fmt.Sprintf("A verdict of **holds** or **does not hold** rests only on valid cells (a target answering at least 99%% of its requests, "+
		"a generator that kept up), at least %d valid trials a side, and a test at 95%% confidence: the two-sided Mann–Whitney test, "+
		"and for a factor the interval of ratios it does not reject (with 3 trials against 3 no order of the trials reaches p < 0.05, "+
		"so none is claimed). Ranges that overlap or not decide nothing. A trial where a target itself failed leaves the claim undecided in that run "+
		"(its other trials would be only its good ones); a trial the generator spoiled, whose measured phase was not steady, whose JVM was still "+
		"compiling (its JIT busy for over half of the phase), or beside which other processes took CPU (disturbed: counted in its table), is left out. "+
		"A closed loop's throughput is a whole number of answers a connection over the phase: no interval printed is narrower than that count resolves, "+
		"and a factor is the fraction of the two medians printed beside it. A winner beaten, or an order reversed, by targets measured cleanly "+
		"does not hold whatever the run's other cells show.", MinTrials),
	"",
	"- ✅ **holds** — a factor: the published one lies in the 95% interval, which excludes 1 on its side; an order or a winner: each claimed pair significant that way; a tie: the interval within ±10%.",
	"- ↗️ **holds in direction, not in size** — the direction is significant, the published factor lies outside the interval: both figures are given.",
	"- ❌ **does not hold** — the interval excludes the published factor and does not confirm its direction; or a pair is significant the other way; or a tie's interval lies outside ±10%.",
	"- ❔ **inconclusive** — invalid cells, fewer valid trials than the test needs, or a test that cannot tell; or a run whose design cannot show what the claim says (below); always with what would decide it (the claim's other run, more trials, a quiet rerun, a run that loads each target to its capacity). Figures shown then are the trials', not a verdict.",
	"- 🚫 **impossible as published** — the source's own figures break a bound, on any host: Little's law (a closed loop of N connections completes at most N ÷ mean latency requests a second) or the core count (a pool or a cluster on the same work is faster by at most its cores); the arithmetic is printed.",
	"- 🖥️ **needs a larger host** — the run needs more target CPUs than this host gives, or its generator was saturated; with the CPUs needed and the command that runs it there.",
	"- **not measured** — the run, or a target of it, has no rows (or is not in `experiments.yaml` yet).",
	"",
	"A run's design bounds what it can show (Little's law, before its figures are read): a closed loop of N connections whose requests take at least S completes at most N ÷ S a second, an open loop at most its rate; a pool of P threads held S each, at most P ÷ S; C CPUs at c of CPU a request, at most C ÷ c. Each throughput figure is printed beside the lowest of these. A figure held by the design's bound, below the target's own (its pool, its CPUs), is the latency at that load, not the target's capacity: an order or a factor whose lower figure it is, or a tie of two such figures, is inconclusive, and where the higher figure is held, a published factor above the design's bound over the lower figure cannot show (inconclusive, not *holds in direction*). A run that loads each target to its capacity decides them.",
	"",
	"A claim's one verdict (in the answers and the counts): *impossible as published* when its figures are; else, of the runs that decide it, the least favourable to the source (it holds only where every deciding run agrees); else needs a larger host, inconclusive, not measured.",
}, "\n")

// AnswerWidth is about the most characters a source's line of the first screen holds: its
// headline claim, the verdict in the legend's words and why, read without the rest of the page.
const AnswerWidth = 200

// headline is an experiment's line of the first screen: its source, its headline claim, the
// claim's one verdict and the few words of the finding that decides it.
func headline(d *doc, e *Experiment, runs map[string][]results.Row) string {
	source, _, _ := strings.Cut(e.Source, " ")
	if len(e.Claims) == 0 {
		return fmt.Sprintf("- **[%s](#%s)**: no claims.", source, e.Name)
	}
	head := headClaim(e)
	findings := CheckClaim(e, head, runs)
	v := Overall(findings)
	var why, run string
	for _, f := range findings {
		if f.Verdict == v {
			why = f.Short
			if f.Run != "" {
				run = "`" + f.Run + "`: "
			}
			if f.Condition != "" {
				why += " (" + f.Condition + ")"
			}
			break
		}
	}
	lead := fmt.Sprintf("- **[%s](#%s)** %s: **%s** — %s", source, e.Name, quote(clip(head.Quote, 80)), v, run)
	return lead + d.literal(clip(why, AnswerWidth-len([]rune(visible(lead)))))
}

// headClaim is the claim an experiment's answer leads with: the one marked, else its first.
func headClaim(e *Experiment) *Claim {
	for _, c := range e.Claims {
		if c.Headline {
			return c
		}
	}
	return e.Claims[0]
}

// visible is a line of markdown as it reads: without its link targets and emphasis.
func visible(md string) string {
	md = strings.NewReplacer("**", "", "`", "").Replace(md)
	if i, j := strings.Index(md, "]("), strings.Index(md, ")"); i >= 0 && j > i {
		md = md[:i+1] + md[j+1:]
	}
	return md
}

// clip is s cut at a word to at most n characters, with "…" when cut.
func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	cut := string(r[:max(n-1, 0)])
	if i := strings.LastIndexAny(cut, " ,;"); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// answer is an experiment's answer in plain words: its headline claim's verdict with the
// figures that show it, on which runs, then the count of its claims by verdict.
func answer(d *doc, e *Experiment, runs map[string][]results.Row) string {
	if len(e.Claims) == 0 {
		return "no claims."
	}
	head := headClaim(e)
	findings := CheckClaim(e, head, runs)
	var parts []string
	for _, f := range findings {
		switch f.Verdict {
		case Impossible:
			parts = append(parts, fmt.Sprintf("**%s** — %s", plain(f.Verdict), d.literal(f.Measured)))
		case Holds, Direction, DoesNotHold:
			cond := ""
			if f.Condition != "" {
				cond = " (" + f.Condition + ")"
			}
			parts = append(parts, fmt.Sprintf("on `%s`: **%s**%s — %s", f.Run, plain(f.Verdict), cond, d.literal(f.Measured)))
		default:
			what := d.literal(f.Short)
			if shown := trialsShown(head, f.Figures); shown != "" {
				what += "; the valid trials show " + shown
			}
			if f.Run == "" {
				parts = append(parts, fmt.Sprintf("%s (%s)", plain(f.Verdict), what))
				continue
			}
			parts = append(parts, fmt.Sprintf("on `%s`: %s (%s)", f.Run, plain(f.Verdict), what))
		}
	}
	return fmt.Sprintf("its headline, %s: %s. %s.", quote(head.Quote), strings.Join(parts, "; "), claimCounts(Check(e, runs)))
}

// trialsShown is the one or two figures the valid trials show for a claim: the two of a ratio,
// a winner beside the best of the others; empty when a target has no valid trial.
func trialsShown(c *Claim, figs []Figure) string {
	for _, f := range figs {
		if len(f.Values) == 0 {
			return ""
		}
	}
	text := func(f Figure) string { return f.Target + " " + f.Metric.Format(validMedian(f)) }
	switch {
	case len(figs) < 2:
		return ""
	case c.Ratio != nil:
		return fmt.Sprintf("%s / %s = %s×", text(figs[0]), text(figs[1]), factor(validMedian(figs[0])/validMedian(figs[1])))
	case c.Winner != nil:
		best := figs[1]
		for _, f := range figs[2:] {
			if (validMedian(f) > validMedian(best)) == f.Metric.HigherIsBetter && validMedian(f) != validMedian(best) {
				best = f
			}
		}
		return text(figs[0]) + " against the best other, " + text(best)
	}
	var parts []string
	for _, f := range figs {
		parts = append(parts, text(f))
	}
	return strings.Join(parts, ", ")
}

// plain is a verdict as the answers write it: in the legend's words, as everywhere on the page.
func plain(v Verdict) string { return string(v) }

// claimCounts counts the claims of findings by their one verdict (Overall): "All 14 claims: 6
// impossible as published, 8 inconclusive".
func claimCounts(findings []Finding) string {
	var order []*Claim
	by := map[*Claim][]Finding{}
	for _, f := range findings {
		if _, ok := by[f.Claim]; !ok {
			order = append(order, f.Claim)
		}
		by[f.Claim] = append(by[f.Claim], f)
	}
	counts := map[Verdict]int{}
	for _, c := range order {
		counts[Overall(by[c])]++
	}
	var parts []string
	for _, v := range verdicts {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(order) == 1 {
		return "Its one claim: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("All %d claims: %s", len(order), strings.Join(parts, ", "))
}

// verdicts in the order they are counted.
var verdicts = []Verdict{Holds, Direction, DoesNotHold, Impossible, Inconclusive, LargerHost, NotMeasured}

// header says where and when the run was measured, from the rows themselves.
func header(measured Measured) string {
	var hosts, commits []string
	var first, last time.Time
	for _, runs := range measured {
		for _, rows := range runs {
			for _, r := range rows {
				if h := hostText(r.HostCPU); h != "" && !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
				if r.GitCommit != "" && !slices.Contains(commits, r.GitCommit) {
					commits = append(commits, r.GitCommit)
				}
				if !r.StartedAt.IsZero() && (first.IsZero() || r.StartedAt.Before(first)) {
					first = r.StartedAt
				}
				if r.StartedAt.After(last) {
					last = r.StartedAt
				}
			}
		}
	}
	if first.IsZero() {
		return "No run recorded yet: `make experiments` measures one."
	}
	slices.Sort(hosts)
	slices.Sort(commits)
	cells, disturbedCells := 0, 0
	for _, runs := range measured {
		for _, rows := range runs {
			for _, r := range rows {
				if r.Loaded() {
					cells++
					if disturbed(r) {
						disturbedCells++
					}
				}
			}
		}
	}
	until := last.UTC().Format("15:04")
	if last.UTC().Format(time.DateOnly) != first.UTC().Format(time.DateOnly) {
		until = last.UTC().Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("Generated by `make experiments-doc` from the run files in `docs/experiments/` (regenerate it: "+
		"the same text, byte for byte). Measured %s to %s UTC on %s, iotbench %s; %d cells loaded, %d of them disturbed "+
		"(other processes took CPU beside them: marked in the tables and left out of the verdicts). Each experiment says how to run its full version.",
		first.UTC().Format("2006-01-02 15:04"), until, strings.Join(hosts, "; "), strings.Join(commits, ", "),
		cells, disturbedCells)
}

// measuredOn are the hosts and the builds (commits) that measured rows' loaded cells, sorted.
func measuredOn(rows []results.Row) (hosts, builds []string) {
	for _, r := range rows {
		if !r.Loaded() {
			continue
		}
		if h := hostText(r.HostCPU); h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
		if r.GitCommit != "" && !slices.Contains(builds, r.GitCommit) {
			builds = append(builds, r.GitCommit)
		}
	}
	slices.Sort(hosts)
	slices.Sort(builds)
	return hosts, builds
}

// hostText describes the host as the rows name it: "AMD EPYC ×2" is 2 vCPUs of an AMD EPYC.
func hostText(cpu string) string {
	model, n, ok := strings.Cut(cpu, " ×")
	if !ok {
		return cpu
	}
	return fmt.Sprintf("%s vCPUs (%s)", n, model)
}

func writeExperiment(d *doc, e *Experiment, sf *scenario.File, runs map[string][]results.Row) {
	d.anchor(e.Name)
	d.heading(2, fmt.Sprintf("%s (`%s`)", e.Title, e.Name))
	a := answer(d, e, runs)
	d.para("**Was it right?** " + strings.ToUpper(a[:1]) + a[1:])
	source := fmt.Sprintf("**Source:** %s.", e.Source)
	if p := strings.TrimSpace(e.Published); p != "" {
		source += " **Published:** " + p
	}
	d.para(source)
	d.para(fmt.Sprintf("**Full version:** `iotbench reproduce %s` runs %s as written in `experiments.yaml`, resumable. %s",
		e.Name, plural(len(e.Runs), "run"), measuredAs(e, runs)))

	if len(e.Claims) > 0 {
		d.heading(3, "Claims")
		rows := [][]string{}
		for _, c := range e.Claims {
			findings := CheckClaim(e, c, runs)
			claim := quote(c.Quote) + note(c.Note)
			if c.Pair != "" {
				claim += " Pair: " + strings.TrimSpace(c.Pair) + "."
			}
			rows = append(rows, []string{claim, "**" + verdictText(Overall(findings)) + "**", "", "", ""})
			for _, f := range findings {
				run := "—"
				switch {
				case f.Run != "":
					run = "`" + f.Run + "`"
				case f.Verdict == Impossible:
					run = "the source's own figures"
				}
				why := d.literal(f.Why)
				if f.Decide != "" && f.Decide != f.Why {
					why += ". **Would decide it:** " + d.withCode(f.Decide)
				}
				verdict := verdictText(f.Verdict)
				if f.Condition != "" {
					verdict += " — " + f.Condition
				}
				rows = append(rows, []string{"", run, verdict, d.literal(f.Measured), why})
			}
		}
		d.table([]string{"published claim", "verdict / run", "run's verdict", "iotbench measured (valid trials), or the arithmetic", "why"}, rows)
	}
	for _, r := range e.Runs {
		writeRun(d, e, r, sf, runs[r.Name])
	}
	if len(e.Differs) > 0 {
		d.heading(3, "What differs from the published experiment, and why")
		var items []string
		for _, s := range e.Differs {
			items = append(items, "- "+strings.TrimSpace(s))
		}
		d.para(strings.Join(items, "\n"))
	}
}

func note(n string) string {
	if n == "" {
		return ""
	}
	return " (" + strings.TrimSpace(n) + ")"
}

func quote(q string) string { return "“" + strings.TrimSpace(q) + "”" }

func verdictText(v Verdict) string {
	switch v {
	case Holds:
		return "✅ holds"
	case Direction:
		return "↗️ holds in direction, not in size"
	case DoesNotHold:
		return "❌ does not hold"
	case Inconclusive:
		return "❔ inconclusive"
	case Impossible:
		return "🚫 impossible as published"
	case LargerHost:
		return "🖥️ needs a larger host"
	}
	return string(v)
}

func plural(n int, word string) string {
	if n == 1 {
		return "its run"
	}
	return fmt.Sprintf("its %d %ss", n, word)
}

// measuredAs says how the rows shown were measured, when shorter than the file says.
func measuredAs(e *Experiment, runs map[string][]results.Row) string {
	trials, durations := map[int]bool{}, map[time.Duration]bool{}
	n := 0
	for _, r := range e.Runs {
		per := map[string]int{}
		for _, row := range RequestRows(runs[r.Name], "") {
			if row.Loaded() {
				per[row.Target]++
				durations[row.Duration] = true
				n++
			}
		}
		for _, k := range per {
			trials[k] = true
		}
	}
	if n == 0 {
		return "Nothing measured here."
	}
	return fmt.Sprintf("Shown: %s trial(s) per target, %s measured per cell.", joinInts(trials), joinDurations(durations))
}

func joinInts(set map[int]bool) string {
	var out []string
	for _, k := range slices.Sorted(mapKeys(set)) {
		out = append(out, fmt.Sprint(k))
	}
	return strings.Join(out, " or ")
}

func joinDurations(set map[time.Duration]bool) string {
	var out []string
	for _, k := range slices.Sorted(mapKeys(set)) {
		out = append(out, loadspec.FormatDuration(k))
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " or ")
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func writeRun(d *doc, e *Experiment, r *Run, sf *scenario.File, rows []results.Row) {
	d.heading(3, fmt.Sprintf("Run `%s`: %s", r.Name, strings.TrimSpace(r.Note)))
	rows = RequestRows(rows, "") // a mix's cells, each the whole
	d.para(runSettings(r, sf, rows))
	metricNames := e.Metrics
	if len(metricNames) == 0 {
		metricNames = []string{"throughput_rps", "latency_p99_ms"}
	}
	published := map[string]*PublishedRow{}
	targets := slices.Clone(r.targetsIn(sf))
	for _, p := range e.Rows {
		if p.Run == r.Name {
			published[p.Target] = p
			if !slices.Contains(targets, p.Target) {
				targets = append(targets, p.Target)
			}
		}
	}
	header := []string{"target", "published as"}
	for _, name := range metricNames {
		m := MetricNamed(name)
		header = append(header, m.Label+" published", m.Label+" iotbench")
		if name == "throughput_rps" {
			header = append(header, "bound")
		}
	}
	header = append(header, "valid trials (the claims')")
	var table [][]string
	var notes []string
	for _, t := range targets {
		line, fig := runLine(d, r, t, published[t], metricNames, rows)
		valid, note := validCell(d, r, sf, t, fig)
		if note != "" {
			notes = append(notes, note)
		}
		table = append(table, append(line, valid))
	}
	d.table(header, table)
	if len(notes) > 0 {
		var items []string
		for _, n := range notes {
			items = append(items, "- "+n)
		}
		d.para("Invalid or missing cells (the commonest reason of each target):\n" + strings.Join(items, "\n"))
	}
	writeRunNotes(d, rows)
}

// runLine is target t's figures in a run's table, published beside measured, and its last figure.
func runLine(d *doc, r *Run, t string, published *PublishedRow, metricNames []string, rows []results.Row) ([]string, Figure) {
	as := "—"
	if published != nil && published.As != "" {
		as = published.As
	}
	line := []string{"`" + t + "`", as}
	var fig Figure
	for _, name := range metricNames {
		m := MetricNamed(name)
		pub := "—"
		if published != nil {
			if v, ok := published.AsWritten[name]; ok {
				pub = d.literal(v)
			} else if v, ok := published.Values[name]; ok {
				pub = m.Format(v)
			}
		}
		fig = FigureOf(rows, t, m)
		line = append(line, pub, fig.Text())
		if name == "throughput_rps" {
			line = append(line, boundCell(r.Design, fig, rows))
		}
	}
	return line, fig
}

// validCell is target t's valid trials as the claims count them (valid and trusted: a phase not
// steady, a JIT still compiling, a calibration missed leave a valid trial out of every verdict),
// and the note on its invalid or missing cells, if any.
func validCell(d *doc, r *Run, sf *scenario.File, t string, fig Figure) (valid, note string) {
	valid = fmt.Sprintf("%d/%d", fig.Valid(), fig.Loaded)
	if n := len(fig.Distrusted); n > 0 {
		row, _ := commonest(fig.Distrusted, func(r results.Row) string { return r.Distrust() })
		valid += fmt.Sprintf(" (%d more valid but left out: %s)", n, row.Distrust())
	}
	if n := len(fig.LeftOut); n > 0 {
		valid += fmt.Sprintf(" (%d more valid but left out: disturbed)", n)
	}
	switch {
	case !slices.Contains(r.targetsIn(sf), t):
		valid = "not in this run"
	case fig.Loaded == 0 && fig.NotLoaded != "":
		valid = "not loaded"
		note = fmt.Sprintf("`%s`: %s", t, d.literal(fig.NotLoaded))
	case fig.Loaded == 0:
		valid = "not run"
	case len(fig.Invalid) > 0:
		row, n := commonest(fig.Invalid, invalidReason)
		like := ""
		if n < len(fig.Invalid) {
			like = fmt.Sprintf(" (%d of its %d invalid trials failed so)", n, len(fig.Invalid))
		}
		note = fmt.Sprintf("`%s` trial %d%s: %s", t, row.Trial, like, d.literal(row.InvalidReason))
	}
	if fig.Disturbed > 0 {
		valid += fmt.Sprintf(", ⚠️ %d disturbed", fig.Disturbed)
	}
	return valid, note
}

// writeRunNotes are the notes under a run's table: its disturbed cells, and its counts coarse.
func writeRunNotes(d *doc, rows []results.Row) {
	var disturbedNotes []string
	for _, row := range rows {
		if row.Loaded() && disturbed(row) {
			for _, w := range strings.Split(row.Warnings, "; ") {
				if strings.HasPrefix(w, "disturbed") {
					disturbedNotes = append(disturbedNotes, fmt.Sprintf("- `%s` trial %d: %s", row.Target, row.Trial, d.literal(w)))
				}
			}
		}
	}
	if len(disturbedNotes) > 0 {
		d.para("⚠️ Disturbed cells (other processes took CPU during the measured phase: measure them again on a quiet host):\n" + strings.Join(disturbedNotes, "\n"))
	}
	var coarse []string
	for _, c := range coarseCounts(rows) {
		coarse = append(coarse, fmt.Sprintf("- %s: %s", strings.Join(c.targets, ", "), d.literal(c.text)))
	}
	if len(coarse) > 0 {
		d.para("Count coarse (a closed loop's answers are a whole number a connection over the phase; the throughput column is within this of the rate sustained by the count alone):\n" + strings.Join(coarse, "\n"))
	}
}

// boundCell is the most the run let a target's throughput reach, and whose bound that is: the
// run's design (a figure held there is not the target's capacity) or the target's own.
func boundCell(d Design, f Figure, rows []results.Row) string {
	if f.Valid() == 0 {
		return "—"
	}
	c := d.capacity(f, rows)
	b := c.Ceiling()
	switch {
	case !b.Known():
		return "—"
	case c.Held():
		return fmt.Sprintf("%s (%s): the run's, held at %s", bounds.Rate(b.Rate), b.Why, percent(c.Measured/b.Rate))
	case b.Kind == bounds.Design:
		return fmt.Sprintf("%s (%s): the run's", bounds.Rate(b.Rate), b.Why)
	}
	return fmt.Sprintf("%s (%s): its own", bounds.Rate(b.Rate), b.Why)
}

// coarse is one text of the count warning (results.CountCoarse, without it) and the targets,
// quoted, whose rows read so.
type coarse struct {
	text    string
	targets []string
}

// coarseCounts are the count warnings of a run's rows, each target's first valid row's (a coarse
// count is a property of the run's load, its users and phase, and of the target's rate), the
// targets that read alike together, in the order the rows first give them.
func coarseCounts(rows []results.Row) []coarse {
	var out []coarse
	seen := map[string]bool{}
	for _, row := range rows {
		if !row.Valid || seen[row.Target] {
			continue
		}
		for _, w := range strings.Split(row.Warnings, "; ") {
			text, ok := strings.CutPrefix(w, results.CountCoarse)
			if !ok {
				continue
			}
			seen[row.Target] = true
			i := slices.IndexFunc(out, func(c coarse) bool { return c.text == text })
			if i < 0 {
				i = len(out)
				out = append(out, coarse{text: text})
			}
			out[i].targets = append(out[i].targets, "`"+row.Target+"`")
		}
	}
	return out
}

// runSettings says how the run loads, as the file asks and as the rows record it.
func runSettings(r *Run, sf *scenario.File, rows []results.Row) string {
	s := sf.Scenarios[r.Scenario]
	load := ""
	switch {
	case r.Connections > 0:
		load = fmt.Sprintf("closed loop, %d connections", r.Connections)
	case r.Rate > 0:
		load = fmt.Sprintf("open loop at %d rps", r.Rate)
	case s != nil && s.Load.Connections > 0:
		load = fmt.Sprintf("closed loop, %d connections", s.Load.Connections)
	case s != nil:
		load = fmt.Sprintf("open loop at %d rps", s.Load.Rate)
	}
	parts := []string{fmt.Sprintf("Scenario `%s`, %s", r.Scenario, load)}
	if s != nil && s.Mixed() {
		parts = append(parts, summary.MixText(s.Streams(), "")+" (the table holds the whole)")
	}
	if r.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("a %s timeout", loadspec.FormatDuration(r.Timeout)))
	}
	if r.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%s per cell", loadspec.FormatDuration(r.Duration)))
	}
	if r.NeedsCPUs > 0 {
		parts = append(parts, fmt.Sprintf("needs %d target CPUs", r.NeedsCPUs))
	}
	text := strings.Join(parts, ", ") + "."
	for _, row := range rows {
		if row.Loaded() {
			text += fmt.Sprintf(" Measured: %s after %s, target cpuset %s, memory %s, generator cpuset %s.",
				loadspec.FormatDuration(row.Duration), summary.WarmupText(row.Warmup, row.WarmupAuto), row.CPUSet, row.Memory, row.GeneratorCPUSet)
			break
		}
	}
	if hosts, builds := measuredOn(rows); len(hosts) > 0 {
		// Runs of one page may come from several hosts and builds: each says its own.
		text += fmt.Sprintf(" On %s, iotbench %s.", strings.Join(hosts, "; "), strings.Join(builds, ", "))
	}
	if wall := wallTime(rows); wall > 0 {
		unit := time.Minute
		if wall < time.Minute {
			unit = time.Second
		}
		text += fmt.Sprintf(" Wall time %s, from the first cell's warm-up to the last cell's end.",
			loadspec.FormatDuration(wall.Round(unit)))
	}
	return text + " Figures: median [range of the trials, or 95% interval from 6 trials on]."
}

// wallTime is how long the run's loaded cells took, as their rows record it: the measured phase
// starts at StartedAt, after WarmupTaken; a run resumed later counts the pause between its sittings.
func wallTime(rows []results.Row) time.Duration {
	var first, last time.Time
	seen := false
	for _, r := range rows {
		if !r.Loaded() || r.StartedAt.IsZero() {
			continue
		}
		begin, end := r.StartedAt.Add(-r.WarmupTaken), r.StartedAt.Add(r.Duration)
		if !seen || begin.Before(first) {
			first = begin
		}
		if !seen || end.After(last) {
			last = end
		}
		seen = true
	}
	return last.Sub(first)
}

// doc collects a report's blocks and renders them as Markdown or terminal text.
type doc struct {
	format Format
	b      strings.Builder
}

func (d *doc) String() string { return strings.TrimRight(d.b.String(), "\n") + "\n" }

func (d *doc) heading(level int, text string) {
	if d.format == Markdown {
		fmt.Fprintf(&d.b, "%s %s\n\n", strings.Repeat("#", level), text)
		return
	}
	text = strings.ReplaceAll(text, "`", "")
	fmt.Fprintf(&d.b, "%s\n%s\n\n", text, strings.Repeat([]string{"=", "=", "-", "·"}[min(level, 3)], len([]rune(text))))
}

// literal is text from the rows (a reason, a verdict quoting one) as the page shows it: markup
// escaped in markdown, control codes neutralised on a terminal.
func (d *doc) literal(s string) string {
	if d.format == Markdown {
		return safetext.Markdown(s)
	}
	return safetext.Terminal(s)
}

// withCode is a text of ours holding row data, with commands in backticks: in markdown the
// commands stay code and the rest is escaped as a literal; elsewhere it is a literal.
func (d *doc) withCode(s string) string {
	parts := strings.Split(s, "`")
	if d.format != Markdown || len(parts)%2 == 0 { // unpaired: no code to keep
		return d.literal(s)
	}
	for i, p := range parts {
		if i%2 == 1 {
			parts[i] = safetext.Terminal(p)
		} else {
			parts[i] = safetext.Markdown(p)
		}
	}
	return strings.Join(parts, "`")
}

func (d *doc) anchor(name string) {
	if d.format == Markdown {
		fmt.Fprintf(&d.b, "<a id=\"%s\"></a>\n\n", name)
	}
}

func (d *doc) para(text string) {
	if d.format == Text {
		text = strings.ReplaceAll(strings.ReplaceAll(text, "**", ""), "`", "")
	}
	fmt.Fprintf(&d.b, "%s\n\n", text)
}

func (d *doc) table(header []string, rows [][]string) {
	if d.format == Markdown {
		// A pipe ends a cell unless escaped; one escaped already (a literal) stays as it is.
		esc := func(s string) string {
			var b strings.Builder
			for i := 0; i < len(s); i++ {
				if s[i] == '|' && (i == 0 || s[i-1] != '\\') {
					b.WriteByte('\\')
				}
				b.WriteByte(s[i])
			}
			return b.String()
		}
		var h []string
		for _, c := range header {
			h = append(h, esc(c))
		}
		fmt.Fprintf(&d.b, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(header)))
		for _, r := range rows {
			var cells []string
			for _, c := range r {
				cells = append(cells, esc(c))
			}
			fmt.Fprintf(&d.b, "| %s |\n", strings.Join(cells, " | "))
		}
		d.b.WriteString("\n")
		return
	}
	t := texttab.New(&d.b, header, texttab.Layout{Wrap: 48, TightHeader: true})
	for _, r := range rows {
		cells := make([]any, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(strings.ReplaceAll(c, "`", ""), "**", "")
		}
		_ = t.Append(cells...)
	}
	_ = t.Render()
	d.b.WriteString("\n")
}
