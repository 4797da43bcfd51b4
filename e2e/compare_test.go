//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// stub starts tools/stubserver with a fixed service time on addr and returns its stop.
func stub(t *testing.T, bin, addr string, delay time.Duration) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", addr, "-delay", delay.String())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("stubserver never listened on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// measure runs 6 closed-loop trials against the stub and returns the results file. A trial the
// engine judged delayed by its own generator (a hiccup of a shared machine) is the chain working;
// compare then reads the valid trials, of which it needs at least 4 a side to call a change
// significant.
func measure(t *testing.T, addr string) string {
	t.Helper()
	out := t.TempDir()
	// No calibration: on a host whose hypervisor takes CPU it can miss its limits, and compare then
	// rightly gives no verdict (internal/compare's tests); this test is about the verdicts.
	code, table, log := iotbench(t, context.Background(), "run", "--url", "http://"+addr+"/ingest",
		"--connections", "20", "--trials", "6", "--warmup", "1s", "--duration", "3s", "--contains", "processingMs",
		"--calibration=false", "--out", out)
	if code != 0 {
		valid := 0
		for _, r := range readRows(t, out) {
			switch {
			case r.Valid:
				valid++
			case !generatorLate(r):
				valid = -10
			}
		}
		if valid < 4 {
			t.Fatalf("run exit %d\n%s\n%s", code, log, table)
		}
		t.Logf("a trial delayed by the generator (a noisy machine, not a failure of the chain):\n%s", table)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(files) != 1 {
		t.Fatalf("%d results files in %s", len(files), out)
	}
	return files[0]
}

type comparison struct {
	Cells []struct {
		Changes []struct {
			Metric      string   `json:"metric"`
			ChangePct   *float64 `json:"change_pct"`
			P           float64  `json:"p"`
			Significant bool     `json:"significant"`
			WithinNoise bool     `json:"within_noise"`
			GateFailed  string   `json:"gate_failed"`
		} `json:"changes"`
	} `json:"cells"`
	Failed []string `json:"failed"`
}

func compareJSON(t *testing.T, args ...string) (int, comparison) {
	t.Helper()
	code, out, log := iotbench(t, context.Background(), append([]string{"compare", "--format", "json"}, args...)...)
	var c comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil || len(c.Cells) != 1 {
		t.Fatalf("compare %v: exit %d, %v\n%s\n%s", args, code, err, out, log)
	}
	return code, c
}

// TestCompareTellsNoiseFromARegression is issue 5's acceptance: two runs of the same server
// compare as "~" everywhere (not significant, or under the default 3% noise threshold: a p99
// drifting 1–2% between back-to-back runs reaches p < 0.05 in about half of such pairs) and pass
// the gate; a service time moved from 200 to 300 ms is a significant regression of p50 and
// throughput, and fails the gate at 5%. The generator may delay a request by a tenth of its
// latency: 200 ms allows 20 ms, five times what a host whose hypervisor takes CPU was seen to add
// (1–4 ms); 20 ms allowed 2 ms, and half such a host's trials were invalid.
func TestCompareTellsNoiseFromARegression(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stubserver")
	build := exec.Command("go", "build", "-o", bin, "./tools/stubserver")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stub server: %v\n%s", err, out)
	}
	const gate = "throughput:-5%,p50:+5%"

	// An ad-hoc run's target is its host:port: both servers listen on the same one.
	addr := freeAddr(t)
	stop := stub(t, bin, addr, 200*time.Millisecond)
	base, again := measure(t, addr), measure(t, addr)
	stop()
	stub(t, bin, addr, 300*time.Millisecond)
	slower := measure(t, addr)

	code, same := compareJSON(t, "--fail-on", gate, base, again)
	for _, ch := range same.Cells[0].Changes {
		pct := 0.0
		if ch.ChangePct != nil {
			pct = *ch.ChangePct
		}
		if ch.Significant {
			t.Errorf("same server: %s changed significantly by %+.2f%% (p=%.3f)", ch.Metric, pct, ch.P)
		}
		t.Logf("same server: %s %+.2f%% p=%.3f within noise %v", ch.Metric, pct, ch.P, ch.WithinNoise)
	}
	if code != 0 || len(same.Failed) != 0 {
		t.Errorf("same server: exit %d, failed %v; want 0 and none", code, same.Failed)
	}

	code, reg := compareJSON(t, "--fail-on", gate, base, slower)
	want := map[string]string{"throughput": "throughput:-5%", "p50": "p50:+5%"}
	for _, ch := range reg.Cells[0].Changes {
		gate, gated := want[ch.Metric]
		if !gated {
			continue
		}
		delete(want, ch.Metric)
		if !ch.Significant || ch.GateFailed != gate || ch.ChangePct == nil {
			t.Errorf("200 → 300 ms: %s significant=%v (p=%.3f) gate %q; want significant and failing %s", ch.Metric, ch.Significant, ch.P, ch.GateFailed, gate)
			continue
		}
		t.Logf("200 → 300 ms: %s %+.1f%% (p=%.4f)", ch.Metric, *ch.ChangePct, ch.P)
	}
	if len(want) > 0 {
		t.Errorf("metrics missing from the comparison: %v", want)
	}
	if code != 1 || len(reg.Failed) != 2 {
		t.Errorf("200 → 300 ms: exit %d, failed %v; want 1 and two failures", code, reg.Failed)
	}
	if t.Failed() {
		for _, f := range []string{base, again, slower} {
			data, _ := os.ReadFile(f)
			fmt.Printf("%s:\n%s\n", f, data)
		}
	}
}
