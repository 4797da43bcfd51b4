package cli

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/spf13/cobra"
)

// A find-max run too short to rank ends with the command of the run that ranks: the same flags,
// a list as it was given, an SLO quoted for the shell, --seed and --resume left out, --trials 6 and
// the latency at 50/75/90% (or the percentages given); and about how long its searches take.
func TestRankedRunIsTheSameRunSearchedEnough(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		found []maxrate.Outcome
		want  string
	}{
		{"make run's", []string{"--html", "--scenario", "io-heavy", "--targets", "a,b", "--find-max", "--trials", "1", "--step", "4s", "--warmup", "auto",
			"--resolution", "20%", "--slo", "p99<100ms,errors<0.1%", "--seed", "7", "--header", "X-A:it's", "--calibration=false"},
			[]maxrate.Outcome{{Target: "a", Search: 1, Took: 150 * time.Second}, {Target: "b", Search: 1, Took: 90 * time.Second}},
			// 6 × 4 min of searches, and 6 searches × 2 targets × 3 steps of 4 s + 2 s: 27.6 min.
			"A ranking needs 6 searches a target; with the latency at 50%,75%,90% of each maximum, its searches take about 28 minutes (this run's 4m0s, 6 times over, with those steps): " +
				`iotbench run --calibration=false --find-max --header 'X-A:it'\''s' --html --resolution 20% --scenario io-heavy --slo 'p99<100ms,errors<0.1%' --step 4s --targets a,b --warmup auto --trials 6 --latency-at 50%,75%,90%`},
		{"two searches with the latency asked for", []string{"--scenario", "io-heavy", "--find-max", "--trials", "2", "--latency-at", "60%"},
			[]maxrate.Outcome{{Target: "a", Search: 1, Took: time.Minute}, {Target: "a", Search: 2, Took: time.Minute}},
			"A ranking needs 6 searches a target; with the latency at 60% of each maximum, its searches take about 6 minutes (this run's 2m0s, 3 times over, with those steps): " +
				"iotbench run --find-max --scenario io-heavy --trials 6 --latency-at 60%"},
		{"enough searches", []string{"--scenario", "io-heavy", "--find-max", "--trials", "6"},
			[]maxrate.Outcome{{Target: "a", Search: 6}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, _ := streams()
			var o *RunOptions
			root := &cobra.Command{Use: "iotbench"}
			root.AddCommand(NewCmdRun(s, func(_ context.Context, got *RunOptions) error { o = got; return nil }))
			root.SetArgs(append([]string{"run"}, c.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			m, err := o.findMax()
			if err != nil {
				t.Fatal(err)
			}
			if got := o.rankedRun(&run.Outcome{FindMax: m, Found: c.found}); got != c.want {
				t.Errorf("ranked run\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// The ranked run's command starts as this one was started: bin/iotbench run from make, else
// iotbench run.
func TestInvokedAs(t *testing.T) {
	defer func(args []string) { os.Args = args }(os.Args)
	for prog, want := range map[string]string{"bin/iotbench": "bin/iotbench run", "iotbench": "iotbench run", "/tmp/go-build1/cli.test": "iotbench run", "/opt/my tools/iotbench": "'/opt/my tools/iotbench' run"} {
		os.Args = []string{prog}
		root := &cobra.Command{Use: "iotbench"}
		run := &cobra.Command{Use: "run"}
		root.AddCommand(run)
		if got := invokedAs(run); got != want {
			t.Errorf("started as %q: %q, want %q", prog, got, want)
		}
	}
}
