package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/profile"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/spf13/cobra"
)

// CompareOptions are the arguments and flags of `iotbench compare`.
type CompareOptions struct {
	Streams Streams

	Old, New      string // New is empty for one paired file
	Alpha         float64
	NoisePct      float64
	Format        string
	FailOn        string
	AllowMismatch []string
	// AllowInconclusive lets a paired gate pass when some verdict is inconclusive or untestable.
	AllowInconclusive bool

	set func(name string) bool
}

// NewCmdCompare builds `iotbench compare`; runF replaces the behaviour in tests.
func NewCmdCompare(s Streams, runF func(*CompareOptions) error) *cobra.Command {
	o := &CompareOptions{Streams: s}
	cmd := &cobra.Command{
		Use:   "compare PAIRED.csv | OLD.csv NEW.csv",
		Short: "Judge a paired run (equivalent, regressed, inconclusive), or compare two results files",
		Long: `With one file, a paired run (iotbench run --baseline or --baseline-url): for each cell and gated
metric, the change of the candidate against the baseline round by round (per-round ratios), the
Hodges–Lehmann estimate with its 90% interval, the Wilcoxon signed-rank p-value adjusted over all
comparisons (Benjamini–Hochberg), and a verdict: equivalent (the interval inside ±limit: two
one-sided tests), improved, regressed (significant and past the limit), or inconclusive (with about
how many rounds would settle it). With an A/A control (run --aa), the noise floor and the smallest
change the run could detect; a limit under it is untestable, not passed. The gates are --fail-on's
(default ` + compare.DefaultPairedGates + `); the limit's sign says which direction is a regression.

With two files, compare the cells (scenario, target) that two results files share. For each metric, throughput
(rps), success (%), p50, p99 and p99.9 (ms), and the target's cpu (cores) and peak memory (MiB)
where recorded, it prints the median of each file's valid trials with
its 95% confidence interval (order statistics, as benchstat), the change, and the Mann–Whitney U
p-value; "~" means the difference is not significant at --alpha, or smaller than --noise: two runs
of one server made one after the other drift by a percent or two, and with five or more trials a
side such drift is "significant" without meaning anything. With fewer than 4 valid trials a side
nothing can be significant, and with fewer than 6 the interval is ±∞.

A --find-max cell is compared on its searches' maxima (max, rps; --fail-on 'max:-5%'), with the
same test: under 4 searches a side nothing can be significant, and under 6 the range of the
maxima is shown instead of an interval.

Cells whose rows were measured differently (load model, duration, warm-up, payload, number of
target CPUs, memory, image, iotbench version, host CPU: the fingerprint, docs/results.md) are
refused, naming the field, unless --allow-mismatch allows it.

A file whose last row was cut off mid-way (a run killed during a write) is compared without that
row, with a warning naming its line.

Exit status: 0 compared, and every --fail-on gate judged every cell and no limit passed (a paired
run: every gated metric equivalent or improved); 1 a significant change passes a --fail-on limit
(or, under a gate, a cell has no valid trial left in NEW, or a cell of OLD is missing from NEW; a
paired run: a gated metric regressed, or the candidate has no valid trial); 2 unreadable input, a
bad flag, or a refused cell; 4 a gate could not decide: under --fail-on, a side of a cell with no
valid trial counted (OLD without one; NEW's all left out as not steady, still warming up, or on a
calibration that missed its limits), too few valid trials a side for the Mann–Whitney test to reach
--alpha, or a gate that judged no cell; a paired run's verdict is inconclusive or untestable
somewhere (0 with --allow-inconclusive). A gate that cannot decide never passes.`,
		Example: `  # a paired run: verdicts per cell and gated metric
  iotbench compare --fail-on 'throughput:-5%,p99:+10%' results/20261124T101500Z.csv

  iotbench compare results/base.csv results/candidate.csv

  # a CI gate: fail on a significant throughput drop of 5% or more, or a p99 rise of 10% or more
  iotbench compare --fail-on 'throughput:-5%,p99:+10%' base.csv candidate.csv

  # a pull-request comment; the targets' images differ on purpose
  iotbench compare --format markdown --allow-mismatch=image_id base.csv candidate.csv`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 && len(args) != 2 {
				return usagef("compare takes a paired run's results file, or two results files OLD.csv and NEW.csv; got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Old = args[0]
			if len(args) == 2 {
				o.New = args[1]
			}
			o.set = func(name string) bool { return cmd.Flags().Changed(name) }
			if runF != nil {
				return runF(o)
			}
			return runCompare(o)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.Alpha, "alpha", run.DefaultAlpha, "significance level of the Mann–Whitney test")
	f.Float64Var(&o.NoisePct, "noise", 3, "percent: a smaller change of the median is never significant")
	f.StringVar(&o.Format, "format", "table", "output: "+strings.Join(compare.Formats, ", "))
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when a change passes a limit, e.g. 'throughput:-5%,p99:+10%'")
	f.StringSliceVar(&o.AllowMismatch, "allow-mismatch", nil, "compare cells differing in these fingerprint fields (alone: any)")
	f.Lookup("allow-mismatch").NoOptDefVal = "*"
	f.BoolVar(&o.AllowInconclusive, "allow-inconclusive", false, "a paired run: exit 0, not 4, when undecided")
	return cmd
}

func runCompare(o *CompareOptions) error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return usagef("--alpha %v: give a level between 0 and 1, e.g. 0.05", o.Alpha)
	}
	o.Format = tableFormat(o.Format, o.Streams.ErrOut)
	if !slices.Contains(compare.Formats, o.Format) {
		return usagef("--format %q: one of %s", o.Format, strings.Join(compare.Formats, ", "))
	}
	if !(o.NoisePct >= 0 && o.NoisePct < 100) {
		return usagef("--noise %v: give a percent from 0 to 100, e.g. 3", o.NoisePct)
	}
	known := append(fingerprintFieldNames(), "*")
	for _, f := range o.AllowMismatch {
		if !slices.Contains(known, f) {
			return usagef("--allow-mismatch %q: not a fingerprint field (fields: %s)", f, strings.Join(known[:len(known)-1], ", "))
		}
	}
	if o.New == "" {
		return comparePaired(o)
	}
	if o.AllowInconclusive {
		return usagef("--allow-inconclusive belongs to a paired run's verdicts (one file); two files compare without them")
	}
	opts := compare.Options{Alpha: o.Alpha, NoisePct: o.NoisePct, AllowMismatch: o.AllowMismatch}
	if o.FailOn != "" {
		gates, err := compare.ParseGates(o.FailOn)
		if err != nil {
			return flagErr("fail-on", "", err)
		}
		for _, g := range gates {
			if math.Abs(g.Percent) < o.NoisePct {
				return usagef("--fail-on %s: the limit is under the %g%% noise threshold, so smaller changes would be called noise and it would act as a %g%% limit; give --noise %g or a limit of %g%% or more", g, o.NoisePct, o.NoisePct, math.Abs(g.Percent), o.NoisePct)
			}
		}
		opts.Gates = gates
	}
	old, err := readResults(o.Streams, o.Old)
	if err != nil {
		return err
	}
	new, err := readResults(o.Streams, o.New)
	if err != nil {
		return err
	}
	if len(old) == 0 || len(new) == 0 {
		empty := o.Old
		if len(old) > 0 {
			empty = o.New
		}
		return usagef("%s has no rows: nothing to compare", empty)
	}
	for _, f := range []struct {
		name string
		rows []results.Row
	}{{o.Old, old}, {o.New, new}} {
		if compare.IsPaired(f.rows) {
			return usagef("%s is a paired run (baseline and candidate in one file): judge it alone, iotbench compare %s", f.name, f.name)
		}
	}
	res := compare.Compare(o.Old, old, o.New, new, opts)
	if err := compare.Write(o.Streams.Out, res, o.Format); err != nil {
		return err
	}
	if o.Format == "table" || o.Format == "markdown" {
		if err := writeProfileChanges(o.Streams, o.Old, o.New); err != nil {
			return err
		}
	}
	if o.Format == "csv" {
		for _, n := range res.Notes() {
			fmt.Fprintf(o.Streams.ErrOut, "%s\n", n)
		}
	}
	if refused := res.Refused(); len(refused) > 0 {
		var names []string
		for _, c := range refused {
			names = append(names, c.Name())
		}
		return usagef("%d cell(s) not compared because their rows were measured differently: %s (see the notes)", len(refused), strings.Join(names, ", "))
	}
	if len(res.Cells) == 0 {
		hint := ""
		if adHoc(old) && adHoc(new) {
			hint = "; a --url run names its target after the service's host:port (" + strings.Join(targets(old), ", ") + " against " + strings.Join(targets(new), ", ") +
				"): give both runs the same --name, or measure both sides in one paired run (--baseline-url)"
		}
		return usagef("%s and %s share no cell (scenario, target): nothing to compare%s", o.Old, o.New, hint)
	}
	if failures := res.Failures(); len(failures) > 0 {
		return exitcode.With(exitcode.Invalid, errors.New("the gate failed: "+strings.Join(failures, "; ")))
	}
	if undecided := res.Undecided(); len(undecided) > 0 {
		return exitcode.With(exitcode.Inconclusive, fmt.Errorf("inconclusive: %d gate verdict(s) could not be given (the UNDECIDED notes say which and why); a gate that cannot decide does not pass", len(undecided)))
	}
	return nil
}

