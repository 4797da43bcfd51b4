// Package experiment holds the published experiments iotbench reproduces (experiments.yaml, beside
// scenarios.yaml): each one's source, the runs that redo it as published and as corrected, the
// numbers it published and the claims built on them. Check puts each claim beside the rows of a
// run and gives a verdict; Text and Markdown render the outcome (docs/experiments.md is Markdown
// of a committed run). The schema is documented in docs/scenarios.md.
package experiment

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/scenario"
	"go.yaml.in/yaml/v3"
)

// File is a parsed and validated experiments file.
type File struct {
	Path string `yaml:"-"`
	// Intro is Markdown put at the top of the generated page, after its header.
	Intro       string                 `yaml:"intro"`
	Experiments map[string]*Experiment `yaml:"experiments"`
	// Order is the file's order of the experiments.
	Order []string `yaml:"-"`
}

// Experiment is one published experiment and how iotbench redoes it.
type Experiment struct {
	Name string `yaml:"-"`
	Line int    `yaml:"-"`

	Title string `yaml:"title"`
	// Source names the published text (seeds/000 …) and the part of it.
	Source string `yaml:"source"`
	// Published is the load model, tool and host as the source describes them.
	Published string `yaml:"published"`
	// SourceCPUs are the CPUs the source's servers ran on, where it says (0: it does not): a run
	// on fewer target CPUs comparing a runtime of several threads with one of a single thread
	// names that condition in its verdicts.
	SourceCPUs int `yaml:"source_cpus"`
	// Metrics are the figures the source reported (metric names): the tables show them.
	Metrics []string        `yaml:"metrics"`
	Runs    []*Run          `yaml:"runs"`
	Rows    []*PublishedRow `yaml:"rows"`
	Claims  []*Claim        `yaml:"claims"`
	// Differs says, a Markdown item each, what differs from the published experiment and why.
	Differs []string `yaml:"differs"`
}

// Run is one scenario run of an experiment: as published, or a corrected variant. Zero fields keep
// the scenario's settings.
type Run struct {
	Line int `yaml:"-"`

	Name     string `yaml:"name"`
	Scenario string `yaml:"scenario"`
	// Note says what the run is: as published, or what it corrects.
	Note        string           `yaml:"note"`
	Targets     []string         `yaml:"targets"`
	Rate        int              `yaml:"rate"`
	Connections int              `yaml:"connections"`
	Duration    time.Duration    `yaml:"duration"`
	Warmup      *scenario.Warmup `yaml:"warmup"`
	Trials      int              `yaml:"trials"`
	Timeout     time.Duration    `yaml:"timeout"`
	// Compat waits and counts as the source's tool did (load.Compat: wrk keeps a request past its
	// timeout on its connection for the answer, and counts it in wrk's figures), besides
	// iotbench's own figures.
	Compat load.Compat `yaml:"compat"`
	// NeedsCPUs is the fewest target CPUs the run means anything with (a cluster, a worker pool):
	// on a host that cannot give them, it is not run and its claims need a larger host.
	NeedsCPUs int `yaml:"needs_cpus"`
	// FindMax, when set, searches each target's maximum sustainable rate instead of measuring at
	// one rate (rate is where the search starts): a capacity question, as run --find-max asks it.
	FindMax *FindMax `yaml:"find_max"`
	// Design is what the run's load and targets bound, from the scenario file (Load).
	Design Design `yaml:"-"`
}

// FindMax is how a run's search goes; an empty field takes run --find-max's default.
type FindMax struct {
	// SLO is what every step must meet, e.g. "p99<100ms,errors<0.1%".
	SLO string `yaml:"slo"`
	// Step is how long each rate is held.
	Step time.Duration `yaml:"step"`
	// Resolution is the precision of the maximum: a share of the rate (10%) or rps (200).
	Resolution string `yaml:"resolution"`
}

// PublishedRow is one row of a published table: the iotbench target standing for the published
// stack (As, in the source's words), and its figures by metric name.
type PublishedRow struct {
	Line   int                `yaml:"-"`
	Run    string             `yaml:"run"`
	Target string             `yaml:"target"`
	As     string             `yaml:"as"`
	Values map[string]float64 `yaml:"values"`
	// AsWritten are figures as the source wrote them ("3.13MB", "1.72s"), shown instead of
	// Values' numbers, which the checks use: a reader finds the source's own text.
	AsWritten map[string]string `yaml:"as_written"`
	// Connections is the source's closed loop for this row when the run's differs: Little's
	// law bounds the row by it (Bound).
	Connections int `yaml:"connections"`
}

