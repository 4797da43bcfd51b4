//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/plan"
)

// faultMatrix writes a scenario file whose targets fail on purpose (testdata/faultsrv): one
// exits mid-cell, one is OOM-killed under its 64 MiB limit, one is healthy, one does not build.
func faultMatrix(t *testing.T, trials int, targets ...string) string {
	t.Helper()
	dir := t.TempDir()
	fault := filepath.Join(dir, "faultsrv")
	os.MkdirAll(fault, 0o755)
	build := exec.Command("go", "build", "-o", filepath.Join(fault, "faultsrv"), "./testdata/faultsrv")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(fault, "Dockerfile"), []byte("FROM debian:trixie\nCOPY faultsrv /faultsrv\nUSER 65534\nCMD [\"/faultsrv\"]\n"), 0o644)
	broken := filepath.Join(dir, "brokensrv")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "Dockerfile"), []byte("FROM debian:trixie\nRUN echo 'no such artifact' && false\n"), 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	yaml := fmt.Sprintf(`default_scenario: faults
defaults: {warmup: 1s, duration: 4s, trials: %d, memory: 64m}
targets:
  exits: {build: faultsrv, port: %d, env: {EXIT_AFTER: "250"}}
  oom: {build: faultsrv, port: %d, env: {LEAK_KB: "256"}}
  good: {build: faultsrv, port: %d}
  broken: {build: brokensrv, port: %d}
scenarios:
  faults:
    request: {method: GET, path: /work}
    check: {contains: ['"id"']}
    load: {rate: 100, expected_latency: 10ms}
    targets: [%s]
`, trials, freePort(t), freePort(t), freePort(t), freePort(t), strings.Join(targets, ", "))
	os.WriteFile(file, []byte(yaml), 0o644)
	return file
}

// freePort is a port free on loopback whose signals port (plan.SignalsPortOffset above it) exists
// and is free too: a target given it serves both. Both lie below the kernel's ephemeral range: a
// port from that range, free when the scenario is written, can be the local end of one of the
// run's own outbound connections by the time the target starts (CI drew the signals port 45636
// once, and the target could not bind it); the range's top, 60999, would also put a signals port
// past 65535.
func freePort(t *testing.T) int {
	t.Helper()
	free := func(port int) bool {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	below := ephemeralLow(t) - plan.SignalsPortOffset
	if below <= 2048 {
		t.Fatalf("the ephemeral ports start at %d: no room below them for a port and its signals port %d above", below+plan.SignalsPortOffset, plan.SignalsPortOffset)
	}
	for range 1000 {
		port := 1024 + rand.IntN(below-1024)
		if free(port) && free(port+plan.SignalsPortOffset) {
			return port
		}
	}
	t.Fatal("no free port with a free signals port on loopback")
	return 0
}

// ephemeralLow is the first port the kernel hands out to outbound connections.
func ephemeralLow(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatalf("the kernel's ephemeral port range: %v", err)
	}
	f := strings.Fields(string(data))
	if len(f) == 2 {
		if low, err := strconv.Atoi(f[0]); err == nil {
			return low
		}
	}
	t.Fatalf("the kernel's ephemeral port range %q: want two numbers", data)
	return 0
}

