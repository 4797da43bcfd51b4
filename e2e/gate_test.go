//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 18's acceptance: a paired run (baseline and candidate in one sitting, round by round)
// against the stub server, through the real binary. Each round is two cells of 2 s: the tests
// together take about two minutes on a quiet machine. The generator judges its own delay
// against a tenth of the latency (docs/results.md): a 20 ms service allows it 2 ms, which a
// machine busy with other work, or whose hypervisor takes CPU, often exceeds (1–4 ms seen), so
// the services here take 100 ms or more (10 ms allowed).

var stubOnce struct {
	sync.Once
	bin string
	err error
	out []byte
}

// stubBinary builds tools/stubserver once for the tests that need it.
func stubBinary(t *testing.T) string {
	t.Helper()
	stubOnce.Do(func() {
		dir, err := filepath.Abs("../bin")
		if err != nil {
			stubOnce.err = err
			return
		}
		stubOnce.bin = filepath.Join(dir, "stubserver-e2e")
		build := exec.Command("go", "build", "-o", stubOnce.bin, "./tools/stubserver")
		build.Dir = ".."
		stubOnce.out, stubOnce.err = build.CombinedOutput()
	})
	if stubOnce.err != nil {
		t.Fatalf("building the stub server: %v\n%s", stubOnce.err, stubOnce.out)
	}
	return stubOnce.bin
}

type verdicts struct {
	Verdict string `json:"verdict"`
	Cells   []struct {
		AATrials int `json:"aa_trials"`
		Changes  []struct {
			Metric          string   `json:"metric"`
			Rounds          int      `json:"rounds"`
			ChangePct       *float64 `json:"change_pct"`
			LoPct           *float64 `json:"change_lo_pct"`
			HiPct           *float64 `json:"change_hi_pct"`
			PAdjusted       float64  `json:"p_adjusted"`
			Verdict         string   `json:"verdict"`
			SuggestedRounds int      `json:"suggested_rounds"`
			AARounds        int      `json:"aa_rounds"`
			AANoisePct      *float64 `json:"aa_noise_pct"`
		} `json:"changes"`
	} `json:"cells"`
	Undecided []string `json:"undecided"`
}

// pairedRun measures the service at candidate against the one at baseline in one paired run,
// open loop with about ten requests of the service time in flight, and returns its exit
// status, what it printed, and the results file.
func pairedRun(t *testing.T, candidate, baseline string, service time.Duration, args ...string) (int, string, string) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rate := fmt.Sprint(int(10 * time.Second / service))
	// No calibration: on a host whose hypervisor takes CPU it can miss its limits, and the gate then
	// rightly decides nothing (internal/compare's tests); these tests are about the verdicts.
	code, table, log := iotbench(t, ctx, append([]string{"run", "--url", "http://" + candidate + "/ingest", "--baseline-url", "http://" + baseline + "/ingest",
		"--name", "stub", "--rate", rate, "--expected-latency", service.String(), "--warmup", "500ms", "--duration", "2s", "--contains", "processingMs",
		"--calibration=false", "--out", out}, args...)...)
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(files) != 1 {
		t.Fatalf("exit %d, %d results files\n%s\n%s", code, len(files), log, table)
	}
	return code, table + "\n" + log, files[0]
}

// judge runs compare on a paired file and decodes its verdicts.
func judge(t *testing.T, file string, args ...string) (int, verdicts) {
	t.Helper()
	code, out, log := iotbench(t, context.Background(), append(append([]string{"compare", "--format", "json"}, args...), file)...)
	var v verdicts
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Cells) != 1 {
		t.Fatalf("compare %s: exit %d, %v\n%s\n%s", file, code, err, out, log)
	}
	return code, v
}