// adHoc reports whether every row comes from a --url run.
func adHoc(rows []results.Row) bool {
	return !slices.ContainsFunc(rows, func(r results.Row) bool { return r.Scenario != "adhoc" })
}

// targets are the rows' distinct target names.
func targets(rows []results.Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Target) {
			out = append(out, r.Target)
		}
	}
	return out
}

// comparePaired judges one paired run's file.
func comparePaired(o *CompareOptions) error {
	if o.set != nil && o.set("noise") {
		return usagef("--noise belongs to comparing two files; a paired run's verdicts rest on equivalence tests against the --fail-on limits")
	}
	rows, err := readResults(o.Streams, o.Old)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return usagef("%s has no rows: nothing to compare", o.Old)
	}
	if !compare.IsPaired(rows) {
		return usagef("%s is a run of one side (no variant column): compare it with another, iotbench compare OLD.csv %s, or measure both sides in one paired run (run --baseline DIR or --baseline-url)", o.Old, o.Old)
	}
	gates, err := parseGates(o.FailOn, compare.HasSearches(rows))
	if err != nil {
		return err
	}
	res := compare.AnalyzePaired(o.Old, rows, compare.PairedOptions{Alpha: o.Alpha, Gates: gates, AllowMismatch: o.AllowMismatch})
	return writeVerdicts(o.Streams, res, o.Format, &run.Gate{Gates: gates, Alpha: o.Alpha, AllowInconclusive: o.AllowInconclusive})
}