// Claim is a sentence of the source and what it asserts, checked in each of Runs. Exactly one of
// Ratio, Ranking, Winner, Tie and Untestable is set.
type Claim struct {
	Line int `yaml:"-"`

	// Quote is the claim in the source's words.
	Quote string   `yaml:"quote"`
	Runs  []string `yaml:"runs"`
	// Note is iotbench's remark on the claim (its own table disagrees, …).
	Note string `yaml:"note"`
	// Pair says which like-for-like comparison the claim is about (same app, two runtimes; same
	// runtime, two drivers), as the source's rows make it.
	Pair string `yaml:"pair"`
	// Headline marks the claim the experiment's answer leads with (one per experiment).
	Headline bool `yaml:"headline"`
	// Request, in runs of a mix (a scenario with requests:), is the request whose figures the
	// claim is about (its rows, results' request column); empty: the cells' whole.
	Request    string   `yaml:"request"`
	Ratio      *Ratio   `yaml:"ratio"`
	Ranking    *Ranking `yaml:"ranking"`
	Winner     *Winner  `yaml:"winner"`
	Tie        *Tie     `yaml:"tie"`
	Untestable string   `yaml:"untestable"`
	// Cores bounds the claim's speed-up by the cores the source's faster side had.
	Cores *CoresBound `yaml:"cores"`
}

// CoresBound is the core-count bound of a speed-up on the same work: Of's published throughput
// in Run cannot exceed Cores times Base's in BaseRun (a pool or a cluster adds cores, not speed).
type CoresBound struct {
	Run     string `yaml:"run"`
	Of      string `yaml:"of"`
	BaseRun string `yaml:"base_run"`
	Base    string `yaml:"base"`
	Cores   int    `yaml:"cores"`
	// Why says where Cores comes from, in the source's words.
	Why string `yaml:"why"`
}

// Ratio claims Of's metric is Published times To's ("4.6× faster": 4.6; "88% better": 1.88).
type Ratio struct {
	Metric string `yaml:"metric"`
	Of     string `yaml:"of"`
	// To is the target the source's own table compares with.
	To string `yaml:"to"`
	// ToBestOf, for a claim that names its comparison by rank ("than the best JavaScript
	// option"), are the targets it names: in each run, To is the best of them measured there.
	ToBestOf  []string `yaml:"to_best_of"`
	Published float64  `yaml:"published"`
}

// Ranking claims each target of Order is better than the next on Metric.
type Ranking struct {
	Metric string   `yaml:"metric"`
	Order  []string `yaml:"order"`
}

// Winner claims Target is better than every other target of Over on Metric (empty: of the run).
type Winner struct {
	Metric string   `yaml:"metric"`
	Target string   `yaml:"target"`
	Over   []string `yaml:"over"`
}

// Tie claims Targets do not differ on Metric ("a technical tie").
type Tie struct {
	Metric  string   `yaml:"metric"`
	Targets []string `yaml:"targets"`
}

// Load reads and validates an experiments file against the scenario matrix it runs.
func Load(path string, scenarios *scenario.File) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (pass the experiments file with --experiments)", path, err)
	}
	return Parse(path, data, scenarios)
}

var (
	yamlLine      = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlWrongType = regexp.MustCompile("cannot unmarshal !!\\w+ `(.*)` into (.*)")
	typeNames     = map[string]string{
		"int": "a whole number", "float64": "a number", "time.Duration": "a duration (e.g. 30s, 500ms)",
		"string": "a string", "[]string": "a list of strings (e.g. [a, b])",
	}
)

// friendly says what a yaml type error means in the file's terms.
func friendly(msg string) string {
	m := yamlWrongType.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := typeNames[m[2]]
	if want == "" {
		want = "a mapping of keys to values"
		if strings.HasPrefix(m[2], "[]") {
			want = "a list"
		}
	}
	return fmt.Sprintf("wrong type: %q should be %s", m[1], want)
}