func pct(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// TestPairedSameServerIsEquivalent: the same server as baseline and candidate is equivalent
// within 5% on every gated metric, and the run exits 0. --until adds rounds (up to 20) while an
// interval is wider than asked: a shared machine that invalidates trials gets more of them. At
// 1,000 rps a cell's p99 rests on 2,000 answers, 20 above it: a stall of the host of 14 ms delays
// 14, where at 100 rps it delayed more than the 2 above a p99 of 200 (seen: p99 126 against
// 102 ms, and the gate's interval 10% wide after 20 rounds).
func TestPairedSameServerIsEquivalent(t *testing.T) {
	addr := freeAddr(t)
	stub(t, stubBinary(t), addr, 100*time.Millisecond)
	const gates = "throughput:-5%,p50:+5%,p99:+5%"
	code, log, file := pairedRun(t, addr, addr, 100*time.Millisecond, "--rate", "1000", "--trials", "8", "--fail-on", gates, "--until", "p50:±2%,p99:±3%", "--max-trials", "20")
	if code != 0 {
		t.Errorf("run exit %d, want 0\n%s", code, log)
	}
	code, v := judge(t, file, "--fail-on", gates)
	for _, ch := range v.Cells[0].Changes {
		t.Logf("same server: %s %+.2f%% [%+.2f, %+.2f] over %d rounds: %s", ch.Metric, pct(ch.ChangePct), pct(ch.LoPct), pct(ch.HiPct), ch.Rounds, ch.Verdict)
		if ch.Verdict != "equivalent" {
			t.Errorf("same server: %s is %s, want equivalent", ch.Metric, ch.Verdict)
		}
	}
	if code != 0 || v.Verdict != "equivalent" || len(v.Cells[0].Changes) != 3 {
		t.Errorf("compare: exit %d, verdict %s, %d metrics; want 0, equivalent, 3", code, v.Verdict, len(v.Cells[0].Changes))
	}
}

// TestPairedSlowerCandidateRegresses: 200 ms → 220 ms of service time is a p50 regressed past a 5%
// limit, exit 1, with the A/A control's noise floor reported beside it. Rounds are added (up to
// 20) while p50's interval is wider than ±3%, as on a busy machine where trials are invalid.
func TestPairedSlowerCandidateRegresses(t *testing.T) {
	base, cand := freeAddr(t), freeAddr(t)
	stub(t, stubBinary(t), base, 200*time.Millisecond)
	stub(t, stubBinary(t), cand, 220*time.Millisecond)
	const gates = "throughput:-5%,p50:+5%"
	code, log, file := pairedRun(t, cand, base, 200*time.Millisecond, "--trials", "8", "--aa", "2", "--fail-on", gates, "--until", "p50:±3%", "--max-trials", "20")
	if code != 1 || !strings.Contains(log, "regressed") {
		t.Errorf("run exit %d, want 1 and a regression\n%s", code, log)
	}
	code, v := judge(t, file, "--fail-on", gates)
	found := false
	for _, ch := range v.Cells[0].Changes {
		t.Logf("200 → 220 ms: %s %+.2f%% [%+.2f, %+.2f] p %.4f over %d rounds: %s (A/A noise ±%.2f%% over %d rounds)",
			ch.Metric, pct(ch.ChangePct), pct(ch.LoPct), pct(ch.HiPct), ch.PAdjusted, ch.Rounds, ch.Verdict, pct(ch.AANoisePct), ch.AARounds)
		if ch.Metric != "p50" {
			continue
		}
		found = true
		if ch.Rounds < 7 {
			// 20 rounds without 7 valid pairs: the generator judged most trials delayed (it is
			// allowed 20 ms at 200 ms), as on a machine saturated by other work.
			t.Fatalf("p50: %d valid rounds of up to 20, too few for any verdict: this machine was too busy for the generator (see the INVALID lines)\n%s", ch.Rounds, log)
		}
		if ch.Verdict != "regressed" || pct(ch.ChangePct) < 5 || pct(ch.ChangePct) > 15 {
			t.Errorf("p50 %+.2f%%: %s; want regressed by about +10%%", pct(ch.ChangePct), ch.Verdict)
		}
		if n := v.Cells[0].AATrials; n != 4 {
			t.Errorf("%d A/A trials, want 2 rounds of 2", n)
		}
	}
	if !found || code != 1 || v.Verdict != "regressed" {
		t.Errorf("compare: exit %d, verdict %s, p50 found %v; want 1, regressed", code, v.Verdict, found)
	}
}

// TestPairedSmallChangeIsInconclusive: +1.5% of service time over four rounds can be neither
// inside ±5% nor past it (four rounds cannot reach significance at all): inconclusive, exit 4,
// with more rounds suggested; --allow-inconclusive lets the gate pass.
func TestPairedSmallChangeIsInconclusive(t *testing.T) {
	base, cand := freeAddr(t), freeAddr(t)
	stub(t, stubBinary(t), base, 100*time.Millisecond)
	stub(t, stubBinary(t), cand, 101500*time.Microsecond)
	code, log, file := pairedRun(t, cand, base, 100*time.Millisecond, "--trials", "4", "--fail-on", "p50:+5%")
	if code != 4 || !strings.Contains(log, "inconclusive") || !strings.Contains(log, "rounds would likely settle it") {
		t.Errorf("run exit %d, want 4, inconclusive with the rounds to settle it\n%s", code, log)
	}
	code, v := judge(t, file, "--fail-on", "p50:+5%")
	if len(v.Cells[0].Changes) == 0 {
		t.Fatalf("no round with a valid baseline and candidate: this machine was too busy for the generator (see the INVALID lines)\n%s", log)
	}
	ch := v.Cells[0].Changes[0]
	t.Logf("+1.5%%: p50 %+.2f%% over %d rounds: %s, suggested %d rounds", pct(ch.ChangePct), ch.Rounds, ch.Verdict, ch.SuggestedRounds)
	if code != 4 || ch.Verdict != "inconclusive" || ch.SuggestedRounds <= ch.Rounds || len(v.Undecided) != 1 {
		t.Errorf("compare: exit %d, %s, suggested %d after %d rounds, undecided %v; want 4, inconclusive, more rounds", code, ch.Verdict, ch.SuggestedRounds, ch.Rounds, v.Undecided)
	}
	if code, _, log := iotbench(t, context.Background(), "compare", "--fail-on", "p50:+5%", "--allow-inconclusive", file); code != 0 {
		t.Errorf("--allow-inconclusive: exit %d, want 0\n%s", code, log)
	}
}

// TestPairedScenarioRunBuildsBothCheckouts: --baseline DIR builds the baseline checkout's
// targets beside the candidate's, tagged apart, and pairs their rows round by round; the images
// differ (that is the change under test) and compare says so instead of refusing.
func TestPairedScenarioRunBuildsBothCheckouts(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "faultsrv")
	build := exec.Command("go", "build", "-o", bin, "./testdata/faultsrv")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	for _, side := range []string{"base", "candidate"} {
		ctx := filepath.Join(root, side, "targets", "pairsrv")
		os.MkdirAll(ctx, 0o755)
		data, _ := os.ReadFile(bin)
		os.WriteFile(filepath.Join(ctx, "faultsrv"), data, 0o755)
		// The sides' images differ by a label, as a change to a target's sources would make them.
		os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte("FROM debian:trixie\nLABEL side="+side+"\nCOPY faultsrv /faultsrv\nUSER 65534\nCMD [\"/faultsrv\"]\n"), 0o644)
		os.WriteFile(filepath.Join(root, side, "scenarios.yaml"), []byte(fmt.Sprintf(`default_scenario: pair
defaults: {warmup: 500ms, duration: 2s, trials: 2, memory: 128m}
targets:
  pairsrv: {build: targets/pairsrv, port: %d}
scenarios:
  pair:
    request: {method: GET, path: /work}
    check: {contains: ['"id"']}
    load: {rate: 100, expected_latency: 10ms}
    targets: [pairsrv]
`, port)), 0o644)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "run", "--baseline", "../base", "--fail-on", "p50:+50%", "--out", out)
	cmd.Dir = filepath.Join(root, "candidate")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	log := stdout.String() + "\n" + stderr.String()
	// Two rounds can decide nothing: inconclusive, and the run says how many would.
	if code != 4 || !strings.Contains(log, "inconclusive") {
		t.Errorf("exit %d, want 4 (two rounds are inconclusive)\n%s", code, log)
	}
	ids := map[string]string{}
	for _, tag := range []string{"iotbench/pairsrv:base", "iotbench/pairsrv:latest"} {
		id, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", tag).Output()
		if err != nil {
			t.Fatalf("no image %s: %v\n%s", tag, err, log)
		}
		ids[tag] = strings.TrimSpace(string(id))
	}
	rows := readRows(t, out)
	sides := map[string]int{}
	for _, r := range rows {
		sides[r.Variant]++
		want := ids["iotbench/pairsrv:latest"]
		if r.Variant == "base" {
			want = ids["iotbench/pairsrv:base"]
		}
		if r.ImageID != want {
			t.Errorf("%s round %d ran image %s, want %s", r.Variant, r.Trial, r.ImageID, want)
		}
	}
	if sides["base"] != 2 || sides["candidate"] != 2 || ids["iotbench/pairsrv:base"] == ids["iotbench/pairsrv:latest"] {
		t.Errorf("rows by side %v, images %v: want 2 rounds of both sides, from two images", sides, ids)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	_, table, _ := iotbench(t, context.Background(), "compare", "--fail-on", "p50:+50%", files[0])
	if !strings.Contains(table, "the baseline's and the candidate's images differ") {
		t.Errorf("compare does not say the images differ:\n%s", table)
	}
}
