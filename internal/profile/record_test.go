package profile

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// needPerf skips without perf, unless the run requires what make test installs.
func needPerf(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		if os.Getenv("IOTBENCH_REQUIRE_DOCKER") != "" {
			t.Fatal("perf is not installed and make test requires it: run scripts/ensure-perf.sh")
		}
		t.Skip(ErrNoPerf)
	}
}

// TestARecordingSamplesTheProcessGiven: a busy shell, sampled for a second, is in the stacks, and
// nothing of this test's own process is.
func TestARecordingSamplesTheProcessGiven(t *testing.T) {
	needPerf(t)
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer busy.Wait()
	defer busy.Process.Kill()
	rec, err := Start([]int{busy.Process.Pid}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cost, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if cost.Wall < time.Second || cost.CPU <= 0 || cost.Cores() <= 0 {
		t.Errorf("cost %+v: perf's own time not measured", cost)
	}
	p, err := rec.Stacks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 499 a second of a process that had some of a core: far more than 10, whatever the load.
	if p.Total < 10 {
		t.Fatalf("%d samples of a busy process over a second", p.Total)
	}
	for stack := range p.Stacks {
		if strings.Contains(stack, "profile.test") || strings.Contains(stack, "runtime.") {
			t.Errorf("a stack of the test's own process was sampled: %s", stack)
		}
	}
}

func TestStartWithoutPerfSaysHowToGetIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Start([]int{1}, t.TempDir()); !errors.Is(err, ErrNoPerf) || !strings.Contains(err.Error(), "linux-perf") {
		t.Errorf("Start without perf: %v", err)
	}
}
