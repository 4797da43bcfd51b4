package downstream

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/latency"
)

// helperEnv makes this test binary the downstream helper (TestMain), as `iotbench downstream` is.
const helperEnv = "IOTBENCH_TEST_DOWNSTREAM_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		fs := flag.NewFlagSet("downstream", flag.ExitOnError)
		cpus := fs.String("cpus", "", "")
		fs.Parse(os.Args[2:])
		list, err := cpuset.Parse(*cpus, cpuset.MaxCPUs)
		if *cpus == "" {
			list, err = nil, nil
		}
		if err == nil {
			err = Serve(list, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The helper serves the contract's answer from a process of its own, pinned to the CPUs given
// at the lowest priority (every thread, so that none of its work comes before the generator's),
// tallies its calls, its own CPU and its overruns (those since the tally before), and ends when
// its parent is done with it.
func TestHelperServesTalliesAndYields(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(helperEnv, "1")
	h, err := StartHelper(exe, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 3
	for range calls {
		began := time.Now()
		resp, err := http.Get(h.URL())
		if err != nil {
			h.Close()
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if took := time.Since(began); string(body) != `{"ok":true}` || took < Delay {
			t.Errorf("answered %q after %v, want {\"ok\":true} after %v or more", body, took, Delay)
		}
	}
	pid := h.cmd.Process.Pid
	threads, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(threads) == 0 {
		t.Fatalf("the helper's threads: %v", err)
	}
	for _, stat := range threads {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // a thread ended since
		}
		// The fields after the command's closing parenthesis: state is the first, nice the 17th.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if nice, _ := strconv.Atoi(fields[16]); nice != 19 {
			t.Errorf("%s: nice %d, want 19", stat, nice)
		}
		status, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "status"))
		if !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
			t.Errorf("%s: not pinned to CPU 0:\n%s", filepath.Dir(stat), status)
		}
	}
	first, err := h.Tally()
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	if first.Calls != calls || first.CPU <= 0 || first.Late.Count != calls || first.Late.P99 < 0 {
		t.Errorf("tally after %d calls: %+v; want them counted with the helper's CPU and %d overruns", calls, first, calls)
	}
	second, err := h.Tally()
	if err != nil || second.Calls != calls || second.Late.Count != 0 || second.CPU < first.CPU {
		t.Errorf("a second tally with no call between: %+v, %v; want the calls kept, no overrun since the first", second, err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := http.Get(h.URL()); err == nil {
		t.Error("the helper still serves after Close")
	}
}

// A helper that cannot start, or a binary that is not iotbench's, says why.
func TestHelperThatCannotStart(t *testing.T) {
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip(err)
	}
	for exe, want := range map[string]string{
		filepath.Join(t.TempDir(), "missing"): "starting the downstream helper",
		echo:                                  "is not iotbench's downstream helper: it said \"downstream --cpus 0\"",
	} {
		if _, err := StartHelper(exe, []int{0}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", exe, err, want)
		}
	}
}

func TestTallyLineRoundTrips(t *testing.T) {
	want := Tally{Calls: 12, CPU: 345 * time.Millisecond, Late: latency.Summary{Count: 12, P50: 3 * time.Microsecond, P99: 4 * time.Millisecond, Max: 5 * time.Millisecond}}
	if got, err := parseTally(tallyLine(want)); err != nil || got != want {
		t.Errorf("%q read back as %+v, %v", tallyLine(want), got, err)
	}
	for _, bad := range []string{"", "12 345", "a b c d e f"} {
		if _, err := parseTally(bad); err == nil || !strings.Contains(err.Error(), "the downstream helper's tally") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