// writeVerdicts prints a paired run's verdicts and returns the gate's outcome.
func writeVerdicts(s Streams, res compare.PairedResult, format string, g *run.Gate) error {
	if err := compare.WritePaired(s.Out, res, format); err != nil {
		return err
	}
	if format == "csv" {
		for _, n := range res.Notes() {
			fmt.Fprintln(s.ErrOut, n)
		}
	}
	err := g.Verdict(res)
	if undecided := res.Undecided(); err == nil && len(undecided) > 0 {
		fmt.Fprintf(s.ErrOut, "inconclusive, allowed (--allow-inconclusive): %d comparison(s) undecided\n", len(undecided))
	}
	return err
}

// readResults reads a results file; a last row cut off mid-way (a run killed during a write) is
// left out with a warning, and the rest compared.
func readResults(s Streams, path string) ([]results.Row, error) {
	rows, warnings, err := results.ReadFile(path)
	if err != nil {
		return nil, usageError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(s.ErrOut, "warning: %s\n", w)
	}
	return rows, nil
}

func fingerprintFieldNames() []string {
	var names []string
	for _, f := range (results.Row{}).FingerprintFields() {
		names = append(names, f.Name)
	}
	return names
}

// writeProfileChanges shows how the CPU profiles both runs took moved (run --profile); nothing
// when either took none. A profile that cannot be read is said, and the comparison stands.
func writeProfileChanges(s Streams, oldPath, newPath string) error {
	old, err := profile.Read(timeline.Dir(oldPath))
	if err != nil {
		fmt.Fprintf(s.ErrOut, "warning: %s: its profiles are not compared: %v\n", oldPath, err)
		return nil
	}
	new, err := profile.Read(timeline.Dir(newPath))
	if err != nil {
		fmt.Fprintf(s.ErrOut, "warning: %s: its profiles are not compared: %v\n", newPath, err)
		return nil
	}
	return compare.WriteProfileChanges(s.Out, compare.ProfileChanges(old, new))
}
