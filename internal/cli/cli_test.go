package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

func streams() (Streams, *strings.Builder, *strings.Builder) {
	var out, errOut strings.Builder
	return Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

func TestRunFlagsFillOptions(t *testing.T) {
	s, _, _ := streams()
	var got *RunOptions
	cmd := NewCmdRun(s, func(_ context.Context, o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--scenario", "io-heavy", "--targets", "a,b", "--duration", "30s", "--rate", "2000", "--cpus", "2-3", "--memory", "2g", "--header", "A:1", "--header", "B:2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Scenario != "io-heavy" || strings.Join(got.Targets, ",") != "a,b" || got.Load.Duration != 30*time.Second || got.Load.Rate != 2000 ||
		got.CPUs != "2-3" || got.Memory != "2g" || len(got.Headers) != 2 || got.File != "scenarios.yaml" || got.Out != "results" {
		t.Errorf("options %+v", got)
	}
	if !got.set("duration") || got.set("warmup") {
		t.Error("set() does not tell given flags from defaults")
	}
}

func TestExitCodes(t *testing.T) {
	var n atomic.Int64
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, `{"id":1}`)
	}))
	defer healthy.Close()
	// A slow service: the generator's own delay is allowed a share of its latency (10% of 200 ms),
	// a margin that a busy CI machine under -race (7.7 ms seen at 50 ms) stays well inside.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(200 * time.Millisecond)
		io.WriteString(w, `{"id":1}`)
	}))
	defer slow.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1)%10 < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"id":1}`)
	}))
	defer failing.Close()
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	os.WriteFile(broken, []byte("targets: {}\nscenarios: {}\nsurprise: 1\n"), 0o644)

	cases := []struct {
		name     string
		args     []string
		want     int
		wantErr  string
		wantRows int
	}{
		// Closed loop: its validity does not hang on this machine's scheduling, as an open loop's lag does.
		// The runs that load warm up 1 s, not a --url run's default 10 s: exit codes are the subject.
		{"valid ad-hoc run", []string{"run", "--url", slow.URL + "/x", "--connections", "4", "--duration", "2s", "--warmup", "1s", "--expected-latency", "250ms", "--contains", `"id"`, "--calibration=false"}, ExitOK, "", 1},
		{"30% failing service", []string{"run", "--url", failing.URL + "/x", "--rate", "100", "--duration", "1s", "--warmup", "1s", "--calibration=false"}, ExitInvalid, "", 1},
		// Two rounds decide nothing: the run completes, its verdict inconclusive.
		{"paired, two rounds", []string{"run", "--url", healthy.URL + "/x", "--baseline-url", healthy.URL + "/x", "--connections", "4", "--duration", "1s", "--warmup", "1s", "--trials", "2", "--contains", `"id"`, "--fail-on", "p50:+50%", "--calibration=false"}, ExitInconclusive, "inconclusive: 1 comparison(s) undecided", 4},
		{"paired, two rounds allowed", []string{"run", "--url", healthy.URL + "/x", "--baseline-url", healthy.URL + "/x", "--connections", "4", "--duration", "1s", "--warmup", "1s", "--trials", "2", "--contains", `"id"`, "--fail-on", "p50:+50%", "--allow-inconclusive", "--calibration=false"}, ExitOK, "inconclusive, allowed", 4},
		{"remote URL", []string{"run", "--url", "http://192.0.2.1/x", "--rate", "10"}, ExitUsage, "loopback only", 0},
		{"no load model", []string{"run", "--url", healthy.URL}, ExitUsage, "needs --rate", 0},
		{"scenario flag with --url", []string{"run", "--url", healthy.URL, "--rate", "1", "--targets", "x"}, ExitUsage, "--targets belongs to scenario runs", 0},
		{"unknown flag", []string{"run", "--rat", "5"}, ExitUsage, "unknown flag", 0},
		{"a reference server on no CPU list", []string{"reference", "--cpus", "x"}, ExitUsage, "--cpus x: ", 0},
		{"a downstream service on no CPU list", []string{"downstream", "--cpus", "0-"}, ExitUsage, "--cpus 0-: ", 0},
		{"an argument to run", []string{"run", "--url", healthy.URL, "--rate", "1", "5"}, ExitUsage, `takes no arguments; got "5"`, 0},
		{"--max-trials beyond reason", []string{"run", "--url", healthy.URL, "--baseline-url", healthy.URL, "--rate", "1", "--until", "p50:±3%", "--max-trials", "100000"}, ExitUsage, "--max-trials 100000", 0},
		{"--aa without a baseline", []string{"run", "--url", healthy.URL, "--rate", "1", "--aa", "2"}, ExitUsage, "--aa belongs to a paired run", 0},
		{"--baseline-url without --url", []string{"run", "--baseline-url", healthy.URL, "--rate", "1"}, ExitUsage, "--baseline-url pairs with --url", 0},
		{"--until an ungated metric", []string{"run", "--url", healthy.URL, "--baseline-url", healthy.URL, "--rate", "1", "--fail-on", "p50:+5%", "--until", "p99:±3%"}, ExitUsage, "--until p99:±3%: p99 is not a gated metric", 0},
		{"--until without a width", []string{"run", "--url", healthy.URL, "--baseline-url", healthy.URL, "--rate", "1", "--until", "p99"}, ExitUsage, `--until "p99": write metric:±percent`, 0},
		{"--name on a scenario run", []string{"run", "--file", "../../scenarios.yaml", "--name", "x"}, ExitUsage, "--name names a --url run's target", 0},
		{"one file of one side", []string{"compare", "testdata/compare/base-20ms.csv"}, ExitUsage, "is a run of one side", 0},
		{"results that cannot be written", []string{"run", "--url", healthy.URL, "--rate", "1", "--duration", "1s", "--out", "/proc/iotbench"}, ExitCouldNotRun, "/proc/iotbench", 0},
		{"--slo without --find-max", []string{"run", "--url", healthy.URL, "--rate", "1", "--slo", "p99<1s"}, ExitUsage, "--slo belongs to --find-max", 0},
		{"an SLO iotbench cannot check", []string{"run", "--url", healthy.URL, "--rate", "1", "--find-max", "--slo", "p95<1s"}, ExitUsage, `--slo term "p95<1s"`, 0},
		{"a resolution that is no share of the rate", []string{"run", "--url", healthy.URL, "--rate", "1", "--find-max", "--resolution", "150%"}, ExitUsage, `--resolution 150%: give a percentage`, 0},
		{"a latency percentage that is no share of the maximum", []string{"run", "--url", healthy.URL, "--rate", "1", "--find-max", "--latency-at", "50%,0.9"}, ExitUsage, `--latency-at 50%,0.9: term "0.9": give percentages of the maximum above 0% and below 100%, e.g. 50%,75%,90%`, 0},
		{"--latency-at without --find-max", []string{"run", "--url", healthy.URL, "--rate", "1", "--latency-at", "50%"}, ExitUsage, "--latency-at belongs to --find-max", 0},
		{"--profile without --find-max", []string{"run", "--url", healthy.URL, "--rate", "1", "--profile"}, ExitUsage, "--profile belongs to --find-max", 0},
		{"--profile of a --url service", []string{"run", "--url", healthy.URL, "--rate", "1", "--find-max", "--profile"}, ExitUsage, "--profile samples a target iotbench started, in its container: a --url service is not one", 0},
		{"--find-max on a closed loop", []string{"run", "--url", healthy.URL, "--connections", "4", "--find-max"}, ExitUsage, "open-loop rate", 0},
		{"broken scenario file", []string{"run", "--file", broken}, ExitUsage, broken + ":3: unknown key \"surprise\"", 0},
		{"missing scenario file", []string{"list", "--file", "nope.yaml"}, ExitUsage, "nope.yaml", 0},
		{"compare a missing file", []string{"compare", "a.csv", "b.csv"}, ExitUsage, "a.csv", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, errOut := streams()
			out := t.TempDir()
			args := c.args
			if c.args[0] == "run" && c.wantRows > 0 {
				args = append(args, "--out", out)
			}
			if got := Main(context.Background(), args, s); got != c.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, c.want, errOut)
			}
			if !strings.Contains(errOut.String(), c.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, c.wantErr)
			}
			if c.wantRows > 0 {
				files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
				if len(files) != 1 {
					t.Fatalf("%d CSV files, want 1", len(files))
				}
				rows, _, err := results.ReadFile(files[0])
				if err != nil || len(rows) != c.wantRows {
					t.Errorf("%d rows (%v), want %d", len(rows), err, c.wantRows)
				}
			}
		})
	}
}

func TestListShowsScenariosAndTargets(t *testing.T) {
	s, out, _ := streams()
	if code := Main(context.Background(), []string{"list", "--file", "../../scenarios.yaml"}, s); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"* io-heavy", "POST", "/ingest", "spring-mvc-virtual", ":8083"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
}