// Parse parses and validates the content of an experiments file; path names it in errors.
func Parse(path string, data []byte, scenarios *scenario.File) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: the file is empty; it needs experiments (see docs/scenarios.md, experiments.yaml)", path)
	}
	root := doc.Content[0]
	if keys := scenario.UnknownKeys(root, reflect.TypeFor[File](), "the file"); len(keys) > 0 {
		errs := make([]lineError, len(keys))
		for i, k := range keys {
			errs[i] = lineError{k.Line, k.Msg}
		}
		return nil, located(path, errs)
	}
	f := &File{Path: path}
	if err := root.Decode(f); err != nil {
		return nil, yamlError(path, err)
	}
	_, body := lookup(root, "experiments")
	if body != nil {
		for i := 0; i+1 < len(body.Content); i += 2 {
			name := body.Content[i].Value
			if e := f.Experiments[name]; e != nil {
				e.Name, e.Line = name, body.Content[i].Line
				f.Order = append(f.Order, name)
				lines(body.Content[i+1], e)
			}
		}
	}
	if errs := f.validate(scenarios); len(errs) > 0 {
		return nil, located(path, errs)
	}
	return f, nil
}

// lines records the line of each run, row and claim of e from its node.
func lines(node *yaml.Node, e *Experiment) {
	items := func(key string) []*yaml.Node {
		if _, v := lookup(node, key); v != nil && v.Kind == yaml.SequenceNode {
			return v.Content
		}
		return nil
	}
	for i, n := range items("runs") {
		if i < len(e.Runs) && e.Runs[i] != nil {
			e.Runs[i].Line = n.Line
		}
	}
	for i, n := range items("rows") {
		if i < len(e.Rows) && e.Rows[i] != nil {
			e.Rows[i].Line = n.Line
		}
	}
	for i, n := range items("claims") {
		if i < len(e.Claims) && e.Claims[i] != nil {
			e.Claims[i].Line = n.Line
		}
	}
}

func lookup(node *yaml.Node, key string) (k, v *yaml.Node) {
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i], node.Content[i+1]
		}
	}
	return nil, nil
}

type lineError struct {
	line int
	msg  string
}

func located(path string, errs []lineError) error {
	slices.SortStableFunc(errs, func(a, b lineError) int { return a.line - b.line })
	out := make([]error, len(errs))
	for i, e := range errs {
		// A message quotes the file: no control code of it reaches the terminal.
		out[i] = fmt.Errorf("%s:%d: %s", path, e.line, safetext.Terminal(e.msg))
	}
	return errors.Join(out...)
}

func yamlError(path string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]error, len(msgs))
	for i, m := range msgs {
		m = safetext.Terminal(m)
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			out[i] = fmt.Errorf("%s:%s: %s", path, g[1], friendly(g[2]))
		} else {
			out[i] = fmt.Errorf("%s: %s", path, strings.TrimPrefix(m, "yaml: "))
		}
	}
	return errors.Join(out...)
}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// validate checks what the types cannot: names, references to scenarios, targets, runs and
// metrics, and the bounds of the runs' settings (the scenario file's).
func (f *File) validate(sf *scenario.File) []lineError {
	var errs []lineError
	add := func(line int, format string, args ...any) {
		errs = append(errs, lineError{line, fmt.Sprintf(format, args...)})
	}
	if len(f.Experiments) == 0 {
		add(1, "no experiments: add an \"experiments:\" section (see docs/scenarios.md, \"experiments.yaml\")")
	}
	for _, name := range f.Order {
		e := f.Experiments[name]
		what := fmt.Sprintf("experiment %q", name)
		if !validName.MatchString(name) {
			add(e.Line, "%s: use lower-case letters, digits, '.', '_' and '-' in its name", what)
		}
		if e.Title == "" || e.Source == "" {
			add(e.Line, "%s needs a title and a source (the published text it redoes)", what)
		}
		for _, m := range e.Metrics {
			if MetricNamed(m) == nil {
				add(e.Line, "%s: metrics: unknown metric %q (known: %s)", what, m, strings.Join(MetricNames(), ", "))
			}
		}
		if len(e.Runs) == 0 {
			add(e.Line, "%s has no runs: add \"runs:\" with a scenario each", what)
		}
		if e.SourceCPUs < 0 {
			add(e.Line, "%s: source_cpus %d must not be negative (the source's CPUs; leave it out when it does not say)", what, e.SourceCPUs)
		}
		runs := map[string]*Run{}
		for _, r := range e.Runs {
			if r == nil {
				add(e.Line, "%s: an empty run", what)
				continue
			}
			errs = append(errs, r.validate(what, sf, runs)...)
			r.Design = designOf(r, sf)
			runs[r.Name] = r
		}
		for _, row := range e.Rows {
			if row == nil {
				continue
			}
			// A target the run does not (yet) load is shown as not measured, not refused: the
			// source's row stays on the page.
			switch {
			case runs[row.Run] == nil:
				add(row.Line, "%s: published row of %q: run %q is not a run of the experiment", what, row.Target, row.Run)
			case sf.Targets[row.Target] == nil:
				add(row.Line, "%s: published row: unknown target %q (known: %s)", what, row.Target, strings.Join(sf.TargetOrder, ", "))
			}
			metrics := slices.Collect(maps.Keys(row.Values))
			for m := range row.AsWritten {
				if _, ok := row.Values[m]; !ok {
					add(row.Line, "%s: published row of %q: as_written %q has no value: give it under values too (the checks use the number)", what, row.Target, m)
				}
			}
			slices.Sort(metrics)
			for _, m := range metrics {
				if MetricNamed(m) == nil {
					add(row.Line, "%s: published row of %q: unknown metric %q (known: %s)", what, row.Target, m, strings.Join(MetricNames(), ", "))
				}
			}
		}
		for _, c := range e.Claims {
			if c == nil {
				continue
			}
			errs = append(errs, c.validate(what, sf, runs)...)
		}
	}
	return errs
}