func TestFailuresAreExplainedAndTheMatrixGoesOn(t *testing.T) {
	file := faultMatrix(t, 1, "exits", "oom", "good", "broken")
	out := t.TempDir()
	code, table, log := iotbench(t, context.Background(), "run", "--file", file, "--out", out)
	t.Log(log)
	t.Log(table)
	if code != 1 {
		t.Errorf("exit status %d, want 1 (cells invalid)", code)
	}
	rows := readRows(t, out)
	if len(rows) != 4 {
		t.Fatalf("%d rows, want one per target", len(rows))
	}
	want := map[string]string{
		"exits":  "target exited with code 3 ",
		"oom":    "target OOM-killed at its 64 MiB limit ",
		"broken": string(fault.BuildFailed) + ": ",
	}
	for _, r := range rows {
		switch w, failing := want[r.Target]; {
		case failing && (r.Valid || !strings.HasPrefix(r.InvalidReason, w)):
			t.Errorf("%s: valid=%v reason %q, want it to start with %q", r.Target, r.Valid, r.InvalidReason, w)
		// Measured, and not blamed for a failure: on a busy machine the generator may still judge
		// its own cell late, which is the chain working.
		case r.Target == "good" && (r.Successes == 0 || strings.HasPrefix(r.InvalidReason, "target") || strings.HasPrefix(r.InvalidReason, "a process")):
			t.Errorf("good: the next cell was not measured: valid=%v %q", r.Valid, r.InvalidReason)
		}
		if r.Target == "exits" || r.Target == "oom" {
			if !strings.Contains(r.InvalidReason, "into the measured phase") {
				t.Errorf("%s: %q does not say when", r.Target, r.InvalidReason)
			}
		}
		// The exiting target's last words are kept beside the results; the one killed for memory
		// printed nothing, so no log is kept or named for it.
		switch r.Target {
		case "exits":
			data, err := os.ReadFile(filepath.Join(out, r.LogFile))
			if r.LogFile == "" || err != nil || !strings.Contains(string(data), "exiting after 250") {
				t.Errorf("%s: log_file %q holds %q, %v: want the target's last words", r.Target, r.LogFile, data, err)
			}
		case "oom":
			if r.LogFile != "" {
				t.Errorf("%s: log_file %q for a target that printed nothing", r.Target, r.LogFile)
			}
		}
		if r.Target == "broken" && (r.Loaded() || r.Requests != 0 || !strings.Contains(r.InvalidReason, "no such artifact")) {
			t.Errorf("broken: %+v", r)
		}
	}
	if left := leftovers(t); left != "" {
		t.Errorf("containers left behind: %s", left)
	}
}

// TestKilledRunIsCleanedUpAndResumed kills iotbench with SIGKILL while a container runs: the
// next run removes the leftover, naming it, and --resume finishes the matrix, each cell once.
func TestKilledRunIsCleanedUpAndResumed(t *testing.T) {
	file := faultMatrix(t, 3, "good")
	out := t.TempDir()
	cmd := exec.Command(binary(t), "run", "--file", file, "--out", out, "--duration", "3s")
	cmd.Dir = ".."
	var log bytes.Buffer
	cmd.Stderr = &log
	start(t, cmd)
	// Kill it during the second cell, once the first is recorded and the second's container is up
	// (a disturbed first cell, measured again, is healthy more than once before the second starts).
	secondHealthy := func() bool {
		_, second, ok := strings.Cut(log.String(), "[2/3]")
		return ok && strings.Contains(second, "healthy in")
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !secondHealthy() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the second cell never started:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left := leftovers(t)
	if left == "" {
		t.Fatal("no container left by the killed run: nothing to clean up")
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(files) != 1 {
		t.Fatalf("%d results files", len(files))
	}
	code, table, relog := iotbench(t, context.Background(), "run", "--file", file, "--duration", "3s", "--resume", files[0])
	t.Log(relog)
	t.Log(table)
	for _, name := range strings.Fields(left) {
		if !strings.Contains(relog, name) {
			t.Errorf("the leftover container %s was not named when removed", name)
		}
	}
	rows := readRows(t, out)
	seen := map[int]int{}
	for _, r := range rows {
		seen[r.Trial]++
		if r.Seed != rows[0].Seed {
			t.Errorf("trial %d ordered by seed %d, the first by %d", r.Trial, r.Seed, rows[0].Seed)
		}
	}
	if len(rows) != 3 || seen[1] != 1 || seen[2] != 1 || seen[3] != 1 {
		t.Errorf("trials recorded %v, want 1, 2 and 3 once each", seen)
	}
	if code != 0 && code != 1 {
		t.Errorf("resumed run: exit status %d", code)
	}
	if left := leftovers(t); left != "" {
		t.Errorf("containers left behind: %s", left)
	}
}
