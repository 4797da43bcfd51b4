package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/summary"
	"github.com/spf13/pflag"
)

// rankedTrials are the searches a target a find-max run needs to rank its targets: one more than
// summary.MinTrialsToRank, so that a search left out by the self-checks still leaves enough.
const rankedTrials = summary.MinTrialsToRank + 1

// rankedRun is what a find-max run too short to rank answers with last: the command of the same
// run with rankedTrials searches a target and the latency at percentages of each maximum (as
// --latency-at gave them, else results.LegacyLatencyAt), and about how long its searches take,
// from how long this run's took. Empty when the run searched that often, or searched nothing.
func (o *RunOptions) rankedRun(out *run.Outcome) string {
	if out.FindMax == nil || len(out.Found) == 0 || o.flags == nil {
		return ""
	}
	trials, targets := 0, map[string]bool{}
	var took time.Duration
	for _, f := range out.Found {
		trials = max(trials, f.Search)
		targets[f.Target] = true
		took += f.Took
	}
	if trials == 0 || trials >= rankedTrials {
		return ""
	}
	at := out.FindMax.Search.LatencyAt
	if len(at) == 0 {
		at, _ = maxrate.ParseLatencyAt(results.LegacyLatencyAt)
	}
	// The searches again, rankedTrials/trials times over, and the steps at percentages of the
	// maximum this run did not take (each held for its step and the step's warm-up). An even
	// search starts from its odd one's boundary and takes fewer steps: the estimate is high.
	estimate := took * rankedTrials / time.Duration(trials)
	if extra := len(at) - len(out.FindMax.Search.LatencyAt); extra > 0 {
		estimate += time.Duration(rankedTrials*len(targets)*extra) * (out.FindMax.Step + out.FindMax.StepWarmup)
	}
	return fmt.Sprintf("A ranking needs %d searches a target; with the latency at %s of each maximum, its searches take about %d minutes (this run's %s, %d times over, with those steps): %s",
		rankedTrials, at, int(estimate.Round(time.Minute).Minutes()), took.Round(time.Second), rankedTrials/trials, o.commandWith(rankedTrials, at.String()))
}

// commandWith is the command that started this run, with --trials and --latency-at as given and
// without --resume and --seed (a new run, in an order of its own).
func (o *RunOptions) commandWith(trials int, latencyAt string) string {
	args := []string{o.commandPath}
	o.flags.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "trials", "latency-at", "resume", "seed":
			return
		}
		args = append(args, flagArgs(f)...)
	})
	return strings.Join(append(args, "--trials", strconv.Itoa(trials), "--latency-at", latencyAt), " ")
}

// flagArgs is a flag as given, for a shell: a list's values joined as it reads them, a repeated
// flag repeated, a flag alone when its value is the one it takes alone (--html, --find-max).
func flagArgs(f *pflag.Flag) []string {
	name := "--" + f.Name
	if f.NoOptDefVal != "" { // its value, if any, after = (--calibration=false)
		if f.Value.String() == f.NoOptDefVal {
			return []string{name}
		}
		return []string{name + "=" + shellWord(f.Value.String())}
	}
	if list, ok := f.Value.(pflag.SliceValue); ok {
		values := list.GetSlice()
		if f.Value.Type() != "stringArray" {
			return []string{name, shellWord(strings.Join(values, ","))}
		}
		var out []string
		for _, v := range values {
			out = append(out, name, shellWord(v))
		}
		return out
	}
	return []string{name, shellWord(f.Value.String())}
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_%+,./:=@-]+$`)

// shellWord is s as one word of a POSIX shell: as it is when nothing in it is special, else in
// single quotes.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