func (r *Run) validate(what string, sf *scenario.File, seen map[string]*Run) []lineError {
	var errs []lineError
	add := func(format string, args ...any) {
		errs = append(errs, lineError{r.Line, fmt.Sprintf(format, args...)})
	}
	switch {
	case !validName.MatchString(r.Name):
		add("%s: run %q: name it with lower-case letters, digits, '.', '_' and '-'", what, r.Name)
	case seen[r.Name] != nil:
		add("%s: run %q is named twice", what, r.Name)
	}
	s := sf.Scenarios[r.Scenario]
	if s == nil {
		add("%s: run %q: scenario %q is not in %s (known: %s)", what, r.Name, r.Scenario, sf.Path, strings.Join(sf.ScenarioOrder, ", "))
	}
	for _, t := range r.Targets {
		if sf.Targets[t] == nil {
			add("%s: run %q: unknown target %q (known: %s)", what, r.Name, t, strings.Join(sf.TargetOrder, ", "))
		}
	}
	d := loadspec.FormatDuration
	spec := r.LoadSpec()
	problems := spec.Problems()
	if s != nil && len(problems) == 0 {
		// What the run's settings cannot be used with in its scenario's load.
		var misfit *loadspec.Error
		if _, err := spec.Over(s.LoadSpec(), s.Check.MinLatency); errors.As(err, &misfit) {
			problems = append(problems, misfit)
		}
	}
	for _, e := range problems {
		add("%s: run %q: %s %s: %v", what, r.Name, e.Key, e.Value, e.Err)
	}
	if m := r.FindMax; m != nil {
		if r.Connections != 0 {
			add("%s: run %q: find_max searches an open-loop rate: drop connections (rate sets where the search starts)", what, r.Name)
		}
		if m.SLO != "" {
			if _, err := maxrate.ParseSLO(m.SLO); err != nil {
				add("%s: run %q: find_max: slo %s", what, r.Name, err)
			}
		}
		if m.Step != 0 {
			if err := loadspec.CheckPhase(m.Step); err != nil {
				add("%s: run %q: find_max: step %s: %v", what, r.Name, d(m.Step), err)
			}
		}
		if m.Resolution != "" {
			if _, err := maxrate.ParseResolution(m.Resolution); err != nil {
				add("%s: run %q: find_max: resolution %s: %v", what, r.Name, m.Resolution, err)
			}
		}
	}
	if r.NeedsCPUs < 0 {
		add("%s: run %q: needs_cpus %d: must not be negative", what, r.Name, r.NeedsCPUs)
	}
	return errs
}

// LoadSpec is the run's load settings over its scenario's: only those the run gives.
func (r *Run) LoadSpec() loadspec.Spec {
	spec := loadspec.Spec{Rate: r.Rate, Connections: r.Connections, Duration: r.Duration, Trials: r.Trials, Timeout: r.Timeout, Compat: r.Compat}
	for k, given := range map[loadspec.Key]bool{
		loadspec.Rate: r.Rate != 0, loadspec.Connections: r.Connections != 0, loadspec.Duration: r.Duration != 0,
		loadspec.Trials: r.Trials != 0, loadspec.Timeout: r.Timeout != 0, loadspec.Compat: r.Compat != "", loadspec.Warmup: r.Warmup != nil,
	} {
		if given {
			spec.Give(k)
		}
	}
	if r.Warmup != nil {
		spec.Warmup = r.Warmup.Warmup
	}
	return spec
}

// targetsIn is the run's targets: its own, else its scenario's.
func (r *Run) targetsIn(sf *scenario.File) []string {
	if len(r.Targets) > 0 {
		return r.Targets
	}
	if s := sf.Scenarios[r.Scenario]; s != nil {
		return s.Targets
	}
	return nil
}

func (c *Claim) validate(what string, sf *scenario.File, runs map[string]*Run) []lineError {
	var errs []lineError
	add := func(format string, args ...any) {
		errs = append(errs, lineError{c.Line, fmt.Sprintf(format, args...)})
	}
	if c.Quote == "" {
		add("%s: a claim needs its quote, in the source's words", what)
	}
	kinds := 0
	var metric string
	var targets []string
	if c.Ratio != nil {
		kinds++
		metric, targets = c.Ratio.Metric, []string{c.Ratio.Of, c.Ratio.To}
		if c.Ratio.Published <= 0 {
			add("%s: claim %q: ratio.published must be above 0 (4.6 for \"4.6× faster\", 1.88 for \"88%% better\")", what, c.Quote)
		}
		if c.Ratio.Of == c.Ratio.To || slices.Contains(c.Ratio.ToBestOf, c.Ratio.Of) {
			add("%s: claim %q: a ratio of a target to itself", what, c.Quote)
		}
		targets = append(targets, c.Ratio.ToBestOf...)
	}
	if c.Ranking != nil {
		kinds++
		metric, targets = c.Ranking.Metric, c.Ranking.Order
		if len(targets) < 2 {
			add("%s: claim %q: ranking.order needs two targets or more", what, c.Quote)
		}
	}
	if c.Winner != nil {
		kinds++
		metric, targets = c.Winner.Metric, append([]string{c.Winner.Target}, c.Winner.Over...)
	}
	if c.Tie != nil {
		kinds++
		metric, targets = c.Tie.Metric, c.Tie.Targets
		if len(targets) < 2 {
			add("%s: claim %q: tie.targets needs two targets or more", what, c.Quote)
		}
	}
	if c.Untestable != "" {
		kinds++
	}
	if kinds != 1 {
		add("%s: claim %q: give exactly one of ratio, ranking, winner, tie or untestable (the reason it cannot be tested)", what, c.Quote)
		return errs
	}
	if c.Untestable != "" {
		return errs
	}
	if MetricNamed(metric) == nil {
		add("%s: claim %q: unknown metric %q (known: %s)", what, c.Quote, metric, strings.Join(MetricNames(), ", "))
	}
	if len(c.Runs) == 0 {
		add("%s: claim %q: runs: name the runs it is checked in", what, c.Quote)
	}
	// A run not (yet) in the experiment, or a target its run does not load, is reported as not
	// measured, by name, on the page: a claim of the source is never dropped for want of a run.
	for _, t := range targets {
		if sf.Targets[t] == nil {
			add("%s: claim %q: unknown target %q (known: %s)", what, c.Quote, t, strings.Join(sf.TargetOrder, ", "))
		}
	}
	if b := c.Cores; b != nil {
		if b.Cores < 1 || b.Of == "" || b.Base == "" {
			add("%s: claim %q: cores needs of, base and cores ≥ 1 (the faster side's cores)", what, c.Quote)
		}
	}
	for _, name := range c.Runs {
		r := runs[name]
		if r == nil || c.Request == "" {
			continue
		}
		if s := sf.Scenarios[r.Scenario]; s != nil && !slices.ContainsFunc(s.Requests, func(m scenario.MixRequest) bool { return m.Name == c.Request }) {
			add("%s: claim %q: request %q is not one of scenario %q's requests", what, c.Quote, c.Request, r.Scenario)
		}
	}
	return errs
}
